import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import type { ImportedPolicySet, ImportSource, Language } from "../../src/importer/model";
import { planProject } from "../../src/importer/plan";

// Every file import generates, in every language, read back by that language's own reader, for service data drawn
// from hostile strings: quotes, newlines, `${`, control characters (DEL and C1 among them), separators, unicode,
// keywords of each language. A file a reader refuses is a project a team cannot run. YAML is read by js-yaml, a YAML
// 1.2 reader as strict as Pulumi's about characters a document may not hold; Python by its own `ast.parse`;
// TypeScript by its compiler.

const { load: loadYaml } = createRequire(join(process.cwd(), "package.json"))("js-yaml") as {
  load(text: string): unknown;
};
const library = { spec: "file:../pulumi-tfe-governance-0.1.0.tgz", isDirectory: false };

const hostileParts = [
  '"',
  "'",
  "'''",
  '"""',
  "\\",
  "\n",
  "\r\n",
  "\t",
  "${",
  "$${x}",
  "}",
  "#",
  ": ",
  "- ",
  "\u0000",
  "\u0007",
  "\u001b",
  "\u007f",
  "\u0085",
  "\u009b",
  "\u00a0",
  "\u2028",
  "\u2029",
  "\ufeff",
  "\ufffe",
  "\uffff",
  "é",
  "漢字",
  "🚀",
  "None",
  "True",
  "null",
  "yes",
  "~",
  "await",
  "import",
  "*/",
  "`",
];
const hostile = fc
  .array(
    fc.oneof(
      fc.constantFrom(...hostileParts),
      fc.string({ maxLength: 4 }),
      fc.string({ unit: "binary", maxLength: 3 }),
    ),
    {
      minLength: 1,
      maxLength: 6,
    },
  )
  .map((parts) => parts.join(""));
/** What a name of the service may hold: its names are letters, digits, `-`, `_` (sets and parameters: more). */
const policyName = fc.stringMatching(/^[A-Za-z0-9_-]{1,12}$/);
const parameterKey = fc.oneof(
  fc.constantFrom("token", "eu-token", "api.token", "api_key", "a.b.c", "__proto__", "constructor"),
  fc.stringMatching(/^[A-Za-z0-9_.-]{1,10}$/),
);

function setOf(index: number, name: string, description: string, parameters: ImportedPolicySet["parameters"]) {
  return {
    id: `polset-Generated${String(index).padStart(5, "0")}`,
    name,
    description,
    kind: "sentinel" as const,
    global: true,
    overridable: null,
    agentEnabled: false,
    policyToolVersion: "latest",
    versioned: index % 2 === 0,
    policyIds: [],
    workspaceIds: [],
    projectIds: [],
    excludedWorkspaceIds: [],
    excludedProjectIds: [],
    vcs: null,
    parameters,
  };
}

const organizationSource = fc
  .record({
    policy: fc.record({ name: policyName, description: hostile }),
    sets: fc.uniqueArray(
      fc.record({
        name: fc.oneof(fc.constantFrom("prod", "prod-eu", "..", ".git", "a b", "a-b"), policyName),
        description: hostile,
        parameters: fc.uniqueArray(fc.record({ key: parameterKey, value: hostile, sensitive: fc.boolean() }), {
          selector: (parameter) => parameter.key,
          maxLength: 3,
        }),
      }),
      { selector: (set) => set.name, minLength: 1, maxLength: 3 },
    ),
    reason: hostile,
    organization: fc.stringMatching(/^[a-z0-9][a-z0-9_-]{0,10}$/),
  })
  .map(
    ({ policy, sets, reason, organization }): ImportSource => ({
      organization,
      address: "http://127.0.0.1:8080",
      isDefaultAddress: false,
      policies: [
        {
          id: "pol-Generated000001",
          name: policy.name,
          description: policy.description,
          kind: "sentinel",
          query: null,
          enforcementLevel: "advisory",
          policySetIds: [],
          code: Buffer.from("main = rule { true }\n"),
        },
      ],
      policySets: sets.map((set, index) => setOf(index, set.name, set.description, set.parameters)),
      deprecations: [{ organization, moduleName: "vpc", moduleProvider: "aws", version: "1.0.0", reason, link: null }],
      excluded: [],
      projectName: `tfe-governance-${organization}-program`,
    }),
  );

const textOf = (files: Map<string, Buffer>, path: string) => (files.get(path) as Buffer).toString("utf8");

/** Pulumi YAML's `$${` is a literal `${`. */
const pulumiYamlText = (value: unknown) => (typeof value === "string" ? value.replaceAll("$${", "${") : value);

function checkYaml(source: ImportSource, files: Map<string, Buffer>) {
  const document = loadYaml(textOf(files, "Pulumi.yaml")) as {
    config?: Record<string, { type?: string; secret?: boolean }>;
    resources: Record<string, { type: string; properties: Record<string, unknown> }>;
  };
  const resources = Object.values(document.resources);
  const policy = resources.find((resource) => resource.type === "tfegov:index:Policy");
  expect(pulumiYamlText(policy?.properties.description)).toBe(source.policies[0]?.description);
  const deprecation = resources.find((resource) => resource.type === "tfegov:index:ModuleVersionDeprecation");
  expect(pulumiYamlText(deprecation?.properties.reason)).toBe(source.deprecations[0]?.reason);
  const secretKeys = Object.keys(document.config ?? {}).filter((key) => !key.includes(":"));
  for (const key of secretKeys) expect(key, "a config key Pulumi YAML can name").toMatch(/^[A-Za-z0-9_-]+$/);
  // Each secret parameter reads a key of its own: one secret is never sent to two sets.
  const references = resources.flatMap((resource) =>
    Object.values((resource.properties.parameters as Record<string, unknown>) ?? {}).filter(
      (value): value is string => typeof value === "string" && /^\$\{[^}]+\}$/.test(value),
    ),
  );
  expect(new Set(references).size).toBe(references.length);
  expect(references.map((reference) => reference.slice(2, -1)).sort()).toEqual([...secretKeys].sort());
}

function checkTypeScript(files: Map<string, Buffer>) {
  for (const [path, content] of files) {
    if (!path.endsWith(".ts")) continue;
    const compiled = ts.transpileModule(content.toString("utf8"), {
      compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 },
      reportDiagnostics: true,
    });
    expect(compiled.diagnostics ?? [], path).toEqual([]);
  }
  loadYaml(textOf(files, "Pulumi.yaml"));
  JSON.parse(textOf(files, "package.json"));
  const program = textOf(files, "index.ts");
  const keys = [...program.matchAll(/requireSecret\("([^"]*)"\)/g)].map((match) => match[1]);
  expect(new Set(keys).size, "one config key per secret").toBe(keys.length);
}

describe("generated files in every language, read back by the language's own reader", () => {
  it("parses for hostile names, descriptions, parameters and reasons", () => {
    const pythonFiles: string[] = [];
    const folder = mkdtempSync(join(tmpdir(), "import-python-"));
    try {
      fc.assert(
        fc.property(organizationSource, (source) => {
          const byLanguage = (language: Language) => planProject(source, "program", library, language).files;
          checkTypeScript(byLanguage("typescript"));
          checkYaml(source, byLanguage("yaml"));
          const python = byLanguage("python");
          const file = join(folder, `case-${pythonFiles.length}.py`);
          writeFileSync(file, python.get("__main__.py") as Buffer);
          pythonFiles.push(file);
          for (const path of byLanguage("yaml").keys()) {
            expect(path.split("/").includes(".."), path).toBe(false);
            expect(path.startsWith("policy-sets/."), path).toBe(false);
          }
        }),
        { numRuns: 150, seed: 20261127 },
      );
      // One Python process reads every case's program: ast.parse is Python's own reader, compile its compiler.
      const script =
        "import ast, sys\n" +
        "for path in sys.argv[1:]:\n" +
        "    source = open(path, encoding='utf-8').read()\n" +
        "    try:\n" +
        "        compile(ast.parse(source, path), path, 'exec')\n" +
        "    except Exception as error:\n" +
        "        print(f'{path}: {error}')\n" +
        "        sys.exit(1)\n";
      let refused = "";
      try {
        execFileSync("python3", ["-c", script, ...pythonFiles], { encoding: "utf8" });
      } catch (error) {
        const failed = (error as { stdout: string }).stdout;
        const path = failed.split(": ")[0] as string;
        refused = `${failed}\n${readFileSync(path, "utf8")}`;
      }
      expect(refused).toBe("");
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
