import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { TfeClient } from "../../src/client";
import { collectFolder, packFiles } from "../../src/policy-code/archive";
import {
  hashParameterValue,
  type PolicySetInputs,
  type PolicySetOutputs,
  PolicySetProvider,
} from "../../src/resources/policy-set";
import { unknownValue } from "../../src/resources/provider-context";
import type { RunningServer } from "../../src/server";
import { startSeededServer } from "../seeded-server";

// The PolicySet provider's methods, called as the engine calls them, against the local server over HTTP.

const organization = "acme";
const token = "policy-set-provider-token";
const production = "ws-production0000001";
const staging = "ws-staging000000001";
const examples = join(__dirname, "..", "..", "examples", "quickstart", "policy-sets");
const work = mkdtempSync(join(tmpdir(), "policy-set-provider-"));

let server: RunningServer;
let client: TfeClient;
let provider: PolicySetProvider;

beforeAll(async () => {
  server = await startSeededServer({ organization, token, workspaceIds: [production, staging] });
  client = new TfeClient({ address: server.url, token, rateLimit: false, retry: { baseDelayMs: 5, maxDelayMs: 20 } });
});
afterAll(async () => {
  await client.close();
  await server.close();
  rmSync(work, { recursive: true, force: true });
});
beforeEach(() => {
  server.requestLog.clear();
  provider = new PolicySetProvider();
  provider.context.useClient(client);
});
afterEach(async () => {
  for await (const set of client.policySets.listAll(organization)) await client.policySets.delete(set.id);
});

/** A copy of an example folder to change freely. */
function folderCopy(example: string): string {
  const directory = mkdtempSync(join(work, `${example}-`));
  cpSync(join(examples, example), directory, { recursive: true });
  return directory;
}

function args(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { organization, name: "baseline", directory: join(examples, "sentinel-baseline"), ...overrides };
}

async function checked(overrides: Record<string, unknown> = {}, olds: Record<string, unknown> = {}) {
  const result = await provider.check(olds, args(overrides));
  expect(result.failures).toEqual([]);
  return result.inputs as PolicySetInputs;
}

async function reasons(overrides: Record<string, unknown>, olds: Record<string, unknown> = {}): Promise<string[]> {
  return ((await provider.check(olds, args(overrides))).failures ?? []).map(
    (failure) => `${failure.property}: ${failure.reason}`,
  );
}

describe("PolicySet check: the folder and the arguments at preview, before any request", () => {
  it("reads the example folders as versioned sets: kind from the folder, the hash of paths and bytes, each policy's level", async () => {
    const sentinel = await checked();
    expect(sentinel).toMatchObject({
      kind: "sentinel",
      global: false,
      agentEnabled: false,
      overridable: null,
      policyToolVersion: "latest",
      contentHash: collectFolder(join(examples, "sentinel-baseline")).contentHash,
      folderPolicies: { "limit-instance-count.sentinel": "soft-mandatory", "approved-regions": "hard-mandatory" },
    });
    const opa = await checked({ directory: join(examples, "opa-network") });
    expect(opa).toMatchObject({ kind: "opa", agentEnabled: true, overridable: false });
    expect(server.requestLog.entries()).toEqual([]);
  });

  it("hashes paths and bytes only: touching every file changes nothing; editing one byte does", async () => {
    const directory = folderCopy("sentinel-baseline");
    const before = (await checked({ directory })).contentHash;
    const later = new Date(Date.now() + 3_600_000);
    for (const file of collectFolder(directory).files.keys()) utimesSync(join(directory, file), later, later);
    expect((await checked({ directory })).contentHash).toBe(before);
    writeFileSync(join(directory, "modules", "tfplan-functions.sentinel"), "find_resources = func(t) { return [] }\n");
    expect((await checked({ directory })).contentHash).not.toBe(before);
  });

  it("packs what go-slug would: .terraformignore honoured, .git left out (node_modules in, as go-slug has it), links followed", async () => {
    const directory = folderCopy("sentinel-baseline");
    const outside = mkdtempSync(join(work, "shared-"));
    writeFileSync(join(outside, "common.sentinel"), "shared = true\n");
    symlinkSync(join(outside, "common.sentinel"), join(directory, "common.sentinel"));
    for (const [path, text] of [
      [".git/HEAD", "ref"],
      ["node_modules/x/index.js", "x"],
      ["notes/draft.md", "draft"],
      [".terraformignore", "notes/\n*.md\n!keep.md\n"],
      ["keep.md", "kept"],
    ] as const) {
      const full = join(directory, path);
      mkdirSync(dirname(full), { recursive: true });
      writeFileSync(full, text);
    }
    const files = [...collectFolder(directory).files.keys()].sort();
    expect(files).toContain("common.sentinel");
    expect(files).toContain("keep.md");
    expect(files).toContain(".terraformignore");
    expect(files.filter((file) => /^(\.git|notes)\//.test(file))).toEqual([]);
    expect(files).toContain("node_modules/x/index.js");
  });

  it("names the argument and the fix for every bad input", async () => {
    expect(await reasons({ directory: join(work, "nowhere") })).toEqual([
      expect.stringMatching(/^directory: directory .*nowhere: does not exist \(resolved to/),
    ]);
    const empty = mkdtempSync(join(work, "empty-"));
    expect(await reasons({ directory: empty })).toEqual([
      expect.stringMatching(/^directory: .*no sentinel\.hcl at the root of the folder/),
    ]);
    expect(await reasons({ kind: "opa" })).toEqual([
      expect.stringMatching(
        /no policies\.hcl .*it has sentinel\.hcl, the file of a Sentinel set: set kind to "sentinel"/,
      ),
    ]);
    expect(await reasons({ global: true, workspaceIds: [production] })).toEqual([
      expect.stringMatching(/^workspaceIds: workspaceIds cannot go with global: true/),
    ]);
    expect(await reasons({ policyIds: ["pol-abc123"] })).toEqual([
      expect.stringMatching(/^policyIds: a set holds either a folder \(directory\) or individual policies/),
    ]);
    expect(await reasons({ workspaceIds: ["production"] })).toEqual([
      expect.stringMatching(
        /^workspaceIds: workspaceIds\[0\] "production" is not a workspace id: .*a workspace's name is not its id/,
      ),
    ]);
    expect(await reasons({ directry: "x" })).toEqual([expect.stringMatching(/did you mean directory\?/)]);
    const broken = folderCopy("sentinel-baseline");
    rmSync(join(broken, "data", "approved.json"));
    expect(await reasons({ directory: broken })).toEqual([
      expect.stringMatching(
        /sentinel\.hcl:\d+: import "static" "approved": \.\/data\/approved\.json is not in the folder/,
      ),
    ]);
    expect(server.requestLog.entries()).toEqual([]);
  });

  it("checks Rego with opa in the dialect of the set's runtime: an OPA 0.x version means Rego v0", async () => {
    const directory = folderCopy("opa-network");
    const asV0 = await reasons({ directory, policyToolVersion: "0.61.0" });
    expect(asV0.length).toBeGreaterThan(0);
    for (const reason of asV0)
      expect(reason).toMatch(/^directory: .*rego_parse_error.*Rego v0 for policyToolVersion 0\.61\.0/);
    writeFileSync(
      join(directory, "network.rego"),
      "package terraform.network\n\ndeny[msg] { msg := input.x }\nwarn[msg] { msg := input.y }\n",
    );
    writeFileSync(join(directory, "lib", "helpers.rego"), "package terraform.lib\n\nchanged(t) = [t]\n");
    expect(await reasons({ directory, policyToolVersion: "0.61.0" })).toEqual([]);
    const asV1 = await reasons({ directory });
    expect(asV1.length).toBeGreaterThan(0);
    for (const reason of asV1) expect(reason).toMatch(/rego_parse_error.*Rego v1 for policyToolVersion latest/);
  });

  it("refuses a plain value for a parameter whose name says it is a credential", async () => {
    expect(await reasons({ parameters: { api_token: { value: "plain", sensitive: false } } })).toEqual([
      expect.stringMatching(/^parameters: parameters\.api_token names a credential, and its value is no secret/),
    ]);
    expect(await reasons({ parameters: { api_token: { value: "s", sensitive: true } } })).toEqual([]);
    expect(await reasons({ parameters: { max_instances: { value: "5", sensitive: false } } })).toEqual([]);
  });

  it("refuses every weakening at once, naming each, unless allowWeakening", async () => {
    const directory = folderCopy("sentinel-baseline");
    const olds = {
      ...(await checked({ directory, workspaceIds: [production, staging] })),
      policySetId: "polset-x",
    } as Record<string, unknown>;
    writeFileSync(
      join(directory, "sentinel.hcl"),
      'module "tfplan-functions" {\n  source = "./modules/tfplan-functions.sentinel"\n}\npolicy "limit-instance-count.sentinel" {\n  source = "./limit-instance-count.sentinel"\n  enforcement_level = "advisory"\n}\n',
    );
    const [failure, ...others] = await reasons(
      { directory, workspaceIds: [production], excludedWorkspaceIds: [staging] },
      olds,
    );
    expect(others).toEqual([]);
    expect(failure).toMatch(/^allowWeakening: policy set "baseline" is weakened: /);
    for (const part of [
      'policy "limit-instance-count.sentinel" goes from soft-mandatory to advisory',
      'policy "approved-regions" is removed from the folder',
      `workspaceIds loses ${staging}`,
      `excludedWorkspaceIds gains ${staging}`,
      "set allowWeakening: true on the resource",
    ]) {
      expect(failure).toContain(part);
    }
    expect(
      await reasons(
        { directory, workspaceIds: [production], excludedWorkspaceIds: [staging], allowWeakening: true },
        olds,
      ),
    ).toEqual([]);
    const global = { ...olds, global: true, workspaceIds: [] };
    expect(await reasons({ directory: join(examples, "sentinel-baseline") }, global)).toEqual([
      expect.stringContaining("global is turned off"),
    ]);
  });

  it("lets an unknown value through at preview", async () => {
    expect(await reasons({ workspaceIds: unknownValue, parameters: unknownValue })).toEqual([]);
  });
});

describe("PolicySet against the local server", () => {
  it("creates a versioned set scoped to a workspace, with parameters; a sensitive value never reaches the state", async () => {
    const inputs = await checked({
      workspaceIds: [production],
      parameters: { max_instances: { value: "5", sensitive: false }, api_token: { value: "s3cr3t", sensitive: true } },
    });
    const { id, outs } = await provider.create(inputs);
    const set = await client.policySets.read(id);
    expect(set).toMatchObject({ name: "baseline", workspaceIds: [production], versioned: true });
    expect(outs.currentVersionId).toBe(set.currentVersionId);
    expect(outs.parameters).toEqual({
      max_instances: { value: "5", sensitive: false },
      api_token: { value: hashParameterValue("s3cr3t"), sensitive: true },
    });
    expect(JSON.stringify(outs)).not.toContain("s3cr3t");
    expect((await client.policySets.listParameters(id)).map(({ key, value }) => [key, value])).toEqual([
      ["max_instances", "5"],
      ["api_token", ""],
    ]);
    const diff = await provider.diff(id, outs as PolicySetOutputs, inputs);
    expect(diff.changes).toBe(false);
  });

  it("uploads a new version only when the content changes, and changes scope and parameters in place", async () => {
    const directory = folderCopy("sentinel-baseline");
    const inputs = await checked({ directory, workspaceIds: [production] });
    const { id, outs } = await provider.create(inputs);
    const olds = outs as PolicySetOutputs;
    server.requestLog.clear();
    writeFileSync(join(directory, "modules", "tfplan-functions.sentinel"), "find_resources = func(t) { return [] }\n");
    const edited = await checked(
      {
        directory,
        workspaceIds: [production, staging],
        parameters: { max_instances: { value: "3", sensitive: false } },
      },
      olds as unknown as Record<string, unknown>,
    );
    expect((await provider.diff(id, olds, edited)).replaces).toEqual([]);
    const { outs: updated } = await provider.update(id, olds, edited);
    const writes = server.requestLog
      .entries()
      .filter((entry) => entry.method !== "GET")
      .map((entry) => `${entry.method} ${entry.route}`);
    expect(writes).toEqual([
      "POST /api/v2/policy-sets/:policySetId/versions",
      "PUT /policy-set-versions/:versionId/upload",
      "POST /api/v2/policy-sets/:policySetId/relationships/workspaces",
      "POST /api/v2/policy-sets/:policySetId/parameters",
    ]);
    expect(updated.currentVersionId).not.toBe(olds.currentVersionId);
    expect((await client.policySets.read(id)).currentVersionId).toBe(updated.currentVersionId);
  });

  it("fails up with the service's error-message for a folder it errors on, keeping the last ready version", async () => {
    const directory = folderCopy("sentinel-baseline");
    const inputs = await checked({ directory });
    const { id, outs } = await provider.create(inputs);
    // Passes preview (the folder is read before the edit), then the service reads a broken one.
    const next = { ...inputs, contentHash: "edited" };
    writeFileSync(join(directory, "sentinel.hcl"), 'policy "x" {\n  source = "./missing.sentinel"\n}\n');
    await expect(provider.update(id, outs as PolicySetOutputs, next)).rejects.toThrow(
      /could not read version polsetver-\w+ of .*: sentinel\.hcl:2: policy "x": \.\/missing\.sentinel is not in the folder: fix the path, or add the file\. The set keeps its last ready version/,
    );
    expect((await client.policySets.read(id)).currentVersionId).toBe(outs.currentVersionId);
  });

  it("deletes a set it just created when its first version errors, leaving nothing behind", async () => {
    const directory = folderCopy("sentinel-baseline");
    const inputs = await checked({ directory, name: "first-version-fails" });
    writeFileSync(join(directory, "sentinel.hcl"), 'policy "x" {\n  source = "./missing.sentinel"\n}\n');
    await expect(provider.create(inputs)).rejects.toThrow(/the policy set just created was deleted again/);
    const left = [];
    for await (const set of client.policySets.listAll(organization)) left.push(set.name);
    expect(left).toEqual([]);
  });

  it("refresh shows drift in scope, settings and parameters, and a version uploaded outside Pulumi", async () => {
    const inputs = await checked({
      workspaceIds: [production],
      parameters: { max_instances: { value: "5", sensitive: false } },
    });
    const { id, outs } = await provider.create(inputs);
    await client.policySets.update(id, { description: "edited by hand" });
    await client.policySets.addToScope(id, "workspaces", [staging]);
    const [parameter] = await client.policySets.listParameters(id);
    await client.policySets.updateParameter(id, parameter?.id as string, { value: "50" });
    const outside = await client.policySets.createVersion(id);
    await client.policySets.uploadVersion(outside, packFiles(collectFolder(join(examples, "sentinel-baseline")).files));
    for (
      let attempt = 0;
      (await client.policySets.readVersion(outside.id)).status !== "ready" && attempt < 100;
      attempt++
    ) {
      await new Promise((done) => setTimeout(done, 10));
    }
    const read = await provider.read(id, outs as PolicySetOutputs);
    expect(read.props).toMatchObject({
      description: "edited by hand",
      workspaceIds: [production, staging],
      parameters: { max_instances: { value: "50", sensitive: false } },
      contentHash: `changed outside Pulumi: current version ${outside.id}`,
    });
    const diff = await provider.diff(id, read.props as PolicySetOutputs, inputs);
    expect(diff.changes).toBe(true);
  });

  it("refuses a taken name unless adoptExisting, and adopts then without a duplicate", async () => {
    await client.policySets.create(organization, { name: "baseline", description: "made elsewhere" });
    const inputs = await checked();
    await expect(provider.create(inputs)).rejects.toThrow(/already exists .* set adoptExisting: true/);
    const adopted = await provider.create({ ...inputs, adoptExisting: true });
    const names = [];
    for await (const set of client.policySets.listAll(organization)) names.push(set.name);
    expect(names).toEqual(["baseline"]);
    expect((await client.policySets.read(adopted.id)).description).toBeNull();
  });

  it("delete removes the set; a set already gone is success", async () => {
    const { id } = await provider.create(await checked({ directory: join(examples, "opa-network"), name: "network" }));
    await provider.delete(id);
    await provider.delete(id);
    await expect(client.policySets.read(id)).rejects.toMatchObject({ status: 404 });
  });
});
