import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

// docs/development.md's "Public API" is a promise to users: each entry point's runtime exports are exactly those it lists.

const readme = readFileSync(join(__dirname, "..", "docs", "development.md"), "utf8");
const section = /<!-- public-api:start -->([\s\S]*?)<!-- public-api:end -->/.exec(readme)?.[1] ?? "";
const manifest = JSON.parse(readFileSync(join(__dirname, "..", "package.json"), "utf8")) as {
  exports: Record<string, string | { default: string }>;
  bin: Record<string, string>;
};

/** The values the page lists for an entry point: the backticked names between "values:" and "Types:" or the end. */
function listedValues(entry: string): string[] {
  const item = section.split(/\n- /).find((text) => text.replace(/^- /, "").startsWith(`\`${entry}\` values:`));
  if (!item) throw new Error(`docs/development.md's Public API has no entry ${entry}`);
  const values = (item.split("values:")[1] as string).split(/Types:|Not for programs/)[0] as string;
  return [...values.matchAll(/`([A-Za-z]+)`/g)].map((match) => match[1] as string).sort();
}

const sources: Record<string, string> = {
  "pulumi-tfe-governance": "../src/index",
  "pulumi-tfe-governance/client": "../src/client/index",
  "pulumi-tfe-governance/server": "../src/server/index",
  "pulumi-tfe-governance/providers": "../src/resources/providers",
};

describe("docs/development.md's Public API", () => {
  it("lists every entry point of package.json, and no other", () => {
    const entries = Object.keys(manifest.exports)
      .filter((key) => key !== "./package.json")
      .map((key) => (key === "." ? "pulumi-tfe-governance" : `pulumi-tfe-governance/${key.slice(2)}`));
    expect(entries.sort()).toEqual(Object.keys(sources).sort());
  });

  it.each(Object.entries(sources))("%s exports exactly the values listed", async (entry, source) => {
    const module = (await import(source)) as Record<string, unknown>;
    expect(Object.keys(module).sort()).toEqual(listedValues(entry));
  });

  it("names every command of package.json", () => {
    const commands = /Commands \(`bin`\): (.*)/.exec(section)?.[1] ?? "";
    for (const command of Object.keys(manifest.bin)) expect(commands).toContain(`\`${command}\``);
  });
});

describe("what the documented defaults say", () => {
  it("gives every regoVersion the default the code uses: v0, what the service's latest OPA runtime reads", async () => {
    const { readFileSync } = await import("node:fs");
    const { join } = await import("node:path");
    const root = join(__dirname, "..");
    const documented = [
      "src/resources/policy-folder/index.ts",
      "src/policy-code/folder.ts",
      "src/resources/policy/properties.ts",
    ].map((file) => {
      const text = readFileSync(join(root, file), "utf8");
      // The doc comment right above each regoVersion property.
      const comment = /\/\*\*((?:(?!\*\/)[\s\S])*)\*\/\s*regoVersion\?:/.exec(text)?.[1] ?? "";
      return [file, comment.replace(/\s*\*\s*/g, " ")] as const;
    });
    for (const [file, comment] of documented) {
      expect(comment, file).toMatch(/v0"?`? \(default\)/);
      expect(comment, file).not.toMatch(/v1"?`? \(default\)|v1[^.]*\(default\)/);
    }
  });
});
