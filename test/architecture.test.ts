import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const sourceRoot = resolve(__dirname, "..", "src");

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

/** Each file of src/ (relative, e.g. `client/policies.ts`) with the files of src/ it imports. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(sourceRoot)) {
    const text = readFileSync(file, "utf8");
    const targets = [...text.matchAll(/^(?:import|export)[^;]*?from "(\.{1,2}\/[^"]+)"/gms)].map((match) => {
      const target = resolve(dirname(file), match[1] as string);
      const candidates = target.endsWith(".json") ? [target] : [`${target}.ts`, join(target, "index.ts")];
      const found = candidates.find((candidate) => graph.has(relative(sourceRoot, candidate)) || exists(candidate));
      if (!found) throw new Error(`${relative(sourceRoot, file)} imports ${match[1]}, which is no file of src/`);
      return relative(sourceRoot, found);
    });
    graph.set(relative(sourceRoot, file), targets);
  }
  return graph;
}

function exists(path: string): boolean {
  try {
    readFileSync(path);
    return true;
  } catch {
    return false;
  }
}

function cycles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, "visiting" | "done">();
  const stack: string[] = [];
  const visit = (file: string) => {
    if (state.get(file) === "done") return;
    if (state.get(file) === "visiting") {
      found.push([...stack.slice(stack.indexOf(file)), file]);
      return;
    }
    state.set(file, "visiting");
    stack.push(file);
    for (const target of graph.get(file) ?? []) visit(target);
    stack.pop();
    state.set(file, "done");
  };
  for (const file of graph.keys()) visit(file);
  return found;
}

describe("layers of src/", () => {
  const graph = importGraph();
  const importsFrom = (from: string, to: string) =>
    [...graph].flatMap(([file, targets]) =>
      file.startsWith(from)
        ? targets.filter((target) => target.startsWith(to)).map((target) => `${file} -> ${target}`)
        : [],
    );

  it("reads every file of src/", () => {
    expect(graph.size).toBeGreaterThan(30);
    expect(graph.get("client/policies.ts")).toContain("contract/policies.ts");
  });

  it("the contract stands on nothing of the client, the server or the resources", () => {
    expect(importsFrom("contract/", "client/")).toEqual([]);
    expect(importsFrom("contract/", "server/")).toEqual([]);
    expect(importsFrom("contract/", "resources/")).toEqual([]);
  });

  it("reading whom a stricter change would block stands on the client alone: no resource, command or server", () => {
    expect(graph.has("impact/verdict.ts")).toBe(true);
    for (const layer of ["resources/", "cli/", "server/", "read-functions/", "plugin/"]) {
      expect(importsFrom("impact/", layer)).toEqual([]);
    }
    // Its rules are pure: the answer and what counts take no client, the reads do.
    expect((graph.get("impact/verdict.ts") ?? []).filter((target) => !target.startsWith("contract/"))).toEqual(
      (graph.get("impact/verdict.ts") ?? []).filter(
        (target) => target === "client/runs.ts" || target === "impact/scope.ts",
      ),
    );
  });

  it("the server imports nothing from the client", () => {
    expect(importsFrom("server/", "client/")).toEqual([]);
  });

  it("the plugin for other languages is on top: nothing below imports it, and only its entry runs a command", () => {
    const below = [...graph.keys()].filter((file) => !file.startsWith("plugin/"));
    expect(below.flatMap((file) => (graph.get(file) ?? []).filter((target) => target.startsWith("plugin/")))).toEqual(
      [],
    );
    expect(importsFrom("plugin/", "cli/")).toEqual([]);
    // The executable serves the commands its messages name (pending-creates): its entry loads them on demand, the
    // provider never does.
    const requiresCommand = [...graph.keys()].filter(
      (file) =>
        file.startsWith("plugin/") && /require\("\.\.\/cli\//.test(readFileSync(join(sourceRoot, file), "utf8")),
    );
    expect(requiresCommand).toEqual(["plugin/main.ts"]);
    expect(importsFrom("plugin/", "importer/")).toEqual([]);
    expect(importsFrom("plugin/", "server/")).toEqual([]);
  });

  it("no import circle anywhere in src/", () => {
    expect(cycles(graph)).toEqual([]);
  });
});
