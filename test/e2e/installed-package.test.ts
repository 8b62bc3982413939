import { execFile, execFileSync } from "node:child_process";
import { cp, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LaunchedCli, launchCli } from "../server/cli-process";
import { PulumiProject } from "./pulumi-project";

const run = promisify(execFile);
const repoRoot = resolve(__dirname, "..", "..");

/**
 * The package as a team gets it: `npm pack` of the tracked tree (its own `prepare` builds dist/ from nothing), the
 * tarball installed into a TypeScript project outside the repository beside the newest `@pulumi/pulumi` 3.x from
 * the registry, then the server and `pulumi` run from that project alone.
 */
describe("the packed package in a project of its own", () => {
  let work: string;
  let tarball: string;
  let project: PulumiProject;
  let server: LaunchedCli | undefined;

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), "installed-package-"));
    tarball = await packTrackedTree(join(work, "tree"), work);
    project = await PulumiProject.create({
      name: "governance",
      nodeModules: "own",
      files: {
        "Pulumi.yaml": "name: governance\nruntime: nodejs\n",
        "package.json": JSON.stringify({ name: "governance", private: true }),
        "tsconfig.json": JSON.stringify({
          compilerOptions: { strict: true, module: "nodenext", moduleResolution: "nodenext", target: "es2022" },
          files: ["index.ts"],
        }),
        "index.ts": program,
      },
      config: { "tfe:organization": "acme" },
    });
    const spec = `file:${relative(project.dir, tarball)}`;
    await run("npm", ["install", "--no-audit", "--no-fund", spec, "@pulumi/pulumi@3", "typescript", "@types/node"], {
      cwd: project.dir,
    });
  }, 300_000);

  afterAll(async () => {
    server?.child.kill();
    await project?.dispose();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it("ships dist with both bins and type declarations, and no source maps into files it does not ship", async () => {
    const listing = execFileSync("tar", ["-tzf", tarball], { encoding: "utf8" }).split("\n");
    expect(listing).toEqual(
      expect.arrayContaining([
        "package/dist/index.js",
        "package/dist/index.d.ts",
        "package/dist/cli/tfe-governance.js",
        "package/dist/server/cli.js",
        "package/dist/resources/providers.js",
        "package/examples/quickstart/seed.json",
      ]),
    );
    expect(listing.filter((path) => /\.map$|^package\/(src|test|bench|scripts)\//.test(path))).toEqual([]);
  });

  it("shares the program's one @pulumi/pulumi, the newest 3.x", async () => {
    const copies = await findPackages(join(project.dir, "node_modules"), "@pulumi/pulumi");
    expect(copies).toHaveLength(1);
    const { stdout } = await run("npm", ["view", "@pulumi/pulumi@3", "version", "--json"]);
    const numbers = (version: string) => version.split(".").map(Number);
    const versions: string[] = [JSON.parse(stdout)]
      .flat()
      .sort((a: string, b: string) => numbers(a).reduce((order, part, i) => order || part - (numbers(b)[i] ?? 0), 0));
    const installed = JSON.parse(await readFile(join(copies[0] as string, "package.json"), "utf8")).version;
    expect(installed).toBe(versions.at(-1));
    await run(join(project.dir, "node_modules", ".bin", "tsc"), ["--noEmit", "-p", "."], { cwd: project.dir });
  });

  it("runs the installed server, then up, a preview with no changes, and destroy", async () => {
    server = await launchCli(join(project.dir, "node_modules", ".bin", "tfe-governance-server"), [
      "--seed",
      "quickstart",
      "--quiet",
    ]);
    await project.run(["config", "set", "tfe:address", server.url]);
    await project.run(["config", "set", "--secret", "tfe:token", "quickstart-token-not-a-secret"]);

    const up = await project.up();
    expect(up.languageHost?.mainPackage).toMatch(/pulumi-language-nodejs/);
    expect(up.output).toMatch(/\+ 3 created/);
    const held = await policiesNamed(server.url, "require-tags");
    expect(held).toEqual([expect.objectContaining({ "enforcement-level": "hard-mandatory" })]);

    const preview = await project.run(["preview", "--expect-no-changes"]);
    expect(preview.output).toMatch(/3 unchanged/);

    await project.run(["destroy", "--yes", "--skip-preview"]);
    expect(await policiesNamed(server.url, "require-tags")).toEqual([]);
  }, 240_000);

  it("has `tfe-governance import` write a project that installs the library from the same tarball", async () => {
    const out = join(work, "imported");
    await mkdir(out);
    await run(
      join(project.dir, "node_modules", ".bin", "tfe-governance"),
      ["import", "--organization", "acme", "--out", out, "--address", server?.url ?? ""],
      { cwd: project.dir, env: { ...process.env, TFE_TOKEN: "quickstart-token-not-a-secret" } },
    );
    const manifest = JSON.parse(await readFile(join(out, "package.json"), "utf8"));
    expect(resolve(out, manifest.dependencies["pulumi-tfe-governance"].replace(/^file:/, ""))).toBe(tarball);
  }, 60_000);
});

describe("other ways a team installs it", () => {
  it.each([
    ["a git URL (npm clones it and runs its prepare)", () => `git+file://${repoRoot}#${headCommit()}`, []],
    ["a directory, copied as npm's install-links does", () => repoRoot, ["--install-links"]],
  ])(
    "from %s: dist/ and one @pulumi/pulumi",
    async (_way, spec, flags) => {
      const dir = await mkdtemp(join(tmpdir(), "installed-package-"));
      try {
        await writeFile(join(dir, "package.json"), JSON.stringify({ name: "governance", private: true }));
        await run("npm", ["install", "--no-audit", "--no-fund", ...flags, spec(), "@pulumi/pulumi@3"], { cwd: dir });
        expect(await findPackages(join(dir, "node_modules"), "@pulumi/pulumi")).toHaveLength(1);
        const { stdout } = await run(
          process.execPath,
          ["-p", 'Object.keys(require("pulumi-tfe-governance")).filter((name) => /^Policy|^Module/.test(name)).join()'],
          { cwd: dir },
        );
        expect(stdout.trim()).toBe("ModuleVersionDeprecation,Policy,PolicyFolder");
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
    300_000,
  );
});

function headCommit(): string {
  return execFileSync("git", ["rev-parse", "HEAD"], { cwd: repoRoot, encoding: "utf8" }).trim();
}

const program = `import * as tfe from "pulumi-tfe-governance";

const policy = new tfe.Policy("require-tags", {
  name: "require-tags",
  kind: "sentinel",
  enforcementLevel: "hard-mandatory",
  code: "main = rule { true }\\n",
});

new tfe.ModuleVersionDeprecation("vpc-1-0-0", {
  moduleName: "vpc",
  moduleProvider: "aws",
  version: "1.0.0",
  reason: "Use 1.1.0",
});

export const policyId = policy.policyId;
`;

/** Copies what git tracks (and new files it would track) and packs that copy, so no stale dist/ can slip in. */
async function packTrackedTree(tree: string, destination: string): Promise<string> {
  const files = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], {
    cwd: repoRoot,
    encoding: "utf8",
  })
    .split("\0")
    .filter((path) => path !== "");
  for (const path of files) {
    await cp(join(repoRoot, path), join(tree, path), { force: true }).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== "ENOENT") throw error; // deleted in the work tree, not yet in the index
    });
  }
  // The build tools only: the tree's own dist/ is what its `prepare` makes.
  await symlink(join(repoRoot, "node_modules"), join(tree, "node_modules"), "dir");
  const { stdout } = await run("npm", ["pack", "--pack-destination", destination, "--json"], {
    cwd: tree,
    maxBuffer: 64 * 1024 * 1024,
  });
  return join(destination, JSON.parse(stdout)[0].filename);
}

/** Every copy of package `name` under a node_modules tree, nested ones included. */
async function findPackages(nodeModules: string, name: string): Promise<string[]> {
  const found: string[] = [];
  const visit = async (dir: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
      if (!entry.isDirectory()) continue;
      const scoped = entry.name.startsWith("@");
      const packages = scoped
        ? (await readdir(join(dir, entry.name))).map((inner) => `${entry.name}/${inner}`)
        : [entry.name];
      for (const packageName of packages) {
        if (packageName === name) found.push(join(dir, packageName));
        await visit(join(dir, packageName, "node_modules"));
      }
    }
  };
  await visit(nodeModules);
  return found;
}

async function policiesNamed(address: string, name: string): Promise<Array<Record<string, unknown>>> {
  const response = await fetch(`${address}/api/v2/organizations/acme/policies?search%5Bname%5D=${name}`, {
    headers: { Authorization: "Bearer quickstart-token-not-a-secret" },
  });
  const document = (await response.json()) as { data: Array<{ attributes: Record<string, unknown> }> };
  return document.data.map((policy) => policy.attributes).filter((attributes) => attributes.name === name);
}
