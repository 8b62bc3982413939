import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { collectFolder } from "../../src/policy-code/archive";
import { kindOfFolder, readPolicySetFolder } from "../../src/policy-code/policy-set-folder";
import { readTfPolicyFolder } from "../../src/policy-code/tfpolicy";

const example = join(__dirname, "..", "..", "examples", "quickstart", "policy-sets", "terraform-policy");
const encoder = new TextEncoder();

function folderOf(files: Record<string, string>): Map<string, Uint8Array> {
  return new Map(Object.entries(files).map(([path, text]) => [path, encoder.encode(text)]));
}

const passing = `
input "level" {
  type    = string
  default = "advisory"
}

resource_policy "aws_s3_bucket" "tagged" {
  enforcement_level = input.level
  enforce {
    condition     = core::try(attrs.tags.Owner, "") != ""
    error_message = "needs an Owner tag"
  }
}
`;

describe("a Terraform policy level written as an expression", () => {
  const file = (level: string, extra = "") => `
input "level" {
  type    = string
  default = "advisory"
}

locals {
  strict = "mandatory"
  level  = input.level
}
${extra}
resource_policy "aws_s3_bucket" "tagged" {
  enforcement_level = ${level}
  enforce {
    condition = true
  }
}
`;
  const levelOf = async (level: string, parameters: Record<string, string | undefined> = {}, extra = "") => {
    const folder = await readTfPolicyFolder(folderOf({ "a.policy.hcl": file(level, extra) }), { parameters });
    return { level: folder.blocks[0]?.level, inputs: folder.blocks[0]?.levelInputs, problems: folder.problems };
  };

  it("evaluates literals, locals, inputs with their parameters, string functions and conditionals", async () => {
    expect(await levelOf("local.strict")).toMatchObject({ level: "mandatory", inputs: [], problems: [] });
    expect(await levelOf("local.level")).toMatchObject({ level: "advisory", inputs: ["level"] });
    expect(await levelOf("local.level", { level: "mandatory_overridable" })).toMatchObject({
      level: "mandatory_overridable",
    });
    expect(await levelOf('lower("ADVISORY")')).toMatchObject({ level: "advisory" });
    expect(await levelOf('core::lower("MANDATORY")')).toMatchObject({ level: "mandatory" });
    expect(await levelOf('true ? "advisory" : "mandatory"')).toMatchObject({ level: "advisory" });
    expect(await levelOf('input.level == "advisory" ? "mandatory" : "advisory"')).toMatchObject({
      level: "mandatory",
      inputs: ["level"],
    });
    // A template: HCL's interpolation, not JavaScript's.
    // biome-ignore lint/suspicious/noTemplateCurlyInString: HCL's interpolation
    expect(await levelOf('"${local.strict}"')).toMatchObject({ level: "mandatory" });
  });

  it("says what it cannot evaluate, as a level no kind knows, and fails a value that is no level", async () => {
    const unknown = await levelOf('core::getresources("x")[0]');
    expect(unknown.level).toMatch(/^<cannot evaluate: /);
    expect(unknown.problems).toEqual([]);
    expect((await levelOf("local.level", { level: undefined })).level).toMatch(
      /^<cannot evaluate: input\.level, whose parameter is not known until apply>$/,
    );
    expect((await levelOf('lower("LOUD")')).problems).toEqual([
      expect.stringMatching(/enforcement_level "loud" .* is not a level of Terraform policy/),
    ]);
  });
});

describe("a Terraform policy folder, read as the service reads it and checked against HashiCorp's schema", () => {
  it("reads the example: each policy block with its level, its enforce blocks, operations and filter; no problem", async () => {
    const folder = await readTfPolicyFolder(collectFolder(example).files);
    expect(folder.problems).toEqual([]);
    expect(folder.warnings).toEqual([]);
    expect(folder.policyFiles).toEqual(["block-public-buckets.policy.hcl", "require-tags.policy.hcl"]);
    expect(folder.testFiles).toEqual(["block-public-buckets.policytest.hcl", "require-tags.policytest.hcl"]);
    expect(folder.blocks).toEqual([
      {
        address: "resource_policy.aws_s3_bucket_public_access_block.all_public_access_blocked",
        level: "mandatory_overridable",
        levelFrom: "enforcement_level",
        levelInputs: [],
        enforce: 1,
        operations: ["create", "update"],
        filter: null,
        readsDigest: null,
      },
      {
        address: "resource_policy.aws_s3_bucket.require_owner_tag",
        level: "mandatory",
        levelFrom: 'input "require_tags_level" default',
        levelInputs: ["require_tags_level"],
        enforce: 1,
        operations: ["create", "no-op", "update"],
        filter: null,
        readsDigest: null,
      },
    ]);
  });

  it("resolves a level written as an input from the set's parameter (JSON where it parses), else the default", async () => {
    const files = folderOf({ "a.policy.hcl": passing });
    expect((await readTfPolicyFolder(files)).blocks[0]).toMatchObject({ level: "advisory" });
    for (const value of ["mandatory", '"mandatory"']) {
      const folder = await readTfPolicyFolder(files, { parameters: { level: value } });
      expect(folder.blocks[0]).toMatchObject({ level: "mandatory", levelFrom: 'parameter "level"' });
    }
    const wrong = await readTfPolicyFolder(files, { parameters: { level: "hard-mandatory" } });
    expect(wrong.problems).toEqual([
      expect.stringMatching(
        /^a\.policy\.hcl:7: resource_policy "aws_s3_bucket" "tagged": enforcement_level "hard-mandatory" \(parameter "level"\) is not a level of Terraform policy/,
      ),
    ]);
  });

  it("the server's reading refuses only what the service does at ingress: no policy file, or one that does not parse", async () => {
    await expect(readPolicySetFolder(folderOf({ "README.md": "x" }), "tfpolicy")).rejects.toThrow(
      /no \.policy\.hcl file at the root of the folder/,
    );
    await expect(readPolicySetFolder(folderOf({ "a.policy.hcl": "resource_policy {" }), "tfpolicy")).rejects.toThrow(
      /a\.policy\.hcl:1/,
    );
    const loose = folderOf({ "a.policy.hcl": 'resource_policy "x" "y" {\n  levels = 1\n}\n' });
    expect(await readPolicySetFolder(loose, "tfpolicy")).toMatchObject({
      policies: { "resource_policy.x.y": "mandatory" },
    });
  });

  it.each([
    [
      "an unknown top-level block",
      'resource_polcy "aws_s3_bucket" "x" {\n}\n',
      /^a\.policy\.hcl:1: resource_polcy is not a block of a policy file: did you mean resource_policy\?/,
    ],
    [
      "a policy block with one label",
      'resource_policy "aws_s3_bucket" {\n  enforce {\n    condition = true\n  }\n}\n',
      /^a\.policy\.hcl:1: resource_policy "aws_s3_bucket": takes 2 labels: write resource_policy "<resource type>" "<name>"/,
    ],
    [
      "no enforce block",
      'resource_policy "aws_s3_bucket" "x" {\n  enforcement_level = "advisory"\n}\n',
      /^a\.policy\.hcl:1: resource_policy "aws_s3_bucket" "x": needs at least 1 enforce block$/,
    ],
    [
      "an enforce without condition",
      'resource_policy "aws_s3_bucket" "x" {\n  enforce {\n    error_message = "m"\n  }\n}\n',
      /^a\.policy\.hcl:1: resource_policy "aws_s3_bucket" "x": enforce: condition is required$/,
    ],
    [
      "an unknown argument",
      'resource_policy "aws_s3_bucket" "x" {\n  enforcment_level = "advisory"\n  enforce {\n    condition = true\n  }\n}\n',
      /resource_policy "aws_s3_bucket" "x": enforcment_level is not an argument here: did you mean enforcement_level\?/,
    ],
    [
      "a level of another framework",
      'resource_policy "aws_s3_bucket" "x" {\n  enforcement_level = "soft-mandatory"\n  enforce {\n    condition = true\n  }\n}\n',
      /^a\.policy\.hcl:1: resource_policy "aws_s3_bucket" "x": enforcement_level "soft-mandatory" \(enforcement_level\) is not a level of Terraform policy/,
    ],
    [
      "operations on a provider policy",
      'provider_policy "aws" "x" {\n  operations = ["create"]\n  enforce {\n    condition = true\n  }\n}\n',
      /provider_policy "aws" "x": operations is not an argument here/,
    ],
    [
      "delete with create",
      'resource_policy "aws_s3_bucket" "x" {\n  operations = ["create", "delete"]\n  enforce {\n    condition = true\n  }\n}\n',
      /operations: "delete" combines with neither "create" nor "no-op"/,
    ],
    [
      "an unknown operation",
      'resource_policy "aws_s3_bucket" "x" {\n  operations = ["destroy"]\n  enforce {\n    condition = true\n  }\n}\n',
      /operations: "destroy" is not an operation/,
    ],
    ["two policy blocks", "policy {}\npolicy {}\n", /^a\.policy\.hcl: 2 policy blocks: a policy file holds at most 1$/],
    ["an input without type", 'input "x" {\n  default = 1\n}\n', /^a\.policy\.hcl:1: input "x": type is required$/],
    [
      "an input without default nor parameter",
      'input "owner" {\n  type = string\n}\n',
      /^a\.policy\.hcl:1: input "owner" has no default, and the set has no parameter "owner"/,
    ],
    [
      "a level read from an undeclared input",
      'resource_policy "aws_s3_bucket" "x" {\n  enforcement_level = input.lvl\n  enforce {\n    condition = true\n  }\n}\n',
      /enforcement_level reads input\.lvl, which this file does not declare/,
    ],
    [
      "a plugin that is not there",
      'policy {\n  plugins {\n    regex = { source = "./plugins/bin/regex" }\n  }\n}\n',
      /^a\.policy\.hcl:\d+: policy: plugin "regex": \.\/plugins\/bin\/regex is not in the set's folder/,
    ],
    ["a file that does not parse", 'resource_policy "aws_s3_bucket" "x" {\n  enforce {\n', /^a\.policy\.hcl:\d+,\d+/],
  ])("refuses %s, naming file, line and block", async (_case, text, says) => {
    const folder = await readTfPolicyFolder(folderOf({ "a.policy.hcl": text }));
    expect(folder.problems).toEqual([expect.stringMatching(says)]);
  });

  it.each([
    [
      "a target that is not there",
      'policytest {\n  targets = ["missing.policy.hcl"]\n}\n',
      /^t\.policytest\.hcl:2: policytest: target missing\.policy\.hcl is not in the set's folder/,
    ],
    [
      "an unknown mock attribute",
      'resource "aws_s3_bucket" "case" {\n  atrs = {}\n}\n',
      /^t\.policytest\.hcl:1: resource "aws_s3_bucket" "case": atrs is not an argument here: did you mean attrs\?/,
    ],
    [
      "a data mock without attrs",
      'data "aws_iam_policy_document" "d" {\n}\n',
      /^t\.policytest\.hcl:1: data "aws_iam_policy_document" "d": attrs is required$/,
    ],
    [
      "an unknown block",
      'mock "aws_s3_bucket" "x" {\n}\n',
      /^t\.policytest\.hcl:1: mock is not a block of a policy test file/,
    ],
  ])("refuses a test file with %s", async (_case, text, says) => {
    const folder = await readTfPolicyFolder(folderOf({ "a.policy.hcl": passing, "t.policytest.hcl": text }));
    expect(folder.problems).toEqual([expect.stringMatching(says)]);
  });

  it("infers the kind from a repository's policies path however it is written", () => {
    const files = new Map([["policies/terraform/owner.policy.hcl", new Uint8Array()]]);
    for (const path of ["policies/terraform", "./policies/terraform/", "policies\\terraform"]) {
      expect(kindOfFolder(files, path), path).toBe("tfpolicy");
    }
    expect(kindOfFolder(files, "policies")).toBeUndefined();
  });

  it("finds test targets relative to the test file, files and folders alike", async () => {
    const folder = await readTfPolicyFolder(
      folderOf({
        "a.policy.hcl": passing,
        "tests/a.policytest.hcl": 'policytest {\n  targets = ["../a.policy.hcl", "../"]\n}\n',
      }),
    );
    expect(folder.problems).toEqual([]);
  });

  it("warns of a policy file in a subfolder, which the service does not read, and fails a folder with none at its root", async () => {
    const nested = await readTfPolicyFolder(folderOf({ "policies/a.policy.hcl": passing }));
    expect(nested.problems).toEqual([
      expect.stringMatching(
        /no \.policy\.hcl file at the root of the folder.*1 in subfolders.*point directory at the folder/,
      ),
    ]);
    const both = await readTfPolicyFolder(folderOf({ "a.policy.hcl": passing, "old/b.policy.hcl": passing }));
    expect(both.problems).toEqual([]);
    expect(both.warnings).toEqual([expect.stringMatching(/^old\/b\.policy\.hcl is in a subfolder: .* not evaluated/)]);
  });
});

describe("Terraform policy block addresses", () => {
  const block = (type: string, name: string, level: string) =>
    `resource_policy "${type}" "${name}" {\n  enforcement_level = "${level}"\n  enforce {\n    condition = true\n  }\n}\n`;

  it("keeps blocks whose labels hold dots apart: no two blocks share an address", async () => {
    const folder = await readTfPolicyFolder(
      folderOf({ "a.policy.hcl": block("a.b", "c", "mandatory") + block("a", "b.c", "advisory") }),
    );
    expect(folder.problems).toEqual([]);
    expect(folder.blocks.map((entry) => [entry.address, entry.level])).toEqual([
      ['resource_policy."a.b".c', "mandatory"],
      ['resource_policy.a."b.c"', "advisory"],
    ]);
  });

  it("refuses a block declared twice in one file, as the service reads one of each", async () => {
    const folder = await readTfPolicyFolder(
      folderOf({ "a.policy.hcl": block("aws_s3_bucket", "x", "mandatory") + block("aws_s3_bucket", "x", "advisory") }),
    );
    expect(folder.problems).toEqual([
      expect.stringMatching(/^a\.policy\.hcl:\d+: resource_policy "aws_s3_bucket" "x": declared twice in this file/),
    ]);
  });
});
