import { readdirSync, readFileSync, statSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TfeClient } from "../../src/client";
import type { RunningServer } from "../../src/server";
import { startSeededServer } from "../seeded-server";
import { changeSummary, PulumiProject } from "./pulumi-project";

// PolicyFolder under the real Pulumi engine against the local server: a folder the service would break on fails
// `pulumi preview` naming file and line, a change to one block touches one policy, and the examples program runs.

const token = "e2e-folder-token-0123456789";
const organization = "acme";
/** An OPA set: the folders this suite deploys into it are OPA folders, and a set holds one kind. */
const policySetId = "polset-e2eFolders001";
const repoRoot = join(__dirname, "..", "..");

/** Every file under a directory, keyed by its path relative to `base` (for PulumiProject's `files`). */
function filesUnder(directory: string, base: string, prefix = ""): Record<string, string> {
  const files: Record<string, string> = {};
  for (const name of readdirSync(directory)) {
    const path = join(directory, name);
    if (statSync(path).isDirectory()) Object.assign(files, filesUnder(path, base, prefix));
    else files[prefix + relative(base, path)] = readFileSync(path, "utf8");
  }
  return files;
}

/**
 * The "Resources:" counts `pulumi up` ends with: `+ 1 created`, `~ 1 updated`, `2 changes. 11 unchanged` gives
 * { created: 1, updated: 1, unchanged: 11 }.
 */
function resourceCounts(output: string): Record<string, number> {
  const section = output.slice(output.lastIndexOf("Resources:"));
  const counts: Record<string, number> = {};
  const summary = section.slice(0, section.search(/\n\s*\n|Duration:/));
  for (const [, count, what] of summary.matchAll(/(\d+) (\w+)/g)) {
    // "2 changes." only sums the kinds, when there are several.
    if (!what?.startsWith("change")) counts[what as string] = Number(count);
  }
  return counts;
}

async function serverPolicies(client: TfeClient) {
  const policies = [];
  for await (const policy of client.policies.listAll(organization)) policies.push(policy);
  return policies;
}

function regoPolicy(index: number): string {
  return `package terraform.policies.rule_${index}\n\ndeny contains "rule ${index} failed" if {\n\tsome change in input.plan.resource_changes\n\tchange.change.after.size > ${index * 10}\n}\n`;
}

function policiesHcl(levels: Record<number, string>): string {
  return Object.entries(levels)
    .map(
      ([index, level]) =>
        `policy "rule-${index}" {\n  query             = "data.terraform.policies.rule_${index}.deny"\n  enforcement_level = "${level}"\n}\n`,
    )
    .join("\n");
}

describe("PolicyFolder under the real engine", () => {
  let server: RunningServer;
  let client: TfeClient;
  let project: PulumiProject;

  const mutatingRequests = () => server.requestLog.entries().filter((entry) => entry.method !== "GET");
  const policyNames = async () => (await serverPolicies(client)).map((policy) => policy.name).sort();
  const writeFolder = async (files: Record<string, string>) => {
    await rm(join(project.dir, "folder"), { recursive: true, force: true });
    for (const [path, content] of Object.entries(files)) await project.writeFile(join("folder", path), content);
  };

  beforeAll(async () => {
    server = await startSeededServer({ organization, token, opaPolicySetId: policySetId });
    client = new TfeClient({ address: server.url, token, rateLimit: false });
    project = await PulumiProject.create({
      name: "tfe-governance-folder-e2e",
      files: {
        "index.js": [
          'const { PolicyFolder } = require("pulumi-tfe-governance");',
          `const folder = new PolicyFolder("checked", { directory: "folder", policySetIds: ["${policySetId}"], regoVersion: "v1" });`,
          "exports.policyIds = folder.policyIds;",
        ].join("\n"),
      },
      config: { "tfe:address": server.url, "tfe:organization": organization },
      secrets: { "tfe:token": token },
    });
  });

  afterAll(async () => {
    await project?.dispose();
    await client?.close();
    await server?.close();
  });

  it("fails preview on a query that names no rule, naming policies.hcl and the line", async () => {
    await writeFolder({
      "policies.hcl": 'policy "block-deletes" {\n  query = "data.terraform.policies.block_deletes.denied"\n}\n',
      "block_deletes.rego": readFileSync(
        join(repoRoot, "test/fixtures/policy-folders/opa-wrong-query/block_deletes.rego"),
        "utf8",
      ),
    });
    const before = mutatingRequests().length;
    const preview = await project.run(["preview"], { allowFailure: true });
    expect(preview.code).not.toBe(0);
    expect(preview.output).toContain(
      'policies.hcl:2: policy "block-deletes": query data.terraform.policies.block_deletes.denied: block_deletes.rego',
    );
    expect(preview.output).toContain('defines no rule "denied"; its rules: deny');
    const up = await project.run(["up", "--yes", "--skip-preview"], { allowFailure: true });
    expect(up.code).not.toBe(0);
    expect(mutatingRequests().slice(before)).toEqual([]);
  }, 120_000);

  it("fails preview on a Rego syntax error, naming the .rego file and line in OPA's words", async () => {
    await writeFolder(
      filesUnder(
        join(repoRoot, "test/fixtures/policy-folders/opa-syntax-error"),
        join(repoRoot, "test/fixtures/policy-folders/opa-syntax-error"),
      ),
    );
    const preview = await project.run(["preview"], { allowFailure: true });
    expect(preview.code).not.toBe(0);
    expect(preview.output).toContain(
      'policies.hcl:1: policy "limit-volume-size": limit_volume_size.rego:7: rego_parse_error: unexpected } token',
    );
    expect(await policyNames()).toEqual([]);
  }, 120_000);

  it("fails preview on a Sentinel syntax error, naming the file, line, column and what was expected, with no request", async () => {
    const fixture = join(repoRoot, "test/fixtures/policy-folders/sentinel-syntax-error");
    await writeFolder(filesUnder(fixture, fixture));
    server.requestLog.clear();
    const preview = await project.run(["preview"], { allowFailure: true });
    expect(preview.code).not.toBe(0);
    expect(preview.output).toContain(
      'sentinel.hcl:1: policy "require-owner-tag": require-owner-tag.sentinel:6:1: syntax error: expected "}" to close the rule opened at 4:13',
    );
    expect(server.requestLog.entries()).toEqual([]);
  }, 120_000);

  it("passes preview on a correct folder", async () => {
    const fixture = join(repoRoot, "test/fixtures/policy-folders/opa-v1");
    await writeFolder(filesUnder(fixture, fixture));
    const preview = await project.run(["preview", "--json"]);
    // The stack and the component exist already: the failed runs above registered them, and nothing else. The
    // three policies and the folder's manifest are new.
    expect(changeSummary(preview)).toEqual({ create: 4, same: 2 });
  }, 120_000);

  it("says at preview what it does not send: CLI-only blocks and other .hcl files", async () => {
    const fixture = join(repoRoot, "test/fixtures/policy-folders/sentinel-cli-blocks");
    await writeFolder(filesUnder(fixture, fixture));
    // The folder is Sentinel and the set it names holds OPA policies: the service would refuse each policy at up,
    // so preview does, after the folder's notes.
    const preview = await project.run(["preview"], { allowFailure: true });
    expect(preview.code).not.toBe(0);
    expect(preview.output).toMatch(
      new RegExp(`policy set ${policySetId} \\("opa-baseline"\\) holds opa policies, and this policy is sentinel`),
    );
    expect(preview.output).toContain('mock "time" is not sent: it configures the Sentinel CLI');
    expect(preview.output).toContain("test is not sent: it configures the Sentinel CLI");
    expect(preview.output).toContain("local-runs.hcl is not read: the service reads only sentinel.hcl");
  }, 120_000);

  it("changing, adding and removing one block of ten touches exactly that policy", async () => {
    const levels: Record<number, string> = {};
    const files: Record<string, string> = {};
    for (let index = 1; index <= 10; index++) {
      levels[index] = "advisory";
      files[`rules/rule_${index}.rego`] = regoPolicy(index);
    }
    await writeFolder({ ...files, "policies.hcl": policiesHcl(levels) });
    await project.up();
    expect(await policyNames()).toHaveLength(10);

    const step = async () => {
      const before = mutatingRequests().length;
      const run = await project.up();
      return {
        summary: resourceCounts(run.stdout),
        methods: mutatingRequests()
          .slice(before)
          .map((entry) => entry.method),
      };
    };

    await writeFolder({ ...files, "policies.hcl": policiesHcl({ ...levels, 7: "mandatory" }) });
    const changed = await step();
    // The policy, and the folder's manifest of levels.
    expect(changed.summary).toEqual({ updated: 2, unchanged: 11 });
    expect(changed.methods).toEqual(["PATCH"]);
    const rule7 = (await serverPolicies(client)).find((policy) => policy.name === "rule-7");
    expect(rule7?.enforcementLevel).toBe("mandatory");

    files["rules/rule_11.rego"] = regoPolicy(11);
    await writeFolder({ ...files, "policies.hcl": policiesHcl({ ...levels, 7: "mandatory", 11: "advisory" }) });
    const added = await step();
    expect(added.summary).toEqual({ created: 1, updated: 1, unchanged: 12 });
    expect(added.methods).toEqual(["POST", "PUT"]);

    const remaining: Record<number, string> = { ...levels, 7: "mandatory", 11: "advisory" };
    delete remaining[3];
    await writeFolder({ ...files, "policies.hcl": policiesHcl(remaining) });
    // Removing a policy weakens governance: preview fails, naming it, before any request, until it is allowed.
    const refused = await project.run(["preview"], { allowFailure: true });
    expect(refused.code).not.toBe(0);
    expect(refused.output).toMatch(
      /the policy folder's change weakens governance: policy "rule-3" \(advisory\) is removed/,
    );
    await project.run(["config", "set", "tfe:allowWeakening", "true"]);
    const removed = await step();
    await project.run(["config", "rm", "tfe:allowWeakening"]);
    expect(removed.summary).toEqual({ deleted: 1, updated: 1, unchanged: 12 });
    expect(removed.methods).toEqual(["DELETE"]);
    expect(await policyNames()).not.toContain("rule-3");
    expect(await policyNames()).toHaveLength(10);
  }, 300_000);

  it("refuses removing a block labelled __proto__, a label the engine's wire would drop as a key", async () => {
    const block = (label: string, index: number) =>
      `policy "${label}" {\n  query             = "data.terraform.policies.rule_${index}.deny"\n  enforcement_level = "mandatory"\n}\n`;
    const files = { "rules/rule_1.rego": regoPolicy(1), "rules/rule_2.rego": regoPolicy(2) };
    await writeFolder({ ...files, "policies.hcl": block("__proto__", 1) + block("constructor", 2) });
    await project.run(["config", "set", "tfe:allowWeakening", "true"]);
    await project.up();
    await project.run(["config", "rm", "tfe:allowWeakening"]);
    expect(await policyNames()).toEqual(["__proto__", "constructor"]);
    await writeFolder({ ...files, "policies.hcl": block("constructor", 2) });
    const before = mutatingRequests().length;
    const refused = await project.run(["preview"], { allowFailure: true });
    expect(refused.code).not.toBe(0);
    expect(refused.output).toContain('policy "__proto__" (mandatory) is removed');
    expect(mutatingRequests().slice(before)).toEqual([]);
  }, 300_000);
});

describe("examples/policy-folders under the real engine", () => {
  let server: RunningServer;
  let client: TfeClient;
  let project: PulumiProject;

  beforeAll(async () => {
    server = await startSeededServer({ organization, token });
    client = new TfeClient({ address: server.url, token, rateLimit: false });
    // As the quickstart runs its TypeScript program: transpiled only (the typecheck is npm test's own step).
    process.env.PULUMI_NODEJS_TRANSPILE_ONLY = "true";
    const example = join(repoRoot, "examples", "policy-folders");
    project = await PulumiProject.create({
      name: "tfe-governance-policy-folders",
      files: filesUnder(example, example),
      config: { "tfe:address": server.url },
      secrets: { "tfe:token": token },
    });
  });

  afterAll(async () => {
    await project?.dispose();
    await client?.close();
    await server?.close();
  });

  it("declares both folders' policies in two lines, then has nothing left to change", async () => {
    await project.up();
    const policies = await serverPolicies(client);
    expect(policies.map(({ name, kind, enforcementLevel }) => `${name} ${kind} ${enforcementLevel}`).sort()).toEqual([
      "deny-public-bucket-acls opa mandatory",
      "limit-instance-types sentinel hard-mandatory",
      "require-encrypted-volumes opa advisory",
      "require-owner-tag sentinel soft-mandatory",
    ]);
    const again = await project.run(["preview", "--expect-no-changes"], { allowFailure: true });
    expect(again.code, again.output).toBe(0);
  }, 300_000);
});
