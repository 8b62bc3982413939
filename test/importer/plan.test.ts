import ts from "typescript";
import { describe, expect, it } from "vitest";
import { hclString } from "../../src/importer/folder";
import type { ImportedDeprecation, ImportedPolicy, ImportSource, Layout } from "../../src/importer/model";
import { planProject } from "../../src/importer/plan";

const tarball = { spec: "file:../pulumi-tfe-governance-0.1.0.tgz", isDirectory: false };

function plan(source: ImportSource, layout: Layout) {
  return planProject(source, layout, tarball);
}

// The generation step alone: service records in, files out, nothing on disk or the network.

function policy(name: string, overrides: Partial<ImportedPolicy> = {}): ImportedPolicy {
  return {
    id: `pol-${name}`,
    name,
    description: null,
    kind: "sentinel",
    query: null,
    enforcementLevel: "advisory",
    policySetIds: [],
    code: Buffer.from(`main = rule { true } # ${name}\n`),
    ...overrides,
  };
}

function opaPolicy(name: string, regoPackage: string, overrides: Partial<ImportedPolicy>): ImportedPolicy {
  return policy(name, {
    kind: "opa",
    query: `data.${regoPackage}.deny`,
    code: Buffer.from(`package ${regoPackage}\n\ndeny contains "${name}" if { false }\n`),
    ...overrides,
  });
}

function source(policies: ImportedPolicy[], deprecations: ImportedDeprecation[] = []): ImportSource {
  return {
    organization: "acme",
    address: "https://app.terraform.io",
    isDefaultAddress: true,
    policies,
    policySets: [],
    deprecations,
    excluded: [],
    projectName: "tfe-governance-acme-program",
  };
}

function text(files: Map<string, Buffer>, path: string): string {
  const content = files.get(path);
  if (!content) throw new Error(`no ${path} among ${[...files.keys()].join(", ")}`);
  return content.toString();
}

interface Declared {
  type: string;
  name: string;
  args: Record<string, unknown>;
}

/** Compiles the generated program and runs it with stand-ins for the resources, recording what it declares. */
function runProgram(program: string): Declared[] {
  const compiled = ts.transpileModule(program, {
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, strict: true },
    reportDiagnostics: true,
  });
  expect(compiled.diagnostics ?? []).toEqual([]);
  const declared: Declared[] = [];
  const resource = (type: string) =>
    class {
      constructor(name: string, args: Record<string, unknown>) {
        declared.push({ type, name, args });
      }
    };
  const library = { Policy: resource("Policy"), ModuleVersionDeprecation: resource("ModuleVersionDeprecation") };
  const require = (id: string) => {
    if (id !== "pulumi-tfe-governance") throw new Error(`the program imports ${id}`);
    return library;
  };
  new Function("require", "exports", compiled.outputText)(require, {});
  return declared;
}

describe("the program layout", () => {
  it("declares each policy with exactly the service's values, whatever characters they hold", () => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a literal ${ is one of the characters under test
    const awkward = 'Quotes " and \\ backslash, `backticks`, ${template}, a\nnewline, \u2028, emoji 🚦 and */ end';
    const policies = [
      policy("require-tags", { description: awkward, enforcementLevel: "soft-mandatory", policySetIds: ["b", "a"] }),
      policy("deny-public", {
        kind: "opa",
        query: "data.terraform.deny",
        enforcementLevel: "mandatory",
        code: Buffer.from([0x70, 0x61, 0xff, 0xfe, 0x0a]),
      }),
    ];
    const { files } = plan(source(policies), "program");
    const declared = runProgram(text(files, "index.ts"));
    expect(declared).toEqual([
      {
        type: "Policy",
        name: "deny-public",
        args: {
          organization: "acme",
          kind: "opa",
          query: "data.terraform.deny",
          enforcementLevel: "mandatory",
          codeFile: "policies/deny-public.rego",
          adoptExisting: true,
        },
      },
      {
        type: "Policy",
        name: "require-tags",
        args: {
          organization: "acme",
          kind: "sentinel",
          description: awkward,
          enforcementLevel: "soft-mandatory",
          policySetIds: ["a", "b"],
          codeFile: "policies/require-tags.sentinel",
          adoptExisting: true,
        },
      },
    ]);
    expect(files.get("policies/deny-public.rego")).toEqual(policies[1]!.code);
    expect(files.get("policies/require-tags.sentinel")).toEqual(policies[0]!.code);
  });

  it("gives names that are not identifiers distinct identifiers, and reports each change", () => {
    const names = ["require-tags", "Require-Tags", "require_tags", "delete", "1st-check", "organization", "-", "a"];
    const { files, report } = plan(source(names.map((name) => policy(name))), "program");
    const program = text(files, "index.ts");
    expect(runProgram(program).map((entry) => entry.name)).toEqual([
      "-",
      "1st-check",
      "a",
      "delete",
      "organization",
      "require-tags",
      "Require-Tags",
      "require_tags",
    ]);
    const identifiers = [...program.matchAll(/^const (\w+) = new Policy/gm)].map((match) => match[1]);
    expect(identifiers).toEqual([
      "policy",
      "policy1stCheck",
      "a",
      "deletePolicy",
      "organizationPolicy",
      "requireTags",
      "requireTags2",
      "requireTags3",
    ]);
    expect(report.notes).toEqual(
      expect.arrayContaining([
        { name: "1st-check", note: "its constant is policy1stCheck: the name does not start with a letter" },
        { name: "delete", note: "its constant is deletePolicy: the name is a reserved word" },
        { name: "organization", note: "its constant is organizationPolicy: the name is a reserved word" },
        { name: "Require-Tags", note: "its constant is requireTags2: another name has the same camel-case form" },
        { name: "require_tags", note: "its constant is requireTags3: another name has the same camel-case form" },
      ]),
    );
    expect(report.notes.map((note) => note.name)).not.toContain("a");
  });

  it("keeps code file names distinct where letter case does not count, and off Windows device names", () => {
    const { files, report } = plan(
      source([policy("Require-Tags"), policy("require-tags"), policy("con"), policy("CON-1")]),
      "program",
    );
    const codeFiles = [...files.keys()].filter((path) => path.startsWith("policies/")).sort();
    expect(codeFiles).toEqual([
      "policies/CON-1.sentinel",
      "policies/Require-Tags-2.sentinel",
      "policies/con-policy.sentinel",
      "policies/require-tags.sentinel",
    ]);
    expect(new Set(codeFiles.map((path) => path.toLowerCase())).size).toBe(codeFiles.length);
    expect(report.notes).toEqual(
      expect.arrayContaining([
        { name: "con", note: "its code is in con-policy.sentinel: the name is a reserved device name on Windows" },
        {
          name: "Require-Tags",
          note: "its code is in Require-Tags-2.sentinel: another file name differs only in letter case",
        },
      ]),
    );
  });

  it("leaves out policies without code or with a name the resource refuses, saying what to do", () => {
    const { files, report } = plan(
      source([policy("no-code", { code: null }), policy("legacy.name"), policy("fine")]),
      "program",
    );
    expect(runProgram(text(files, "index.ts")).map((entry) => entry.name)).toEqual(["fine"]);
    expect(report.skipped).toEqual([
      { name: "legacy.name", reason: expect.stringMatching(/letters, digits, '-' and '_'.*run the import again/) },
      { name: "no-code", reason: expect.stringMatching(/holds no code.*upload its code/) },
    ]);
    expect(text(files, "README.md")).toMatch(/## Left out[\s\S]*legacy\.name[\s\S]*no-code/);
  });

  it("leaves out an enforcement level the service does not report, and says so", () => {
    const { files, report } = plan(source([policy("unlevelled", { enforcementLevel: null })]), "program");
    expect(runProgram(text(files, "index.ts"))[0]!.args).not.toHaveProperty("enforcementLevel");
    expect(report.notes).toEqual([{ name: "unlevelled", note: expect.stringMatching(/no enforcement level/) }]);
  });

  it("declares deprecations with the reason as sent, without the text the service appends", () => {
    const deprecation = (version: string, reason: string, link: string | null): ImportedDeprecation => ({
      organization: "acme",
      moduleName: "vpc",
      moduleProvider: "aws",
      version,
      reason,
      link,
    });
    const { files, report } = plan(
      source(
        [],
        [
          deprecation("1.0.0", "Use 2.x. Applies will be blocked in 15 days.", "https://example.com/vpc"),
          deprecation("1.1.0-rc.1", "Broken NAT routes.", ""),
          deprecation("1.2.0", " Applies will be blocked in 15 days.", null),
        ],
      ),
      "program",
    );
    const program = text(files, "index.ts");
    expect(runProgram(program)).toEqual([
      {
        type: "ModuleVersionDeprecation",
        name: "vpc-aws-1.0.0",
        args: {
          organization: "acme",
          moduleName: "vpc",
          moduleProvider: "aws",
          version: "1.0.0",
          reason: "Use 2.x.",
          link: "https://example.com/vpc",
          adoptExisting: true,
        },
      },
      {
        type: "ModuleVersionDeprecation",
        name: "vpc-aws-1.1.0-rc.1",
        args: expect.not.objectContaining({ link: expect.anything() }),
      },
      {
        type: "ModuleVersionDeprecation",
        name: "vpc-aws-1.2.0",
        // Nothing but the notice: keeping it is better than an empty reason, which the resource refuses.
        args: expect.objectContaining({ reason: " Applies will be blocked in 15 days." }),
      },
    ]);
    expect(program).toMatch(/^const vpcAwsV1_0_0 = new ModuleVersionDeprecation/m);
    expect(program).toMatch(/^const vpcAwsV1_1_0_rc_1 = /m);
    expect(report.deprecations.map((entry) => entry.moduleVersion)).toEqual([
      "acme/vpc/aws/1.0.0",
      "acme/vpc/aws/1.1.0-rc.1",
      "acme/vpc/aws/1.2.0",
    ]);
  });

  it("writes a project whose Pulumi.yaml names the program file, and no token anywhere", () => {
    const local = { ...source([policy("a")]), address: "http://127.0.0.1:8080", isDefaultAddress: false };
    const { files } = plan(local, "program");
    const yaml = text(files, "Pulumi.yaml");
    expect(yaml).toMatch(/^main: index\.ts$/m);
    expect(yaml).toMatch(/^runtime:\n {2}name: nodejs\n/m);
    expect(yaml).toMatch(/^config:\n {2}tfe:address:\n {4}value: "http:\/\/127\.0\.0\.1:8080"$/m);
    expect(text(plan(source([policy("a")]), "program").files, "Pulumi.yaml")).not.toMatch(/tfe:address/);
    const manifest = JSON.parse(text(files, "package.json"));
    expect(manifest.dependencies["pulumi-tfe-governance"]).toBe(tarball.spec);
    expect(manifest.dependencies["@pulumi/pulumi"]).toMatch(/^\^3\./);
    expect(text(files, "README.md")).toContain(`installs it from \`${tarball.spec}\``);
    expect(files.has(".npmrc")).toBe(false);
    const fromCheckout = planProject(local, "program", { spec: "file:/src/pulumi-tfe-governance", isDirectory: true });
    expect(text(fromCheckout.files, ".npmrc")).toBe("install-links=true\n");
    expect(manifest.devDependencies).toHaveProperty("typescript");
    expect(JSON.parse(text(files, "tsconfig.json")).files).toEqual(["index.ts"]);
    expect([...files.keys()]).toEqual(
      expect.arrayContaining(["index.ts", "Pulumi.yaml", "package.json", "tsconfig.json", ".gitignore", "README.md"]),
    );
  });

  it("yields the same bytes for the same organization, whatever order the service lists it in", () => {
    const policies = ["b", "A", "a", "c-1", "c_1"].map((name) => policy(name));
    const first = plan(source(policies), "program").files;
    const second = plan(source([...policies].reverse()), "program").files;
    expect([...second.keys()].sort()).toEqual([...first.keys()].sort());
    for (const [path, content] of first) expect(second.get(path)).toEqual(content);
  });
});

describe("the folder layout", () => {
  const policies = [
    // biome-ignore lint/suspicious/noTemplateCurlyInString: HCL must escape a literal ${
    policy("require-tags", { policySetIds: ["polset-b", "polset-a"], description: 'Tags "owner" and ${cost}' }),
    policy("restrict-types", { policySetIds: ["polset-a", "polset-b"], enforcementLevel: "hard-mandatory" }),
    policy("loose", {}),
    opaPolicy("deny-public", "terraform.public", { enforcementLevel: "mandatory" }),
    opaPolicy("deny-iam", "terraform.iam", { enforcementLevel: "advisory" }),
  ];

  it("writes one folder per combination of policy sets (named after them, by id where not read), in the service's folder format", () => {
    const { files, report } = plan(source(policies), "folder");
    expect([...files.keys()].sort()).toEqual([
      ".gitignore",
      "Pulumi.yaml",
      "README.md",
      "index.ts",
      "package.json",
      "policy-sets/no-policy-set-opa/deny-iam.rego",
      "policy-sets/no-policy-set-opa/deny-public.rego",
      "policy-sets/no-policy-set-opa/policies.hcl",
      "policy-sets/no-policy-set-sentinel/loose.sentinel",
      "policy-sets/no-policy-set-sentinel/sentinel.hcl",
      "policy-sets/polset-a+polset-b/require-tags.sentinel",
      "policy-sets/polset-a+polset-b/restrict-types.sentinel",
      "policy-sets/polset-a+polset-b/sentinel.hcl",
      "tsconfig.json",
    ]);
    expect(text(files, "policy-sets/polset-a+polset-b/sentinel.hcl")).toBe(
      [
        'policy "require-tags" {',
        '  source            = "./require-tags.sentinel"',
        '  enforcement_level = "advisory"',
        "}",
        "",
        'policy "restrict-types" {',
        '  source            = "./restrict-types.sentinel"',
        '  enforcement_level = "hard-mandatory"',
        "}",
        "",
      ].join("\n"),
    );
    expect(text(files, "policy-sets/no-policy-set-opa/policies.hcl")).toBe(
      [
        'policy "deny-iam" {',
        '  query             = "data.terraform.iam.deny"',
        '  enforcement_level = "advisory"',
        "}",
        "",
        'policy "deny-public" {',
        '  query             = "data.terraform.public.deny"',
        '  enforcement_level = "mandatory"',
        "}",
        "",
      ].join("\n"),
    );
    expect(report.folders).toContainEqual({
      path: "policy-sets/polset-a+polset-b",
      kind: "sentinel",
      policySetIds: ["polset-a", "polset-b"],
      policyCount: 2,
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the description holds a literal ${
      descriptions: { "require-tags": 'Tags "owner" and ${cost}' },
    });
    expect(text(files, "README.md")).toMatch(/PolicyFolder/);
    expect(text(files, "index.ts")).toContain(
      [
        'new PolicyFolder("polset-a+polset-b", {',
        '  directory: "policy-sets/polset-a+polset-b",',
        "  organization,",
        '  policySetIds: ["polset-a", "polset-b"],',
        "  adoptExisting: true,",
        "  overrides: {",
        // biome-ignore lint/suspicious/noTemplateCurlyInString: the description holds a literal ${
        '    "require-tags": { description: "Tags \\"owner\\" and ${cost}" },',
        "  },",
        "}, { protect: true });",
      ].join("\n"),
    );
    expect(text(files, "index.ts")).not.toMatch(/new Policy\(/);
  });

  it("gives OPA policies of one package folders of their own, since a folder loads its .rego files together", () => {
    const samePackage = [
      opaPolicy("deny-public", "terraform", {}),
      opaPolicy("deny-iam", "terraform", {}),
      opaPolicy("deny-misc", "terraform.misc", {}),
    ];
    const { files, report } = plan(source(samePackage), "folder");
    expect([...files.keys()].filter((path) => path.endsWith(".rego")).sort()).toEqual([
      "policy-sets/no-policy-set-opa-2/deny-public.rego",
      "policy-sets/no-policy-set-opa/deny-iam.rego",
      "policy-sets/no-policy-set-opa/deny-misc.rego",
    ]);
    expect(report.notes).toEqual([
      { name: "deny-public", note: expect.stringMatching(/shares the Rego package terraform with deny-iam.*-opa-2/) },
    ]);
  });

  it("names no .rego file *_test, which a folder would skip as an OPA test", () => {
    const { files } = plan(source([opaPolicy("deny_test", "terraform", {})]), "folder");
    expect([...files.keys()]).toContain("policy-sets/no-policy-set-opa/deny_test-policy.rego");
  });

  it("keeps a description the folder file would trim in the program's overrides", () => {
    const described = [opaPolicy("deny", "terraform", { description: "Ends in a newline\n" })];
    const { files } = plan(source(described), "folder");
    expect(text(files, "policy-sets/no-policy-set-opa/policies.hcl")).not.toMatch(/description/);
    expect(text(files, "index.ts")).toContain('"deny": { description: "Ends in a newline\\n" },');
  });

  it.each([
    ["plain", '"plain"'],
    ['a "quoted" \\ word', '"a \\"quoted\\" \\\\ word"'],
    // biome-ignore lint/suspicious/noTemplateCurlyInString: HCL must escape a literal ${
    ["${var} and %{if}", '"$${var} and %%{if}"'],
    ["a backslash then b: \\b", '"a backslash then b: \\\\b"'],
    ["control \b\f\n\t", '"control \\u0008\\u000c\\n\\t"'],
  ])("writes %j as the HCL string %s", (value, expected) => {
    expect(hclString(value)).toBe(expected);
  });
});

describe("policy set parameters", () => {
  it("writes a credential-named parameter the service holds in plain text as secret config, never its value", () => {
    const set = {
      id: "polset-withToken0001",
      name: "with-token",
      description: null,
      kind: "sentinel" as const,
      global: true,
      overridable: null,
      agentEnabled: false,
      policyToolVersion: "latest",
      versioned: false,
      policyIds: [],
      workspaceIds: [],
      projectIds: [],
      excludedWorkspaceIds: [],
      excludedProjectIds: [],
      vcs: null,
      parameters: [
        { key: "github_token", value: "ghp_plainTextOnTheService01", sensitive: false },
        { key: "max_instances", value: "5", sensitive: false },
      ],
    };
    const files = plan({ ...source([]), policySets: [set] }, "program").files;
    const program = text(files, "index.ts");
    expect(program).toContain('"github_token": config.requireSecret("with-token-github_token")');
    expect(program).toContain('"max_instances": "5"');
    for (const [path, content] of files) expect(content.toString(), path).not.toContain("ghp_plainTextOnTheService01");
    expect(text(files, "README.md")).toContain(
      "pulumi config set --secret with-token-github_token <value>   # with-token: github_token (plain on the service now)",
    );
  });
});
