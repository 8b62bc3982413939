import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join, relative } from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { TfeClient } from "../../src/client";
import { readPolicyFolder } from "../../src/policy-code/folder";
import type { Policy } from "../../src/resources/policy";
import { PolicyFolder, type PolicyFolderArgs } from "../../src/resources/policy-folder";
import { providers } from "../../src/resources/providers";
import type { RunningServer } from "../../src/server";
import { startSeededServer } from "../seeded-server";

// Every fixture folder under test/fixtures/policy-folders through PolicyFolder, as a program declares it: the real
// HCL parser, the real opa binary, and each Policy child created by the real Policy provider on the local server
// over HTTP. Pulumi's mocks stand in for the engine only (test/e2e/policy-folders.test.ts runs the real one).
// A folder either loads, creating exactly its policies, or fails with the message and 0 mutating requests.

const organization = "acme";
const token = "policy-folder-token";
const policySetId = "polset-folderTests01";
const opaPolicySetId = "polset-folderTestsOpa1";
/** The seeded set of the folder's kind: a set holds policies of one kind. */
const fixturePath = (name: string) => relative(process.cwd(), join(fixtures, name));
const setFor = (folder: string) => (folder.startsWith("opa") ? opaPolicySetId : policySetId);
const fixtures = join(__dirname, "..", "fixtures", "policy-folders");

let server: RunningServer;
let client: TfeClient;

/** PolicyFolder with its outcome observable: the children it declared, or the error that failed the program. */
class ObservedFolder extends PolicyFolder {
  outcome(): Promise<Record<string, Policy>> {
    return this.getData();
  }
}

const mutatingRequests = () => server.requestLog.entries().filter((entry) => entry.method !== "GET");

beforeAll(async () => {
  server = await startSeededServer({ organization, token, policySetId, opaPolicySetId });
  client = new TfeClient({ address: server.url, token, rateLimit: false });
  providers.Policy.context.useClient(client);
  pulumi.runtime.setMocks(
    {
      // The engine's part for a dynamic resource: check, then create, with the provider the resource names.
      newResource: async (args) => {
        if (!args.type.startsWith("pulumi-nodejs:dynamic")) return { id: `${args.name}-component`, state: {} };
        const provider = providers[args.type.slice("pulumi-nodejs:dynamic/tfe:".length) as keyof typeof providers];
        const { __provider: _serialized, ...news } = args.inputs;
        const checked = await provider.check!({}, news);
        if (checked.failures?.length) throw new Error(`check failed: ${JSON.stringify(checked.failures)}`);
        const created = await provider.create?.(checked.inputs);
        return { id: created?.id as string, state: created?.outs };
      },
      call: () => ({}),
    },
    "project",
    "stack",
    false,
  );
});

afterAll(async () => {
  await client.close();
  await server.close();
});

type Outcome = { loaded: Record<string, Policy> } | { error: Error };

async function declare(name: string, args: Omit<PolicyFolderArgs, "directory"> = {}): Promise<Outcome> {
  const folder = new ObservedFolder(name, {
    directory: relative(process.cwd(), join(fixtures, name)),
    organization,
    policySetIds: [setFor(name)],
    ...args,
  });
  const outcome = await folder.outcome().then(
    (loaded) => ({ loaded }),
    (error: Error) => ({ error }),
  );
  if ("loaded" in outcome) {
    await Promise.all(
      Object.values(outcome.loaded).map((policy) => new Promise((resolve) => policy.policyId.apply(resolve))),
    );
  }
  return outcome;
}

async function policiesOnServer() {
  const all = [];
  for await (const policy of client.policies.listAll(organization)) all.push(policy);
  return all.sort((a, b) => a.name.localeCompare(b.name));
}

interface Expectation {
  args?: Omit<PolicyFolderArgs, "directory">;
  /** The policies the folder declares: name, kind, level, query, and the code's file under the fixtures. */
  loads?: { name: string; level: string; file: string; query?: string }[];
  /** Fragments the failure message holds: the block, the file and line, and the fix. */
  fails?: string[];
}

const expectations: Record<string, Expectation> = {
  "sentinel-defaults": {
    loads: [
      { name: "limit-instance-size", level: "hard-mandatory", file: "sentinel-defaults/limit-instance-size.sentinel" },
      {
        name: "no-destroy-on-friday",
        level: "soft-mandatory",
        file: "sentinel-defaults/calendar/no-destroy-on-friday.sentinel",
      },
      { name: "require-owner-tag", level: "advisory", file: "sentinel-defaults/require-owner-tag.sentinel" },
    ],
  },
  "sentinel-outside-paths": {
    loads: [{ name: "require-cost-center", level: "advisory", file: "shared/require-cost-center.sentinel" }],
  },
  "sentinel-cli-blocks": {
    loads: [
      {
        name: "deny-everything-on-sunday",
        level: "advisory",
        file: "sentinel-cli-blocks/deny-everything-on-sunday.sentinel",
      },
    ],
  },
  "sentinel-skip-blocks": {
    args: { skipBlocks: ['module "naming"', "sentinel"] },
    loads: [
      {
        name: "require-encrypted-volumes",
        level: "soft-mandatory",
        file: "sentinel-skip-blocks/require-encrypted-volumes.sentinel",
      },
    ],
  },
  "sentinel-label-override": {
    args: { overrides: { "storage.require-versioning": { name: "storage-require-versioning" } } },
    loads: [
      {
        name: "storage-require-versioning",
        level: "advisory",
        file: "sentinel-label-override/require-versioning.sentinel",
      },
    ],
  },
  "sentinel-remote-sources": {
    fails: [
      'sentinel.hcl:2: policy "from-a-website": source https://policies.example.com/acme/require-tags.sentinel is remote',
      'sentinel.hcl:6: policy "from-go-getter": source http::https://',
      'sentinel.hcl:11: policy "from-a-registry": source https://registry.example.com/',
      "download the file into the folder and set source to its path",
      "or declare the folder as a PolicySet",
    ],
  },
  "sentinel-modules": {
    fails: [
      `or declare the folder as a PolicySet ({ directory: "${fixturePath("sentinel-modules")}" })`,

      'sentinel.hcl:1: module "plan-helpers": the policies API holds one file per policy and no modules',
      'sentinel.hcl:5: import "module" "tag-helpers"',
      'require-tags-everywhere.sentinel:1 imports "plan-helpers", which sentinel.hcl declares as module "plan-helpers"',
    ],
  },
  "sentinel-static-param": {
    fails: [
      "or declare the folder as a PolicySet",

      'sentinel.hcl:1: import "static" "approved-regions": the policies API takes no data files',
      'sentinel.hcl:6: param "max_instances": the policies API takes no parameter values',
      'sentinel.hcl:11: policy "limit-instance-count": params is not supported',
    ],
  },
  "sentinel-labels": {
    fails: [
      "or declare the folder as a PolicySet",

      'policy "network.deny-open-ssh": "network.deny-open-ssh" is not a valid policy name',
      'overrides: { "network.deny-open-ssh": { name: "network-deny-open-ssh" } }',
      'sentinel.hcl:5: policy "storage/require-encryption"',
    ],
  },
  "sentinel-missing-file": {
    fails: [
      'sentinel.hcl:2: policy "named-but-absent": ./policies/named-but-absent.sentinel does not exist',
      'sentinel.hcl:6: policy "defaulted-but-absent": ./defaulted-but-absent.sentinel does not exist',
    ],
  },
  "sentinel-code-checks": {
    fails: [
      'policy "forgot-main": forgot-main.sentinel defines no main rule',
      'policy "saved-as-latin-1": saved-as-latin-1.sentinel is not valid UTF-8',
    ],
  },
  "sentinel-bad-hcl": { fails: ["sentinel.hcl:1,19-20: Unclosed configuration block"] },
  "sentinel-syntax-error": {
    fails: [
      'sentinel.hcl:1: policy "require-owner-tag": require-owner-tag.sentinel:6:1: syntax error: expected "}" to close the rule opened at 4:13 (a rule holds one expression), found end of file',
    ],
  },
  "sentinel-bad-level": {
    fails: ['sentinel.hcl:2: policy "uses-an-opa-level": enforcement level "mandatory" is not one of sentinel\'s'],
  },
  "opa-v1": {
    args: { regoVersion: "v1" },
    loads: [
      {
        name: "deny-public-ingress",
        level: "mandatory",
        file: "opa-v1/network/deny_public_ingress.rego",
        query: "data.terraform.policies.deny_public_ingress.deny",
      },
      {
        name: "limit-regions",
        level: "advisory",
        file: "opa-v1/placement/limit_regions.rego",
        query: "data.acme.placement.limit_regions.violations",
      },
      {
        name: "require-owner-tag",
        level: "advisory",
        file: "opa-v1/tags/require_owner_tag.rego",
        query: "data.terraform.policies.require_owner_tag.deny",
      },
    ],
  },
  "opa-v0": {
    loads: [
      {
        name: "deny-unencrypted-buckets",
        level: "advisory",
        file: "opa-v0/policies/deny_unencrypted_buckets.rego",
        query: "data.terraform.policies.deny_unencrypted_buckets.deny",
      },
      {
        name: "no-friday-applies",
        level: "mandatory",
        file: "opa-v0/policies/no_friday_applies.rego",
        query: "data.terraform.policies.no_friday_applies.deny",
      },
    ],
  },
  "opa-wrong-query": {
    args: { regoVersion: "v1" },
    fails: [
      'policies.hcl:2: policy "typo-in-rule": query data.terraform.policies.block_deletes.denied: block_deletes.rego',
      'defines no rule "denied"; its rules: deny',
      'policies.hcl:6: policy "no-data-prefix": query "terraform.policies.block_deletes.deny" is not a reference',
      "did you mean data.terraform.policies.block_deletes.deny?",
    ],
  },
  "opa-syntax-error": {
    args: { regoVersion: "v1" },
    fails: [
      'policies.hcl:1: policy "limit-volume-size": limit_volume_size.rego:7: rego_parse_error: unexpected } token',
    ],
  },
  "opa-cross-file": {
    args: { regoVersion: "v1" },
    fails: [
      'policy "require-backup-tag": require_backup_tag.rego uses lib/plan.rego (data.lib.plan)',
      "or declare the folder as a PolicySet",
    ],
  },
  "opa-split-package": {
    fails: [
      "package data.terraform.policies.databases is split over databases_public.rego, databases_size.rego",
      "or declare the folder as a PolicySet",
    ],
  },
  "opa-unknown-package": {
    fails: [
      "query data.terraform.policies.not_written_yet.deny names no package",
      "(they define data.terraform.policies.present)",
    ],
  },
  "opa-other-blocks": { fails: ['policies.hcl:5: module "helpers": not a block of policies.hcl'] },
  "both-kinds": { fails: ["both sentinel.hcl and policies.hcl are here"] },
  "json-form": { fails: ["policies.json (the JSON form) is not read, write it as policies.hcl"] },
  "terraform-policy": {
    fails: ["its .policy.hcl files are Terraform policy, which has no individual policies; declare a PolicySet"],
  },
};

describe("every fixture folder loads or fails clearly, failures before any request", () => {
  const table: string[] = [];

  afterAll(() => {
    console.log(`\nfixture folder -> outcome (mutating requests)\n${table.join("\n")}\n`);
  });

  for (const [fixture, expected] of Object.entries(expectations)) {
    it(fixture, async () => {
      const before = mutatingRequests().length;
      const outcome = await declare(fixture, expected.args);
      const sent = mutatingRequests().slice(before);

      if (expected.fails) {
        const message = "error" in outcome ? outcome.error.message : "(it loaded)";
        table.push(`${fixture.padEnd(24)} clear failure (${sent.length})  ${message.split("\n")[1]?.trim()}`);
        for (const fragment of expected.fails) expect(message).toContain(fragment);
        // The pointer to PolicySet comes where an uploaded folder would carry what the policies API cannot, only.
        const versionedOnly = expected.fails.some((fragment) => fragment.includes("as a PolicySet"));
        if (!versionedOnly) expect(message).not.toContain("as a PolicySet");
        expect(sent).toEqual([]);
        return;
      }
      if ("error" in outcome) throw outcome.error;
      const onServer = await policiesOnServer();
      table.push(`${fixture.padEnd(24)} loaded ${onServer.length} policies (${sent.length})`);
      const expectedPolicies = expected.loads ?? [];
      expect(
        onServer.map(({ name, kind, enforcementLevel, query }) => ({ name, kind, enforcementLevel, query })),
      ).toEqual(
        expectedPolicies.map(({ name, level, query }) => ({
          name,
          kind: fixture.startsWith("opa") ? "opa" : "sentinel",
          enforcementLevel: level,
          query: query ?? null,
        })),
      );
      for (const { name, file } of expectedPolicies) {
        const policy = onServer.find((candidate) => candidate.name === name);
        const code = await client.policies.download(policy?.id as string);
        expect(code.toString("utf8"), `${name}'s code`).toBe(readFileSync(join(fixtures, file), "utf8"));
        expect((await client.policies.read(policy?.id as string)).policySetIds).toEqual([setFor(fixture)]);
      }
      // One create and one upload per policy, nothing else.
      expect(sent.map((entry) => entry.method).sort()).toEqual(
        [...expectedPolicies.map(() => "POST"), ...expectedPolicies.map(() => "PUT")].sort(),
      );
      for (const policy of onServer) await client.policies.delete(policy.id);
    });
  }
});

describe("the folder's own test cases, run while the program runs", () => {
  it("a failing case is a warning naming the case and the rule, and the folder loads", async () => {
    const warn = vi.spyOn(pulumi.log, "warn");
    try {
      const outcome = await declare("sentinel-tests");
      if ("error" in outcome) throw outcome.error;
      expect(warn.mock.calls.map((call) => call[0])).toContainEqual(
        expect.stringMatching(
          /sentinel-tests: 1 of the folder's 2 test cases fail: test\/require-owner-tag\/untagged-wrongly-expected\.hcl \(require-owner-tag\.sentinel\): rule main is false, expected true \(tfe-governance test .*sentinel-tests runs them; set tfe:requirePolicyTests true/,
        ),
      );
    } finally {
      warn.mockRestore();
      for (const policy of await policiesOnServer()) await client.policies.delete(policy.id);
    }
  });

  it("with TFE_REQUIRE_POLICY_TESTS, the failing case refuses the folder before any request", async () => {
    vi.stubEnv("TFE_REQUIRE_POLICY_TESTS", "true");
    const before = mutatingRequests().length;
    try {
      const outcome = await declare("sentinel-tests");
      expect("error" in outcome && outcome.error.message).toMatch(
        /untagged-wrongly-expected\.hcl \(require-owner-tag\.sentinel\): rule main is false, expected true\. tfe:requirePolicyTests \(or TFE_REQUIRE_POLICY_TESTS\) refuses a folder whose tests fail/,
      );
      expect(mutatingRequests().slice(before)).toEqual([]);
    } finally {
      vi.unstubAllEnvs();
    }
  });
});

describe("Rego version and the opa binary", () => {
  it("checks Rego as the service's latest runtime reads it (v0) by default, naming both fixes for a v1 file", async () => {
    const outcome = await declare("opa-v1");
    const message = "error" in outcome ? outcome.error.message : "";
    expect(message).toMatch(/network\/deny_public_ingress\.rego:4: rego_parse_error: unexpected identifier token/);
    expect(message).toMatch(
      /network\/deny_public_ingress\.rego:4: written as Rego v1 \(if, contains\), which regoVersion "v0" \(sets on OPA latest, which the service runs as 0\.61\.x, or on any 0\.x\) does not read: add "import rego\.v1" to the file .*or set regoVersion: "v1" for sets pinned to an OPA 1\.x runtime/,
    );
  });

  it("checks the v0 folder as v1 when asked to, naming both fixes", async () => {
    const outcome = await declare("opa-v0", { regoVersion: "v1" });
    const message = "error" in outcome ? outcome.error.message : "";
    expect(message).toContain(
      "policies/no_friday_applies.rego:5: rego_parse_error: `if` keyword is required before rule body",
    );
    expect(message).toMatch(
      /no_friday_applies\.rego:5: written as Rego v0, which regoVersion "v1" \(sets pinned to an OPA 1\.x runtime\) does not read: write it as Rego v1 .*or set regoVersion: "v0" for sets on latest or 0\.x/,
    );
  });

  it("fails clearly when the configured opa binary cannot be run", async () => {
    await expect(readPolicyFolder(join(fixtures, "opa-v1"), { opaPath: "/nonexistent/opa" })).rejects.toThrow(
      "opaPath /nonexistent/opa cannot be run: give the path of an opa binary",
    );
  });

  it("without opa on PATH, loads without checking Rego and warns once", async () => {
    const path = process.env.PATH ?? "";
    const warnings: string[] = [];
    const spies = (["log", "warn", "error"] as const).map((method) =>
      vi.spyOn(console, method).mockImplementation((...args: unknown[]) => void warnings.push(args.join(" "))),
    );
    process.env.PATH = path
      .split(delimiter)
      .filter((dir) => !existsSync(join(dir, "opa")))
      .join(delimiter);
    try {
      // The syntax error goes unnoticed without opa: that is what the warning is for.
      const unchecked = await readPolicyFolder(join(fixtures, "opa-syntax-error"));
      expect(unchecked.regoChecked).toBe(false);
      expect(unchecked.policies.map((policy) => policy.name)).toEqual(["limit-volume-size"]);

      const first = await declare("opa-v1", { regoVersion: "v1" });
      const second = await declare("opa-v0");
      expect("loaded" in first && "loaded" in second).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 50));
      // Once from the program (PolicyFolder, on the folder) and once from the provider (its policies' checks).
      const said = warnings.filter((line) => line.includes("Rego was not checked: no opa binary on PATH"));
      expect(said.filter((line) => line.includes("set opaPath"))).toHaveLength(1);
      expect(said.filter((line) => !line.includes("set opaPath"))).toHaveLength(1);
    } finally {
      process.env.PATH = path;
      for (const spy of spies) spy.mockRestore();
      for (const policy of await policiesOnServer()) await client.policies.delete(policy.id);
    }
  });
});

describe("sentinel fmt -check, where a sentinel binary is on PATH", () => {
  // The Sentinel CLI is proprietary and not installed here: a stand-in script plays its documented `fmt -check=true`
  // contract (prints the files that need formatting and exits non-zero; a parse error goes to stderr). What this
  // tests is PolicyFolder's side of that contract, not Sentinel.
  const standIn = [
    "#!/bin/sh",
    'for file in "$@"; do :; done',
    'if grep -q UNPARSABLE "$file"; then echo "$file:2:1: expected rule, found EOF" >&2; exit 1; fi',
    'if grep -q "main=" "$file"; then echo "$file"; exit 2; fi',
  ].join("\n");
  let bin: string;
  let folder: string;
  const path = process.env.PATH ?? "";

  beforeAll(() => {
    bin = mkdtempSync(join(tmpdir(), "sentinel-bin-"));
    writeFileSync(join(bin, "sentinel"), `${standIn}\n`, { mode: 0o755 });
    folder = mkdtempSync(join(tmpdir(), "sentinel-folder-"));
    writeFileSync(join(folder, "sentinel.hcl"), 'policy "tidy" {}\npolicy "cramped" {}\n');
    writeFileSync(join(folder, "tidy.sentinel"), "main = rule { true }\n");
    writeFileSync(join(folder, "cramped.sentinel"), "main= rule { true }\n");
    process.env.PATH = `${bin}${delimiter}${path}`;
  });

  afterAll(() => {
    process.env.PATH = path;
    for (const directory of [bin, folder]) rmSync(directory, { recursive: true, force: true });
  });

  it("warns about a file the formatter would rewrite, and loads the folder", async () => {
    const contents = await readPolicyFolder(folder);
    expect(contents.policies.map((policy) => policy.name)).toEqual(["tidy", "cramped"]);
    expect(contents.warnings).toEqual(["cramped.sentinel is not formatted as sentinel fmt writes it"]);
  });

  it("fails a file the formatter cannot parse, in its words", async () => {
    writeFileSync(join(folder, "cramped.sentinel"), "main = rule { true }\n# UNPARSABLE\nmain = rule {\n");
    await expect(readPolicyFolder(folder)).rejects.toThrow(
      /sentinel\.hcl:2: policy "cramped": sentinel fmt -check: .*cramped\.sentinel:2:1: expected rule, found EOF/,
    );
  });
});

describe("a policy's source that leaves the folder's repository", () => {
  it("fails before any request, naming the block and where it leads: /proc, another folder of the machine", async () => {
    const repository = mkdtempSync(join(tmpdir(), "folder-repository-"));
    try {
      mkdirSync(join(repository, ".git"));
      const folder = join(repository, "policies");
      mkdirSync(folder);
      const depth = folder.split("/").length;
      writeFileSync(join(repository, "shared.sentinel"), "main = rule { true }\n");
      for (const [source, leadsTo] of [
        [`${"../".repeat(depth)}proc/self/environ`, /leads to \/proc\/.*, which the kernel serves/],
        [`${"../".repeat(depth)}etc/hostname`, /leads to \/etc\/hostname, outside the repository/],
      ] as const) {
        writeFileSync(join(folder, "sentinel.hcl"), `policy "leak" {\n  source = "${source}"\n}\n`);
        await expect(readPolicyFolder(folder)).rejects.toThrow(
          new RegExp(`sentinel\\.hcl:2: policy "leak": ${source.replace(/\./g, "\\.")} ${leadsTo.source}`),
        );
      }
      // Inside the repository, outside the folder: a library's shared file is fine.
      writeFileSync(join(folder, "sentinel.hcl"), 'policy "shared" {\n  source = "../shared.sentinel"\n}\n');
      expect((await readPolicyFolder(folder)).policies.map((policy) => policy.name)).toEqual(["shared"]);
    } finally {
      rmSync(repository, { recursive: true, force: true });
    }
  });
});

describe("a policy's imports (review 53)", () => {
  it('refuses import "strngs" (a typo of strings), as PolicySet does, naming the file, the import and the fix', async () => {
    const folder = mkdtempSync(join(tmpdir(), "folder-imports-"));
    try {
      writeFileSync(
        join(folder, "sentinel.hcl"),
        'policy "a" {\n  source            = "./a.sentinel"\n  enforcement_level = "advisory"\n}\n',
      );
      writeFileSync(join(folder, "a.sentinel"), 'import "strngs"\n\nmain = rule { strngs.has_prefix("ab", "a") }\n');
      await expect(readPolicyFolder(folder)).rejects.toThrow(
        'sentinel.hcl:1: policy "a": a.sentinel:1 imports "strngs", which is no Sentinel import and which sentinel.hcl ' +
          "does not declare: add a module or import block for it, or fix the name",
      );
      writeFileSync(join(folder, "a.sentinel"), 'import "strings"\n\nmain = rule { strings.has_prefix("ab", "a") }\n');
      expect((await readPolicyFolder(folder)).policies.map((policy) => policy.name)).toEqual(["a"]);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
