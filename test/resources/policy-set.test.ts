import { execFileSync } from "node:child_process";
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { TfeClient } from "../../src/client";
import { collectFolder, packFiles } from "../../src/policy-code/archive";
import { isSecretEnvelope, withDerivedSecrets } from "../../src/resources/derived-secrets";
import { clearMembershipDeclarations } from "../../src/resources/memberships";
import { type PolicyInputs, type PolicyOutputs, PolicyProvider } from "../../src/resources/policy";
import {
  hashParameterValue,
  namesCredential,
  type PolicySetInputs,
  type PolicySetOutputs,
  PolicySetProvider,
} from "../../src/resources/policy-set";
import { checkVcs } from "../../src/resources/policy-set/arguments";
import { policySetProperties, policySetSecrets } from "../../src/resources/policy-set/properties";
import { shapeOf } from "../../src/resources/policy-set/requests";
import { unknownValue } from "../../src/resources/provider-context";
import { type FaultPlan, type RunningServer, startServer } from "../../src/server";
import { ingressRoute } from "../../src/server/faults";
import { startFaultServer } from "../client/helpers";
import { writeFiles } from "../policy-code/sentinel/folder-fixture";
import { startSeededServer } from "../seeded-server";
import { GitRepository, thirdGenerationLibrary } from "../vcs-repository";

// The PolicySet provider's methods, called as the engine calls them, against the local server over HTTP.

const organization = "acme";
const token = "policy-set-provider-token";
const production = "ws-production0000001";
const staging = "ws-staging000000001";
const examples = join(__dirname, "..", "..", "examples", "quickstart", "policy-sets");
// A repository, as a project is: a folder's links and sources may lead anywhere inside it (file-access.ts).
const work = mkdtempSync(join(tmpdir(), "policy-set-provider-"));
mkdirSync(join(work, ".git"));

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

/**
 * The guard's answer to a change from `olds` (an earlier up's state: its outputs) to these arguments: the refusal's
 * text, or undefined where the diff passes. The check must pass first, as the engine calls diff only then.
 */
async function refusal(
  overrides: Record<string, unknown>,
  olds: Record<string, unknown>,
  on: PolicySetProvider = provider,
): Promise<string | undefined> {
  const result = await on.check(olds, args(overrides));
  expect(result.failures).toEqual([]);
  return on
    .diff(String(olds.policySetId ?? "polset-x"), olds as unknown as PolicySetOutputs, result.inputs as PolicySetInputs)
    .then(
      () => undefined,
      (error: Error) => error.message,
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
    // Nothing but the one listing of set names that every create of the operation checks its name against.
    expect(server.requestLog.entries().map((entry) => `${entry.method} ${entry.route}`)).toEqual([
      "GET /api/v2/organizations/:organization/policy-sets",
    ]);
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
      ["vendored/.git/HEAD", "ref"],
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
    expect(files.filter((file) => /(^|\/)\.git\/|^notes\//.test(file))).toEqual([]);
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

  it("checks Rego in the dialect of the runtime the service runs: latest and 0.x read v0, a pinned 1.x v1", async () => {
    // The example carries import rego.v1: both runtimes read it.
    for (const policyToolVersion of ["latest", "0.61.0", "1.2.0"]) {
      expect(await reasons({ directory: join(examples, "opa-network"), policyToolVersion }), policyToolVersion).toEqual(
        [],
      );
    }
    // Rego v1 without the import: the service's latest (OPA 0.61.x) refuses it, a pinned 1.x reads it.
    const v1 = folderCopy("opa-network");
    for (const file of ["network.rego", join("lib", "helpers.rego")]) {
      writeFileSync(join(v1, file), readFileSync(join(v1, file), "utf8").replace("import rego.v1\n", ""));
    }
    const refused = (await reasons({ directory: v1 })).join("\n");
    expect(refused).toMatch(/rego_parse_error.*Rego v0 for policyToolVersion latest/);
    expect(refused).toMatch(
      /network\.rego:\d+: written as Rego v1 \(if, contains\), which policyToolVersion latest \(the service runs OPA 0\.61\.x for it\) does not read: add "import rego\.v1" to the file .*or pin policyToolVersion to a 1\.x runtime/,
    );
    expect(await reasons({ directory: v1, policyToolVersion: "1.2.0" })).toEqual([]);
    // Rego v0 (HashiCorp's OPA tutorial is written so): latest reads it, a pinned 1.x does not.
    const v0 = folderCopy("opa-network");
    writeFileSync(
      join(v0, "network.rego"),
      "package terraform.network\n\ndeny[msg] { msg := input.x }\nwarn[msg] { msg := input.y }\n",
    );
    writeFileSync(join(v0, "lib", "helpers.rego"), "package terraform.lib\n\nchanged(t) = [t]\n");
    expect(await reasons({ directory: v0 })).toEqual([]);
    const pinned = (await reasons({ directory: v0, policyToolVersion: "1.2.0" })).join("\n");
    expect(pinned).toMatch(
      /network\.rego:\d+: written as Rego v0, which policyToolVersion 1\.2\.0 \(an OPA 1\.x runtime\) does not read: write it as Rego v1 .*or pin policyToolVersion to a 0\.x runtime/,
    );
  });

  it("checks each OPA query against the rules the set's Rego defines, naming the closest", async () => {
    const directory = folderCopy("opa-network");
    const config = readFileSync(join(directory, "policies.hcl"), "utf8");
    writeFileSync(
      join(directory, "policies.hcl"),
      config.replace("data.terraform.network.deny", "data.terraform.networks.deny"),
    );
    expect(await reasons({ directory })).toEqual([
      expect.stringMatching(
        /^directory: .*policies\.hcl:\d+: policy "deny-public-ingress": query data\.terraform\.networks\.deny names no rule of the set's Rego: did you mean data\.terraform\.network\.deny\?/,
      ),
    ]);
  });

  it("says once what it could not check without opa, and fails instead when tfe:requireCodeChecks asks for every check", async () => {
    const path = process.env.PATH;
    process.env.PATH = "/nonexistent";
    try {
      const warned = await capturedStderr(() => reasons({ directory: join(examples, "opa-network") }));
      expect(warned.result).toEqual([]);
      process.env.TFE_REQUIRE_CODE_CHECKS = "true";
      expect(await reasons({ directory: join(examples, "opa-network") })).toEqual([
        expect.stringMatching(/Rego was not checked: no opa binary on PATH, and tfe:requireCodeChecks .* install OPA/),
      ]);
    } finally {
      process.env.PATH = path;
      delete process.env.TFE_REQUIRE_CODE_CHECKS;
    }
  });

  it("refuses a plain value for a parameter whose name says it is a credential", async () => {
    const refused = await provider.check(
      {},
      args({ parameters: { api_token: { value: "pl41n-v4lue", sensitive: false } } }),
    );
    // Reported on no property: Pulumi prints the value of a property a failure names, and this one is a secret.
    expect(refused.failures).toEqual([
      {
        property: "",
        reason: expect.stringMatching(/^parameters\.api_token names a credential, and its value is no secret/),
      },
    ]);
    expect(JSON.stringify(refused.failures)).not.toContain("pl41n-v4lue");
    expect(await reasons({ parameters: { api_token: { value: "s", sensitive: true } } })).toEqual([]);
    for (const name of [
      "github_pat",
      "webhook_url",
      "auth",
      "slackWebhookUrl",
      "API-KEY",
      "db_password",
      "clientSecret",
    ]) {
      expect(namesCredential(name), name).toBe(true);
    }
    for (const name of ["max_instances", "max_tokens", "author", "token_limit_count", "keyboard", "monkey"]) {
      expect(namesCredential(name), name).toBe(name === "token_limit_count");
    }
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
    const failure = await refusal({ directory, workspaceIds: [production], excludedWorkspaceIds: [staging] }, olds);
    expect(failure).toMatch(/^policy set "baseline" weakens governance: /);
    for (const part of [
      'policy "limit-instance-count.sentinel" goes from soft-mandatory to advisory',
      'policy "approved-regions" (hard-mandatory) is removed',
      `workspaceIds loses ${staging}`,
      `excludedWorkspaceIds gains ${staging}`,
      "set allowWeakening: true on this resource",
      "TFE_ALLOW_WEAKENING=true for one run",
    ]) {
      expect(failure).toContain(part);
    }
    expect(
      await refusal(
        { directory, workspaceIds: [production], excludedWorkspaceIds: [staging], allowWeakening: true },
        olds,
      ),
    ).toBeUndefined();
    const global = { ...olds, global: true, workspaceIds: [] };
    expect(await refusal({ directory: join(examples, "sentinel-baseline") }, global)).toContain("global is turned off");
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
    writeFileSync(join(directory, "data", "approved.json"), '{ "regions": [] }\n');
    const next = await checked({ directory }, outs as unknown as Record<string, unknown>);
    // What the service refuses and no client can check (its runtime, its own limits).
    server.setFaults([{ route: ingressRoute, versionError: 'sentinel 0.40: import "static" is not enabled' }]);
    try {
      await expect(provider.update(id, outs as PolicySetOutputs, next)).rejects.toThrow(
        /could not read version polsetver-\w+ of .*: sentinel 0\.40: import "static" is not enabled\. The set keeps its last ready version/,
      );
    } finally {
      server.setFaults([]);
    }
    expect((await client.policySets.read(id)).currentVersionId).toBe(outs.currentVersionId);
  });

  it("uploads what its check read, however the folder changes before apply; a stale check fails naming the folder", async () => {
    const directory = folderCopy("sentinel-baseline");
    const inputs = await checked({ directory, name: "checked-then-changed" });
    writeFileSync(join(directory, "limit-instance-count.sentinel"), "main = rule { false }\n# changed after check\n");
    const { id } = await provider.create(inputs);
    expect((await client.policySets.read(id)).currentVersionId).not.toBeNull();
    // A provider that did not check this content (another process) reads the folder again, and refuses a change.
    const fresh = new PolicySetProvider();
    fresh.context.useClient(client);
    const stale = {
      ...(await checked({ directory, name: "checked-then-changed-2" })),
      contentHash: inputs.contentHash,
    };
    await expect(fresh.create(stale)).rejects.toThrow(/changed after preview checked it: run up again/);
  });

  it("deletes a set it just created when its first version errors, leaving nothing behind", async () => {
    const directory = folderCopy("sentinel-baseline");
    const inputs = await checked({ directory, name: "first-version-fails" });
    server.setFaults([{ route: ingressRoute, versionError: "the runtime refused it" }]);
    try {
      await expect(provider.create(inputs)).rejects.toThrow(/the policy set just created was deleted again/);
    } finally {
      server.setFaults([]);
    }
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
    // The state says what the service enforces now: a version nobody here can read, and a workspace more. Putting
    // the program's back cannot be compared, and narrows the scope: refused unless allowed.
    await expect(provider.diff(id, read.props as PolicySetOutputs, inputs)).rejects.toThrow(
      /what it enforces now cannot be read here \(version polsetver-\w+ was made outside Pulumi .*, so the new policies cannot be compared with it; workspaceIds loses ws-staging000000001/,
    );
    const diff = await provider.diff(id, read.props as PolicySetOutputs, { ...inputs, allowWeakening: true });
    expect(diff.changes).toBe(true);
  });

  it("fails preview for a taken name unless adoptExisting, and for adopting a set of the other kind", async () => {
    const theirs = await client.policySets.create(organization, { name: "baseline", kind: "opa" });
    expect(await reasons({})).toEqual([
      expect.stringMatching(
        new RegExp(
          `^name: a policy set named "baseline" already exists in organization "acme" \\(${theirs.id}\\).*aliases.*adoptExisting: true`,
        ),
      ),
    ]);
    expect(await reasons({ adoptExisting: true })).toEqual([
      `kind: cannot adopt policy set "baseline" (${theirs.id}): its kind is opa, and this resource declares kind sentinel`,
    ]);
    expect(await reasons({ adoptExisting: true, directory: join(examples, "opa-network") })).toEqual([]);
  });

  it("refuses a taken name unless adoptExisting, and adopts then without a duplicate", async () => {
    // A preview before someone took the name: up still refuses it.
    const inputs = await checked();
    await client.policySets.create(organization, { name: "baseline", description: "made elsewhere" });
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

describe("PolicySet: a library's set folder whose configuration reaches shared files outside it", () => {
  /** HashiCorp's third-generation layout: sets in subfolders, shared functions and imports two levels up. */
  function library(): string {
    const root = mkdtempSync(join(work, "library-"));
    // A library is a repository: its sets' sources may reach anything in it, and nothing outside it.
    execFileSync("git", ["init", "-q", root]);
    const write = (path: string, text: string) => {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), text);
    };
    write("common-functions/tfplan-functions/tfplan-functions.sentinel", "find_resources = func(t) { return [] }\n");
    write("imports/regions.json", '{ "allowed": ["eu-west-1"] }\n');
    write(
      "policies/aws/sentinel.hcl",
      'module "tfplan-functions" {\n  source = "../../common-functions/tfplan-functions/tfplan-functions.sentinel"\n}\n' +
        'import "static" "regions" {\n  source = "../../imports/regions.json"\n  format = "json"\n}\n' +
        'policy "restrict-ec2" {\n  source = "./restrict-ec2.sentinel"\n  enforcement_level = "hard-mandatory"\n}\n',
    );
    write(
      "policies/aws/restrict-ec2.sentinel",
      'import "tfplan-functions" as plan\nimport "regions"\nmain = rule { length(plan.find_resources("aws_instance")) >= 0 }\n',
    );
    return root;
  }

  it("brings the shared files in, names each at preview, and the service reads the upload as the repository", async () => {
    const root = library();
    const directory = join(root, "policies", "aws");
    const { result, stderr } = await capturedStderr(() => checked({ directory, name: "aws-library" }));
    expect(result.folderPolicies).toEqual({ "restrict-ec2": "hard-mandatory" });
    expect(stderr).toContain(
      "source ../../common-functions/tfplan-functions/tfplan-functions.sentinel is outside the folder; " +
        `${join(root, "common-functions", "tfplan-functions", "tfplan-functions.sentinel")} is uploaded as ` +
        "_outside/common-functions/tfplan-functions/tfplan-functions.sentinel",
    );
    expect(stderr).toContain("source ../../imports/regions.json is outside the folder");
    const { id } = await provider.create(result);
    const set = await client.policySets.read(id);
    expect((await client.policySets.readVersion(set.currentVersionId as string)).status).toBe("ready");
    // Editing a shared function is a change of the set's content: the next up uploads once.
    writeFileSync(
      join(root, "common-functions", "tfplan-functions", "tfplan-functions.sentinel"),
      "find_resources = func(t) { return [t] }\n",
    );
    const edited = await checked({ directory, name: "aws-library" }, result as unknown as Record<string, unknown>);
    expect(edited.contentHash).not.toBe(result.contentHash);
  });

  it("fails preview naming a shared file that is not there", async () => {
    const root = library();
    rmSync(join(root, "imports", "regions.json"));
    expect(await reasons({ directory: join(root, "policies", "aws") })).toEqual([
      expect.stringMatching(
        /sentinel\.hcl:5: import "static" "regions": \.\.\/\.\.\/imports\/regions\.json does not exist \(resolved to .*\): fix the path, or add the file/,
      ),
    ]);
  });

  it("fails preview for a source that leaves the repository: the machine's files, /proc, a link out", async () => {
    const root = library();
    const config = join(root, "policies", "aws", "sentinel.hcl");
    const original = readFileSync(config, "utf8");
    const outside = join(work, "outside-the-library.sentinel");
    writeFileSync(outside, "secret = 1\n");
    symlinkSync(outside, join(root, "imports", "linked-out.json"));
    const depth = root.split("/").length + 2;
    for (const [source, why] of [
      [`${"../".repeat(depth)}proc/self/environ`, /leads to \/proc\/.*, which the kernel serves/],
      [`${"../".repeat(depth)}etc/hostname`, /leads to \/etc\/hostname, outside the repository/],
      ["../../imports/linked-out.json", /leads to .*outside-the-library.* \(through a link\), outside the repository/],
    ] as const) {
      writeFileSync(config, original.replace("../../imports/regions.json", source));
      server.requestLog.clear();
      const failures = await reasons({ directory: join(root, "policies", "aws") });
      expect(failures, source).toEqual([
        expect.stringMatching(new RegExp(`sentinel\\.hcl:5: import "static" "regions": .*${why.source}`)),
      ]);
      expect(server.requestLog.entries()).toEqual([]);
    }
  });
});

describe("PolicySet read from version control", () => {
  const oauthTokenId = "ot-policyLibrary00001";
  let vcsServer: RunningServer;
  let vcsClient: TfeClient;
  let vcsProvider: PolicySetProvider;
  let library: GitRepository;

  beforeAll(async () => {
    library = GitRepository.create(thirdGenerationLibrary);
    vcsServer = await startServer({
      seed: {
        organizations: [{ name: organization, plus: true }],
        tokens: [{ token, organizations: [organization] }],
        vcsRepositories: [{ identifier: "acme/policy-library", path: library.path }],
        oauthTokens: [{ id: oauthTokenId, organization }],
      },
    });
    vcsClient = new TfeClient({ address: vcsServer.url, token, rateLimit: false });
    vcsProvider = new PolicySetProvider();
    vcsProvider.context.useClient(vcsClient);
  });
  afterAll(async () => {
    await vcsClient.close();
    await vcsServer.close();
    library.remove();
  });

  const vcsArgs = (overrides: Record<string, unknown> = {}) => ({
    organization,
    name: "aws-from-vcs",
    vcsRepo: { identifier: "acme/policy-library", branch: "main", oauthTokenId },
    policiesPath: "policies/aws",
    vcsCheckout: library.path,
    ...overrides,
  });
  const vcsChecked = async (overrides: Record<string, unknown> = {}, olds: Record<string, unknown> = {}) => {
    const result = await vcsProvider.check(olds, vcsArgs(overrides));
    return {
      inputs: result.inputs as PolicySetInputs,
      failures: (result.failures ?? []).map((f) => `${f.property}: ${f.reason}`),
    };
  };
  /** The guard's refusal of these arguments against `olds` (a state's outputs), or "" where it passes. */
  const vcsRefusal = async (overrides: Record<string, unknown>, olds: Record<string, unknown>) => {
    const { inputs, failures } = await vcsChecked(overrides, olds);
    expect(failures).toEqual([]);
    return vcsProvider.diff(String(olds.policySetId ?? "polset-x"), olds as unknown as PolicySetOutputs, inputs).then(
      () => "",
      (error: Error) => error.message,
    );
  };

  it("reads the policies path of the local checkout at preview, creates the set, and waits for its first version", async () => {
    const { inputs, failures } = await vcsChecked();
    expect(failures).toEqual([]);
    expect(inputs).toMatchObject({
      kind: "sentinel",
      contentHash: null,
      folderPolicies: { "restrict-ec2": "hard-mandatory" },
    });
    const { id, outs } = await vcsProvider.create(inputs);
    const set = await vcsClient.policySets.read(id);
    expect(set.vcs).toMatchObject({
      vcsRepo: { identifier: "acme/policy-library", oauthTokenId },
      policiesPath: "policies/aws",
    });
    expect((outs as PolicySetOutputs).currentVersionId).toBe(set.currentVersionId);
    expect((await vcsClient.policySets.readVersion(set.currentVersionId as string)).source).toBe("github");
    // A push makes a new version outside Pulumi, as it should: no drift.
    library.commit({ "README.md": "Edited.\n" }, "Docs");
    await fetch(`${vcsServer.url}/_local/vcs-push`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ identifier: "acme/policy-library" }),
    });
    const read = await vcsProvider.read(id, outs as PolicySetOutputs);
    expect((await vcsProvider.diff(id, read.props as PolicySetOutputs, inputs)).changes).toBe(false);
    // Another path is a change in place, and up waits for the version of it.
    const moved = await vcsChecked(
      { policiesPath: "policies/aws", vcsRepo: { identifier: "acme/policy-library", oauthTokenId } },
      inputs as unknown as Record<string, unknown>,
    );
    expect((await vcsProvider.diff(id, read.props as PolicySetOutputs, moved.inputs)).replaces).toEqual([]);
    await vcsProvider.delete(id);
  });

  it("parses the checkout's Sentinel files, a shared module outside the policies path too, naming a syntax error", async () => {
    const shared = join(library.path, "common-functions", "tfplan-functions", "tfplan-functions.sentinel");
    const held = readFileSync(shared, "utf8");
    writeFileSync(shared, "find_resources = func(t) { return [] \n");
    try {
      const { failures } = await vcsChecked();
      expect(failures).toEqual([
        `vcsCheckout: vcsCheckout ${library.path}: policies/aws/sentinel.hcl:1: module "tfplan-functions": ` +
          'common-functions/tfplan-functions/tfplan-functions.sentinel:2:1: syntax error: expected "}" to close the ' +
          "function's body opened at 1:26, found end of file",
      ]);
    } finally {
      writeFileSync(shared, held);
    }
  });

  it("refuses a branch or repository the checkout is not shown to be, and compares once it is", async () => {
    const { inputs } = await vcsChecked();
    library.git(["branch", "relaxed"]);
    // The set moves to another branch and keeps the checkout, still on main: what the service would read is not
    // what was checked.
    const otherBranch = await vcsRefusal(
      { vcsRepo: { identifier: "acme/policy-library", branch: "relaxed", oauthTokenId } },
      inputs as unknown as Record<string, unknown>,
    );
    expect(otherBranch).toContain("cannot be compared");
    expect(otherBranch).toContain("the service reads branch relaxed, and the checkout is on branch main");
    const otherRepository = await vcsRefusal(
      { vcsRepo: { identifier: "acme/other-library", branch: "main", oauthTokenId } },
      inputs as unknown as Record<string, unknown>,
    );
    expect(otherRepository).toContain("no remote of the checkout names acme/other-library");
    // With the checkout on that branch, the policies there are compared.
    library.git(["checkout", "--quiet", "relaxed"]);
    try {
      expect(
        await vcsRefusal(
          { vcsRepo: { identifier: "acme/policy-library", branch: "relaxed", oauthTokenId } },
          inputs as unknown as Record<string, unknown>,
        ),
      ).toBe("");
    } finally {
      library.git(["checkout", "--quiet", "main"]);
    }
  });

  it("compares the checkout's policies for weakening, and refuses what cannot go with version control", async () => {
    const { inputs } = await vcsChecked();
    library.commit(
      {
        "policies/aws/sentinel.hcl": thirdGenerationLibrary["policies/aws/sentinel.hcl"]!.replace(
          '"hard-mandatory"',
          '"advisory"',
        ),
      },
      "Soften",
    );
    expect(await vcsRefusal({}, inputs as unknown as Record<string, unknown>)).toContain(
      'policy "restrict-ec2" goes from hard-mandatory to advisory',
    );
    library.commit({ "policies/aws/sentinel.hcl": thirdGenerationLibrary["policies/aws/sentinel.hcl"]! }, "Restore");
    expect((await vcsChecked({ directory: "x" })).failures).toContainEqual(
      expect.stringMatching(/^vcsRepo: a set reads its versions from version control/),
    );
    expect((await vcsChecked({ vcsRepo: { identifier: "policy-library", oauthTokenId } })).failures).toContainEqual(
      expect.stringMatching(/identifier "policy-library" must name the repository as org\/repo/),
    );
    expect((await vcsChecked({ vcsRepo: { identifier: "acme/x" } })).failures).toContainEqual(
      expect.stringMatching(/needs exactly one of oauthTokenId/),
    );
    expect((await vcsProvider.check({}, { organization, name: "x", policiesPath: "p" })).failures).toContainEqual(
      expect.objectContaining({ property: "policiesPath", reason: expect.stringMatching(/goes with vcsRepo/) }),
    );
    // Removing vcsRepo sends nothing and the set keeps its last version: refused.
    expect(
      (await vcsProvider.check(inputs as unknown as Record<string, unknown>, { organization, name: "aws-from-vcs" }))
        .failures,
    ).toContainEqual(
      expect.objectContaining({
        property: "vcsRepo",
        reason: expect.stringMatching(/vcsRepo cannot be removed from a set that holds versions/),
      }),
    );
  });
  it("keeps what a set read from version control enforces through a refresh: a level lowered after it is refused", async () => {
    const { inputs } = await vcsChecked();
    const { id, outs } = await vcsProvider.create(inputs);
    expect((outs as PolicySetOutputs).folderPolicies).toEqual(inputs.folderPolicies);
    expect((outs as PolicySetOutputs).checkedCommit).toBe(library.head());
    // A refresh: the state's inputs are rebuilt from the outputs, and hold no baseline; the outputs keep it.
    const read = await vcsProvider.read(id, outs as PolicySetOutputs);
    expect(read.props).toMatchObject({ folderPolicies: inputs.folderPolicies });
    expect(read.inputs).not.toHaveProperty("folderPolicies");
    library.commit(
      {
        "policies/aws/sentinel.hcl": thirdGenerationLibrary["policies/aws/sentinel.hcl"]!.replace(
          '"hard-mandatory"',
          '"advisory"',
        ),
      },
      "Soften",
    );
    try {
      expect(await vcsRefusal({}, read.props as Record<string, unknown>)).toContain(
        'policy "restrict-ec2" goes from hard-mandatory to advisory',
      );
    } finally {
      library.commit({ "policies/aws/sentinel.hcl": thirdGenerationLibrary["policies/aws/sentinel.hcl"]! }, "Restore");
    }
    await vcsProvider.delete(id);
  });

  it("moved back from version control to a folder, uploads the folder once the set takes uploads again", async () => {
    const directory = join(examples, "sentinel-baseline");
    const folderArgs = { vcsRepo: undefined, policiesPath: undefined, vcsCheckout: undefined, directory };
    const { inputs } = await vcsChecked(folderArgs);
    const { id, outs } = await vcsProvider.create(inputs);
    const { inputs: fromVcs } = await vcsChecked({}, inputs as unknown as Record<string, unknown>);
    const allow = (checked: PolicySetInputs) => ({ ...checked, allowWeakening: true });
    const toVcs = (await vcsProvider.update(id, outs as PolicySetOutputs, allow(fromVcs))).outs as PolicySetOutputs;
    expect(toVcs.contentHash).toBeNull();
    const { inputs: back } = await vcsChecked(folderArgs, fromVcs as unknown as Record<string, unknown>);
    const diff = await vcsProvider.diff(id, toVcs, allow(back));
    expect(diff.changes).toBe(true);
    const backOuts = (await vcsProvider.update(id, toVcs, allow(back))).outs as PolicySetOutputs;
    // The set evaluates the uploaded folder again, not the repository's version it read last.
    const set = await vcsClient.policySets.read(id);
    expect(set.vcs).toBeNull();
    expect(set.currentVersionId).toBe(backOuts.currentVersionId);
    expect((await vcsClient.policySets.readVersion(set.currentVersionId as string)).source).toBe("tfe-api");
    await vcsProvider.delete(id);
  });

  it("warns at refresh when the service evaluates a commit other than the one the stack last checked", async () => {
    const { inputs } = await vcsChecked();
    const { id, outs } = await vcsProvider.create(inputs);
    library.commit({ "policies/aws/README.md": "Pushed.\n" }, "Push");
    // The VCS provider's webhook: the service reads the push into a version of its own.
    const pushed = await fetch(`${vcsServer.url}/_local/vcs-push`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ identifier: "acme/policy-library" }),
    });
    expect(pushed.status).toBe(200);
    for (let attempt = 0; attempt < 100; attempt++) {
      if ((await vcsClient.policySets.read(id)).currentVersionId !== (outs as PolicySetOutputs).currentVersionId) break;
      await new Promise((done) => setTimeout(done, 20));
    }
    const { stderr } = await capturedStderr(() => vcsProvider.read(id, outs as PolicySetOutputs));
    expect(stderr).toContain(
      `policy set "aws-from-vcs" now evaluates commit ${library.head()} of acme/policy-library, and this stack last checked commit ${(outs as PolicySetOutputs).checkedCommit}`,
    );
    await vcsProvider.delete(id);
  });

  it("says when the service read another commit than the one checked, and refuses the next change until that commit is", async () => {
    const { inputs } = await vcsChecked();
    const checked = inputs.checkedCommit as string;
    // A push between preview and apply: the set reads the branch's head, which nobody compared.
    const pushed = library.commit({ "policies/aws/README.md": "Pushed after the preview.\n" }, "Push");
    const { stderr, result } = await capturedStderr(() => vcsProvider.create(inputs));
    const { id, outs } = result as { id: string; outs: PolicySetOutputs };
    expect(stderr).toContain(
      `the service read commit ${pushed} of acme/policy-library, and this stack checked commit ${checked}`,
    );
    expect(outs.policiesUnknown).toContain(`the service read commit ${pushed}`);
    // A change with a checkout at another commit cannot be compared; with the checkout at the service's, it is.
    library.git(["checkout", "--quiet", checked]);
    try {
      const behind = await vcsRefusal({ global: false, workspaceIds: [] }, outs as unknown as Record<string, unknown>);
      expect(behind).toContain("cannot be compared");
    } finally {
      library.git(["checkout", "--quiet", "main"]);
    }
    expect(await vcsRefusal({ global: true }, outs as unknown as Record<string, unknown>)).toBe("");
    await vcsProvider.delete(id);
  });

  it("reads a Terraform policy set from version control: its policies path checked in the checkout, ingested ready", async () => {
    const example = join(examples, "terraform-policy");
    const files = Object.fromEntries(
      readdirSync(example).map((name) => [`policies/terraform/${name}`, readFileSync(join(example, name), "utf8")]),
    );
    library.commit(files, "Terraform policies");
    const tfArgs = { kind: "tfpolicy", name: "tf-from-vcs", policiesPath: "policies/terraform" };
    const { inputs, failures } = await vcsChecked(tfArgs);
    expect(failures).toEqual([]);
    expect(inputs.folderPolicies).toEqual({
      "resource_policy.aws_s3_bucket.require_owner_tag": "mandatory",
      "resource_policy.aws_s3_bucket_public_access_block.all_public_access_blocked": "mandatory_overridable",
    });
    const { id } = await vcsProvider.create(inputs);
    const set = await vcsClient.policySets.read(id);
    expect(set.kind).toBe("tfpolicy");
    expect((await vcsClient.policySets.readVersion(set.currentVersionId as string)).status).toBe("ready");

    // The checkout is what preview reads: a lowered level there is a weakening, a broken file names its line.
    const policyFile = files["policies/terraform/block-public-buckets.policy.hcl"] as string;
    library.commit(
      {
        "policies/terraform/block-public-buckets.policy.hcl": policyFile.replace(
          '"mandatory_overridable"',
          '"advisory"',
        ),
      },
      "Soften",
    );
    expect(await vcsRefusal(tfArgs, inputs as unknown as Record<string, unknown>)).toContain(
      'policy "resource_policy.aws_s3_bucket_public_access_block.all_public_access_blocked" goes from mandatory_overridable to advisory',
    );
    library.commit(
      {
        "policies/terraform/block-public-buckets.policy.hcl": policyFile.replace(
          "enforce {",
          "enforce {\n    condition =",
        ),
      },
      "Break",
    );
    expect((await vcsChecked(tfArgs)).failures.join("\n")).toMatch(
      /policies\/terraform\/block-public-buckets\.policy\.hcl:\d+/,
    );
    library.commit({ "policies/terraform/block-public-buckets.policy.hcl": policyFile }, "Restore");
    await vcsProvider.delete(id);
  });
});

describe("PolicySet: what a change may not do behind the user's back", () => {
  const sentinelOlds = async (overrides: Record<string, unknown> = {}) =>
    ({ ...(await checked(overrides)), policySetId: "polset-x" }) as Record<string, unknown>;

  it("refuses a kind change, which cannot be compared, listing the old set's policies and scope it loses", async () => {
    const olds = await sentinelOlds({ workspaceIds: [production, staging] });
    const failure = await refusal({ directory: join(examples, "opa-network"), workspaceIds: [production] }, olds);
    expect(failure).toMatch(
      /^policy set "baseline" weakens governance: kind goes from sentinel to opa, which replaces the policy set: policies of two kinds cannot be compared; /,
    );
    for (const part of [
      'policy "limit-instance-count.sentinel" (soft-mandatory) is removed',
      'policy "approved-regions" (hard-mandatory) is removed',
      `workspaceIds loses ${staging}`,
    ]) {
      expect(failure).toContain(part);
    }
    // Even one that keeps every label at a level as strong: two kinds' policies are different code.
    const opaOlds = { ...(await checked({ directory: folderCopy("opa-network") })), policySetId: "polset-y" };
    expect(await refusal({ directory: join(examples, "sentinel-baseline") }, opaOlds)).toMatch(
      /kind goes from opa to sentinel/,
    );
  });

  it("refuses directory moved to a repository without a checkout: what it reads then cannot be compared", async () => {
    const olds = await sentinelOlds();
    const vcsRepo = { identifier: "acme/policy-library", oauthTokenId: "ot-policyLibrary00001" };
    const failure = await refusal({ directory: undefined, vcsRepo, policiesPath: "policies/aws" }, olds);
    expect(failure).toMatch(
      /^policy set "baseline" cannot be compared with what is enforced now, so it counts as weakening governance: the new policies cannot be read here \(read from version control \(acme\/policy-library, policies path policies\/aws\) with no vcsCheckout to read it here\), so they cannot be compared with the 2 it enforces now\. /,
    );
    // A Sentinel folder to an OPA repository: a kind change too.
    const opa = await refusal({ directory: undefined, kind: "opa", vcsRepo, policiesPath: "policies/opa" }, olds);
    expect(opa).toMatch(/kind goes from sentinel to opa/);
  });

  it("says at preview when a replacement must delete the old set first, and how to avoid the window", async () => {
    const olds = (await checked()) as unknown as PolicySetOutputs;
    const news = await checked({ directory: join(examples, "opa-network") });
    const printed = await capturedStderr(() => provider.diff("polset-x", olds, { ...news, allowWeakening: true }));
    expect(printed.result).toMatchObject({ replaces: ["kind"], deleteBeforeReplace: true });
    expect(printed.stderr).toMatch(
      /policy set "baseline" is replaced \(kind changed\).*no set of that name enforces in between.*another name/,
    );
    const renamed = await capturedStderr(() =>
      provider.diff("polset-x", olds, { ...news, name: "baseline-opa", allowWeakening: true }),
    );
    expect(renamed.result).toMatchObject({ deleteBeforeReplace: false });
    expect(renamed.stderr).not.toContain("is replaced");
  });

  it("refuses removing directory from a set that holds versions, saying what to do instead", async () => {
    const olds = await sentinelOlds();
    expect(await reasons({ directory: undefined }, olds)).toEqual([
      expect.stringMatching(
        /^directory: directory cannot be removed from a set that holds versions: the service keeps evaluating its current version .*remove the PolicySet resource/,
      ),
    ]);
  });

  it("reports a folder that cannot be read as that alone, not as every policy removed", async () => {
    const olds = await sentinelOlds();
    const broken = folderCopy("sentinel-baseline");
    writeFileSync(join(broken, "sentinel.hcl"), 'policy "x" {\n  source = \n');
    const failures = await reasons({ directory: broken }, olds);
    expect(failures.length).toBeGreaterThan(0);
    expect(failures.join("\n")).not.toMatch(/removed from the folder|weakens/);
  });

  it("checks each workspace and project the change adds, once: a missing id fails preview naming it", async () => {
    server.requestLog.clear();
    expect(
      await reasons({ workspaceIds: [production, "ws-doesnotexist0001"], excludedProjectIds: ["prj-nope0000000001"] }),
    ).toEqual([
      expect.stringMatching(
        /^workspaceIds: workspaceIds: workspace ws-doesnotexist0001 does not exist in organization "acme", or this token cannot see it/,
      ),
      expect.stringMatching(/^excludedProjectIds: excludedProjectIds: project prj-nope0000000001 does not exist/),
    ]);
    expect(server.requestLog.entries().every((entry) => entry.method === "GET")).toBe(true);
    // Already in the scope: not read again.
    const olds = await sentinelOlds({ workspaceIds: [production] });
    server.requestLog.clear();
    await reasons({ workspaceIds: [production] }, olds);
    expect(server.requestLog.entries()).toEqual([]);
  });

  it("treats a label such as constructor like any other, and an unknown kind without reading the folder", async () => {
    const directory = folderCopy("sentinel-baseline");
    writeFileSync(join(directory, "constructor.sentinel"), "main = rule { true }\n");
    writeFileSync(
      join(directory, "sentinel.hcl"),
      'policy "constructor" {\n  source = "./constructor.sentinel"\n  enforcement_level = "hard-mandatory"\n}\n',
    );
    const inputs = await checked({ directory });
    expect(inputs.folderPolicies).toEqual({ constructor: "hard-mandatory" });
    expect(
      await refusal({ directory: join(examples, "sentinel-baseline") }, inputs as unknown as Record<string, unknown>),
    ).toContain('policy "constructor" (hard-mandatory) is removed');
    expect((await reasons({ kind: "rego" })).join("\n")).not.toContain("undefined");
  });

  it("hashes a secret value that begins with sha256: like any other", async () => {
    const value = `sha256:${"0".repeat(64)}`;
    const { id, outs } = await provider.create(
      await checked({ parameters: { api_token: { value, sensitive: true } } }),
    );
    expect((outs as PolicySetOutputs).parameters.api_token).toEqual({
      value: hashParameterValue(value),
      sensitive: true,
    });
    expect(JSON.stringify(outs)).not.toContain(value);
    await provider.delete(id);
  });
});

describe("PolicySet: what the review found besides", () => {
  it("refuses a membership declared both by a Policy's policySetIds and by the set's policyIds", async () => {
    clearMembershipDeclarations();
    const policyProvider = new PolicyProvider();
    policyProvider.context.useClient(client);
    const policyArgs = { organization, name: "member", code: "main = rule { true }\n", enforcementLevel: "advisory" };
    const policyInputs = (await policyProvider.check({}, policyArgs)).inputs as PolicyInputs;
    const { id: policyId, outs: policyOuts } = await policyProvider.create(policyInputs);
    const { id: setId, outs: setOuts } = await provider.create(
      await checked({ directory: undefined, policyIds: [policyId] }),
    );
    const bySet = await checked({ directory: undefined, policyIds: [policyId] }, setOuts as Record<string, unknown>);
    await provider.diff(setId, setOuts as PolicySetOutputs, bySet);
    const byPolicy = (
      await policyProvider.check(policyOuts as Record<string, unknown>, { ...policyArgs, policySetIds: [setId] })
    ).inputs as PolicyInputs;
    await expect(policyProvider.diff(policyId, policyOuts as PolicyOutputs, byPolicy)).rejects.toThrow(
      new RegExp(
        `policy ${policyId} is declared a member of policy set ${setId} twice: by Policy "member" \\(policySetIds\\) and by PolicySet "baseline" \\(policyIds\\)\\. Each membership has one owner`,
      ),
    );
    clearMembershipDeclarations();
    await client.policies.delete(policyId);
  });

  it("checks member policies' Rego in the dialect of a runtime pinned to OPA 1.x, naming the policy", async () => {
    const member = await client.policies.create(organization, {
      name: "v0-only",
      kind: "opa",
      query: "data.terraform.deny",
      enforcementLevel: "advisory",
    });
    await client.policies.upload(member.id, 'package terraform\n\ndeny[msg] { false; msg := "" }\n');
    const opa = { kind: "opa", directory: undefined, policyIds: [member.id] };
    const olds = (await checked(opa)) as unknown as Record<string, unknown>;
    expect(await reasons({ ...opa, policyToolVersion: "1.0.0" }, olds)).toEqual([
      expect.stringMatching(
        new RegExp(
          `^: policyToolVersion 1\\.0\\.0 reads Rego v1, and policy ${member.id} \\("v0-only"\\) does not read in it .*add import rego\\.v1`,
        ),
      ),
    ]);
    await client.policies.delete(member.id);
  });

  it("sends the policies path as compared, and takes a Terraform policy set's overridable as none", async () => {
    const inputs: Record<string, unknown> = {};
    checkVcs(
      [],
      { vcsRepo: { identifier: "acme/x", oauthTokenId: "ot-abc" }, policiesPath: "./policies/aws/" },
      inputs,
    );
    expect(inputs.policiesPath).toBe("policies/aws");
    const set = await client.policySets.create(organization, { name: "tf", kind: "tfpolicy" });
    expect(shapeOf({ ...set, overridable: false }, "latest").overridable).toBeNull();
    await client.policySets.delete(set.id);
  });
});

describe("PolicySet: adopting compares the program with what the service holds", () => {
  it("refuses turning a global set's global off, and a folder uploaded over a version it cannot read", async () => {
    const held = await client.policySets.create(organization, { name: "baseline", global: true });
    const scoped = await reasons({
      policyIds: undefined,
      directory: undefined,
      workspaceIds: [staging],
      adoptExisting: true,
    });
    expect(scoped).toEqual([
      expect.stringMatching(
        new RegExp(
          `^: adopting policy set "baseline" \\(${held.id}\\) weakens governance: global is turned off\\. .*allowWeakening`,
        ),
      ),
    ]);
    expect(await reasons({ directory: undefined, global: true, adoptExisting: true })).toEqual([]);
    const version = await client.policySets.createVersion(held.id);
    await client.policySets.uploadVersion(version, packFiles(collectFolder(join(examples, "sentinel-baseline")).files));
    expect(await reasons({ global: true, adoptExisting: true })).toEqual([
      expect.stringMatching(
        /cannot be compared with what is enforced now.*made before this stack, and the service offers no download/,
      ),
    ]);
    expect(await reasons({ global: true, adoptExisting: true, allowWeakening: true })).toEqual([]);
  });
});

describe("PolicySet: failures half-way leave the service as strict as before, and state says what happened", () => {
  const relationships = "POST /api/v2/policy-sets/:policySetId/relationships/workspaces";
  const parameterPost = "POST /api/v2/policy-sets/:policySetId/parameters";
  /** What `action` throws while the server runs `faults`; they end with it. */
  const failureUnder = async (faults: FaultPlan, action: () => Promise<unknown>): Promise<unknown> => {
    server.setFaults(faults);
    try {
      await action();
    } catch (error) {
      return error;
    } finally {
      server.setFaults([]);
    }
    throw new Error("expected the change to fail under the faults, but it went through");
  };

  it("turning global off while scoping to workspaces: a failed join turns global on again, and state says global", async () => {
    const inputs = await checked({ global: true });
    const { id, outs } = await provider.create(inputs);
    const scoped = await checked(
      { workspaceIds: [production], allowWeakening: true },
      inputs as unknown as Record<string, unknown>,
    );
    server.setFaults([{ route: relationships, status: 500, times: 20 }]);
    let failure: unknown;
    try {
      await provider.update(id, outs as PolicySetOutputs, { ...scoped, allowWeakening: true });
    } catch (error) {
      failure = error;
    } finally {
      server.setFaults([]);
    }
    expect(failure).toMatchObject({ id, properties: { global: true, workspaceIds: [] } });
    expect(await client.policySets.read(id)).toMatchObject({ global: true });
    // The next up, from what state recorded, converges.
    const recorded = (failure as { properties: PolicySetOutputs }).properties;
    await provider.update(id, recorded, { ...scoped, allowWeakening: true });
    expect(await client.policySets.read(id)).toMatchObject({ global: false, workspaceIds: [production] });
  });

  it("a parameter turned plain whose create fails: state records it gone, and the next up creates it", async () => {
    const inputs = await checked({ parameters: { limit: { value: "5", sensitive: true } } });
    const { id, outs } = await provider.create(inputs);
    const plain = await checked({ parameters: { limit: { value: "6", sensitive: false } } });
    // Every attempt fails (a read between them finds no entry, so each goes again, three at most).
    const failure = await failureUnder([{ route: parameterPost, status: 500, times: 3 }], () =>
      provider.update(id, outs as PolicySetOutputs, plain),
    );
    const recorded = (failure as { properties: PolicySetOutputs }).properties;
    expect(recorded.parameters).toEqual({});
    expect(recorded.parameterIds).toEqual({});
    const { outs: converged } = await provider.update(id, recorded, plain);
    expect((converged as PolicySetOutputs).parameters).toEqual({ limit: { value: "6", sensitive: false } });
    // A stale id in state (an older run's) is no 404 either: the service's parameters are read first.
    const { outs: again } = await provider.update(
      id,
      { ...(converged as PolicySetOutputs), parameterIds: { limit: "var-stale000000000001" }, parameters: {} },
      plain,
    );
    expect((again as PolicySetOutputs).parameterIds.limit).toMatch(/^var-/);
    expect((await client.policySets.listParameters(id)).map(({ key, value }) => [key, value])).toEqual([
      ["limit", "6"],
    ]);
  });

  const parameterRequests = (method: string) =>
    server.requestLog
      .entries()
      .filter(
        (entry) => entry.method === method && entry.route?.startsWith("/api/v2/policy-sets/:policySetId/parameters"),
      );
  const parametersOf = async (id: string) =>
    (await client.policySets.listParameters(id)).map(({ key, value, sensitive }) => [key, value, sensitive]).sort();
  const twoParameters = {
    parameters: { limit: { value: "5", sensitive: false }, api_token: { value: "s3cr3t", sensitive: true } },
  };

  it("a parameter create refused before the service made it (503, a reset) goes again once a read finds no entry", async () => {
    server.setFaults([
      { route: parameterPost, status: 503, times: 1 },
      { route: parameterPost, reset: true, times: 1 },
    ]);
    try {
      const { id, outs } = await provider.create(await checked(twoParameters));
      expect((outs as PolicySetOutputs).parameters).toEqual({
        limit: { value: "5", sensitive: false },
        api_token: { value: hashParameterValue("s3cr3t"), sensitive: true },
      });
      // Two refused, two made; a read of the set's parameters before each POST that went again.
      expect(parameterRequests("POST").map((entry) => entry.status)).toEqual([503, 0, 201, 201]);
      expect(parameterRequests("GET")).toHaveLength(2);
      expect(await parametersOf(id)).toEqual([
        ["api_token", "", true],
        ["limit", "5", false],
      ]);
    } finally {
      server.setFaults([]);
    }
  });

  it("a parameter create whose answer is lost: a plain entry with our value is ours, a sensitive one gets our value written over it", async () => {
    server.setFaults([{ route: parameterPost, status: 503, afterHandler: true, times: 2 }]);
    try {
      const { id, outs } = await provider.create(await checked(twoParameters));
      expect((outs as PolicySetOutputs).parameterIds).toEqual({
        limit: expect.stringMatching(/^var-/),
        api_token: expect.stringMatching(/^var-/),
      });
      // One entry a key: none made twice.
      expect(await parametersOf(id)).toEqual([
        ["api_token", "", true],
        ["limit", "5", false],
      ]);
      // The plain one is taken as it reads; the sensitive one cannot be read back, so it is written once more.
      expect(parameterRequests("POST").map((entry) => entry.status)).toEqual([503, 503]);
      expect(parameterRequests("PATCH")).toHaveLength(1);
    } finally {
      server.setFaults([]);
    }
  });

  it("a parameter another writer set while our create's answer was lost is left as it is, and the change fails naming it", async () => {
    const { id, outs } = await provider.create(await checked({}));
    const limited = await checked({ parameters: { limit: { value: "5", sensitive: false } } });
    let writeMeanwhile = true;
    server.requestLog.onEntry((entry) => {
      if (writeMeanwhile && entry.method === "POST" && entry.status === 503 && entry.route?.endsWith("/parameters")) {
        writeMeanwhile = false;
        void client.policySets.createParameter(id, { key: "limit", value: "50", sensitive: false });
      }
    });
    // The POST is refused before the service acts; the read after it is slowed, so the other write lands first.
    const failure = await failureUnder(
      [
        { route: parameterPost, status: 503, times: 1 },
        { route: "GET /api/v2/policy-sets/:policySetId/parameters", latencyMs: 300, times: 2 },
      ],
      () => provider.update(id, outs as PolicySetOutputs, limited),
    );
    writeMeanwhile = false;
    expect((failure as Error).message).toMatch(
      /parameter "limit" of policy set polset-\w+ appeared while this run created it, with another value: someone else wrote it/,
    );
    expect(await parametersOf(id)).toEqual([["limit", "50", false]]);
    expect((failure as { properties: PolicySetOutputs }).properties.parameters).toEqual({});
  });

  it("a create whose answer is lost takes the set it made, instead of failing and leaving it outside the state", async () => {
    server.setFaults([
      { route: "POST /api/v2/organizations/:organization/policy-sets", status: 503, afterHandler: true, times: 1 },
    ]);
    try {
      const { id } = await provider.create(await checked({ name: "lost-answer" }));
      const names = [];
      for await (const set of client.policySets.listAll(organization)) names.push(`${set.name} ${set.id}`);
      expect(names).toEqual([`lost-answer ${id}`]);
    } finally {
      server.setFaults([]);
    }
  });
});

describe("PolicySet and a token that cannot see or change the set", () => {
  const reader = "policy-set-reader-token-01";
  const outsider = "policy-set-outsider-token-01";
  let scoped: RunningServer;
  let owner: TfeClient;

  beforeAll(async () => {
    scoped = await startServer({
      seed: {
        organizations: [{ name: organization, plus: true }, { name: "globex" }],
        tokens: [
          { token, organizations: [organization] },
          { token: reader, organizations: [organization], managePolicies: false },
          { token: outsider, organizations: ["globex"] },
        ],
      },
    });
    owner = new TfeClient({ address: scoped.url, token, rateLimit: false });
  });
  afterAll(async () => {
    await owner.close();
    await scoped.close();
  });

  const providerWith = (tokenOf: string) => {
    const other = new PolicySetProvider();
    other.context.useClient(new TfeClient({ address: scoped.url, token: tokenOf, rateLimit: false }));
    return other;
  };

  it("a read with another organization's token fails naming the token, and keeps the set in state", async () => {
    const set = await owner.policySets.create(organization, { name: "not-yours" });
    await expect(providerWith(outsider).read(set.id, { organization })).rejects.toThrow(
      /404, and this token cannot list the policy sets of organization "acme" either.*stays in state/,
    );
  });

  it("a delete with a read-only token fails saying the set is still enforcing, and leaves it", async () => {
    const set = await owner.policySets.create(organization, { name: "still-here" });
    await expect(providerWith(reader).delete(set.id, { organization })).rejects.toThrow(
      /the policy set is still there and enforcing: the token lacks the team permission "Manage policies"/,
    );
    expect((await owner.policySets.read(set.id)).name).toBe("still-here");
  });
});

/** What `work` printed through console.error, the provider's channel to the user. */
async function capturedStderr<T>(work: () => Promise<T>): Promise<{ result: T; stderr: string }> {
  const printed: string[] = [];
  const spy = vi.spyOn(console, "error").mockImplementation((...parts: unknown[]) => {
    printed.push(parts.join(" "));
  });
  try {
    return { result: await work(), stderr: printed.join("\n") };
  } finally {
    spy.mockRestore();
  }
}

describe("PolicySet: a Terraform policy set (tfpolicy)", () => {
  const tfpolicy = (overrides: Record<string, unknown> = {}) => ({
    name: "terraform-policy",
    directory: join(examples, "terraform-policy"),
    ...overrides,
  });

  it("infers the kind from .policy.hcl files, records each block's level and what it enforces, and deploys ready", async () => {
    const inputs = await checked(tfpolicy());
    expect(inputs).toMatchObject({
      kind: "tfpolicy",
      overridable: null,
      folderPolicies: {
        "resource_policy.aws_s3_bucket.require_owner_tag": "mandatory",
        "resource_policy.aws_s3_bucket_public_access_block.all_public_access_blocked": "mandatory_overridable",
      },
      policyBlocks: {
        "resource_policy.aws_s3_bucket.require_owner_tag": {
          enforce: 1,
          operations: ["create", "no-op", "update"],
          filter: null,
        },
      },
    });
    const { id, outs } = await provider.create(inputs);
    expect((await client.policySets.read(id)).kind).toBe("tfpolicy");
    const version = await client.policySets.readVersion(outs.currentVersionId as string);
    expect(version.status).toBe("ready");
    expect((await provider.read(id, outs)).props).toMatchObject({
      kind: "tfpolicy",
      folderPolicies: inputs.folderPolicies,
    });
  });

  it("fails preview on a broken file naming file and line, with zero requests", async () => {
    const directory = folderCopy("terraform-policy");
    writeFileSync(join(directory, "require-tags.policy.hcl"), 'resource_policy "aws_s3_bucket" "x" {\n  enforce {\n');
    server.requestLog.clear();
    const failures = await reasons(tfpolicy({ directory }));
    expect(failures).toEqual([expect.stringMatching(/^directory: directory .*: require-tags\.policy\.hcl:\d+,\d+/)]);
    expect(server.requestLog.entries()).toEqual([]);
  });

  it("refuses a lowered level, a removed enforce, a dropped operation, a new filter and a parameter that lowers an input's level, unless allowed", async () => {
    const before = (await checked(tfpolicy())) as unknown as Record<string, unknown>;
    const directory = folderCopy("terraform-policy");
    const file = (name: string) => join(directory, name);
    const edit = (name: string, from: string | RegExp, to: string) => {
      const text = readFileSync(file(name), "utf8");
      const changed = text.replace(from, to);
      expect(changed).not.toBe(text);
      writeFileSync(file(name), changed);
    };
    edit("block-public-buckets.policy.hcl", '"mandatory_overridable"', '"advisory"');
    edit("block-public-buckets.policy.hcl", '["create", "update"]', '["create"]');
    edit("require-tags.policy.hcl", "  enforce {", '  filter = attrs.bucket != "logs"\n\n  enforce {');
    const weakened = await refusal(
      tfpolicy({ directory, parameters: { require_tags_level: { value: "advisory", sensitive: false } } }),
      before,
    );
    for (const part of [
      'policy "resource_policy.aws_s3_bucket_public_access_block.all_public_access_blocked" goes from mandatory_overridable to advisory',
      "resource_policy.aws_s3_bucket_public_access_block.all_public_access_blocked no longer applies to update",
      'policy "resource_policy.aws_s3_bucket.require_owner_tag" goes from mandatory to advisory',
      'resource_policy.aws_s3_bucket.require_owner_tag gains a filter, attrs.bucket != "logs"',
    ]) {
      expect(weakened).toContain(part);
    }
    const withoutEnforce = folderCopy("terraform-policy");
    const twice = readFileSync(join(examples, "terraform-policy", "require-tags.policy.hcl"), "utf8").replace(
      /( {2}enforce \{[\s\S]*?\n {2}\}\n)/,
      "$1\n$1",
    );
    writeFileSync(join(withoutEnforce, "require-tags.policy.hcl"), twice);
    const two = (await checked(tfpolicy({ directory: withoutEnforce }))) as unknown as Record<string, unknown>;
    expect(await refusal(tfpolicy(), two)).toContain(
      "resource_policy.aws_s3_bucket.require_owner_tag loses 1 enforce block (2 to 1)",
    );
    expect(
      await refusal(
        tfpolicy({
          directory,
          parameters: { require_tags_level: { value: "advisory", sensitive: false } },
          allowWeakening: true,
        }),
        before,
      ),
    ).toBeUndefined();
  });

  it("records a level raised through a parameter as the baseline, through update and refresh", async () => {
    const level = (value: string) => tfpolicy({ parameters: { require_tags_level: { value, sensitive: false } } });
    const advisory = await checked(level("advisory"));
    const { id, outs } = await provider.create(advisory);
    const mandatory = await checked(level("mandatory"), advisory as unknown as Record<string, unknown>);
    const updated = (await provider.update(id, outs as PolicySetOutputs, mandatory)).outs as PolicySetOutputs;
    expect(updated.folderPolicies["resource_policy.aws_s3_bucket.require_owner_tag"]).toBe("mandatory");
    const refreshed = (await provider.read(id, updated)).props as Record<string, unknown>;
    expect(await refusal(level("advisory"), refreshed)).toContain(
      'policy "resource_policy.aws_s3_bucket.require_owner_tag" goes from mandatory to advisory',
    );
    // The parameter changed outside Pulumi: what the level is now cannot be known, and lowering it is refused.
    const [parameter] = await client.policySets.listParameters(id);
    await client.policySets.updateParameter(id, parameter?.id as string, { value: "mandatory_overridable" });
    const outside = (await provider.read(id, updated)).props as PolicySetOutputs;
    expect(outside.folderPolicies["resource_policy.aws_s3_bucket.require_owner_tag"]).toMatch(/^<cannot evaluate: /);
    expect(await refusal(level("advisory"), outside as unknown as Record<string, unknown>)).toContain(
      "which cannot be compared",
    );
    expect(await refusal(level("mandatory"), outside as unknown as Record<string, unknown>)).toBeUndefined();
    await provider.delete(id);
  });

  it("keeps a level read from a sensitive parameter secret: wrapped in what the provider answers, (secret) in messages", async () => {
    const address = "resource_policy.aws_s3_bucket.require_owner_tag";
    const level = (value: string) => tfpolicy({ parameters: { require_tags_level: { value, sensitive: true } } });
    // A provider of its own, wrapped as providers.ts wraps the library's: the engine hands `provider` plain values.
    const own = new PolicySetProvider();
    own.context.useClient(client);
    const wrapped = withDerivedSecrets(own, policySetProperties, policySetSecrets);
    const result = await wrapped.check({}, args(level("mandatory")));
    expect(result.failures).toEqual([]);
    const answered = result.inputs as Record<string, Record<string, unknown>>;
    expect(isSecretEnvelope(answered.folderPolicies?.[address])).toBe(true);
    expect(isSecretEnvelope(answered.parameters?.require_tags_level)).toBe(true);
    // What the engine hands back: plain values.
    const plain = (value: unknown) =>
      JSON.parse(JSON.stringify(value, (_key, entry) => (isSecretEnvelope(entry) ? entry.value : entry)));
    const { id, outs } = await wrapped.create(plain(result.inputs));
    expect(isSecretEnvelope((outs as Record<string, Record<string, unknown>>).folderPolicies?.[address])).toBe(true);
    const lowered = await refusal(level("advisory"), plain(outs));
    expect(lowered).toContain(`policy "${address}" goes from (secret) to (secret)`);
    expect(lowered).not.toMatch(/advisory|mandatory/);
    // The service never shows a sensitive value back: a change that sends the parameter again compares with the
    // level read from it as not known (it may have been changed outside Pulumi): a raise by the state's account
    // cannot be compared, unless to the top. A change that leaves the parameter alone (a scope) sends nothing of it.
    const second = (value: string, more: Record<string, unknown> = {}) =>
      tfpolicy({ name: "second", parameters: { require_tags_level: { value, sensitive: true } }, ...more });
    const created = await wrapped.create(plain((await wrapped.check({}, args(second("advisory")))).inputs));
    expect(await refusal(second("advisory", { workspaceIds: [production] }), plain(created.outs))).toBeUndefined();
    expect(await refusal(second("mandatory_overridable"), plain(created.outs))).toContain("cannot be compared");
    expect(await refusal(second("mandatory"), plain(created.outs))).toBeUndefined();
    await provider.delete(created.id, plain(created.outs));
    const typo = await reasons(level("advisorry"));
    expect(typo.join("\n")).toContain('enforcement_level (secret) (parameter "require_tags_level") is not a level');
    expect(typo.join("\n")).not.toContain("advisorry");
    await provider.delete(id, plain(outs));
  });

  it("compares a level it cannot evaluate through what it reads: a parameter moved under the same text is refused", async () => {
    const directory = folderCopy("terraform-policy");
    const file = join(directory, "require-tags.policy.hcl");
    writeFileSync(
      file,
      readFileSync(file, "utf8").replace(
        "enforcement_level = input.require_tags_level",
        'enforcement_level = core::format("%s", input.require_tags_level)',
      ),
    );
    const address = "resource_policy.aws_s3_bucket.require_owner_tag";
    const level = (value: string, sensitive = false) =>
      tfpolicy({ directory, parameters: { require_tags_level: { value, sensitive } } });
    const mandatory = await checked(level("mandatory"));
    expect(mandatory.folderPolicies[address]).toMatch(/^<cannot evaluate: /);
    const { id, outs } = await provider.create(mandatory);
    // The same text, a lower parameter: the level may be lower, and cannot be shown not to be.
    const lowered = await refusal(level("advisory"), outs as unknown as Record<string, unknown>);
    expect(lowered).toContain(`${address}'s level or filter is an expression this check cannot evaluate`);
    expect(lowered).toContain("cannot be compared");
    expect(await refusal(level("mandatory"), outs as unknown as Record<string, unknown>)).toBeUndefined();
    // The parameter changed outside Pulumi: a refresh records that what the expression reads is not known.
    const [parameter] = await client.policySets.listParameters(id);
    await client.policySets.updateParameter(id, parameter?.id as string, { value: "advisory" });
    const outside = (await provider.read(id, outs as PolicySetOutputs)).props as PolicySetOutputs;
    expect(outside.policyBlocks[address]?.readsDigest).toMatch(/^not known: parameter "require_tags_level", changed/);
    expect(await refusal(level("mandatory"), outside as unknown as Record<string, unknown>)).toContain(
      "cannot be compared",
    );
    await provider.delete(id, outs as PolicySetOutputs);
  });

  it("refuses a level written as an expression the check cannot evaluate, saying why", async () => {
    const before = (await checked(tfpolicy())) as unknown as Record<string, unknown>;
    const directory = folderCopy("terraform-policy");
    const file = join(directory, "block-public-buckets.policy.hcl");
    writeFileSync(
      file,
      readFileSync(file, "utf8").replace('"mandatory_overridable"', 'core::getresources("x", null)[0].level'),
    );
    expect(await refusal(tfpolicy({ directory }), before)).toMatch(
      /policy "resource_policy\.aws_s3_bucket_public_access_block\.all_public_access_blocked" goes from mandatory_overridable to <cannot evaluate: core::getresources\("x", null\)\[0\]\.level>, which cannot be compared/,
    );
    // What it can evaluate, it compares: a local, lower(), a conditional.
    writeFileSync(
      file,
      readFileSync(file, "utf8").replace(/enforcement_level = .*/, 'enforcement_level = lower("ADVISORY")'),
    );
    expect(await refusal(tfpolicy({ directory }), before)).toContain("goes from mandatory_overridable to advisory");
  });

  it("needs a parameter for an input without a default, refuses overridable, and warns of a parameter no input reads", async () => {
    const directory = folderCopy("terraform-policy");
    writeFileSync(
      join(directory, "owner.policy.hcl"),
      'input "owner_team" {\n  type = string\n}\n\nresource_policy "aws_s3_bucket" "owner" {\n  enforce {\n    condition = core::try(attrs.tags.Team, "") == input.owner_team\n  }\n}\n',
    );
    expect(await reasons(tfpolicy({ directory }))).toEqual([
      expect.stringMatching(
        /owner\.policy\.hcl:1: input "owner_team" has no default, and the set has no parameter "owner_team"/,
      ),
    ]);
    const stderr = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      expect(
        await reasons(
          tfpolicy({
            directory,
            parameters: {
              owner_team: { value: "platform", sensitive: false },
              unread: { value: "1", sensitive: false },
            },
          }),
        ),
      ).toEqual([]);
      expect(stderr.mock.calls.flat().join("\n")).toContain(
        'parameters.unread: no policy file declares input "unread"',
      );
    } finally {
      stderr.mockRestore();
    }
    expect(await reasons(tfpolicy({ overridable: true }))).toEqual([
      expect.stringMatching(/^overridable: overridable does not apply to a Terraform policy set/),
    ]);
  });

  it("sends no Sentinel or OPA runtime setting for a Terraform policy set, and refuses one given", async () => {
    expect(await reasons(tfpolicy({ policyToolVersion: "0.30.0", agentEnabled: true }))).toEqual([
      expect.stringMatching(/^policyToolVersion: policyToolVersion chooses how Sentinel or OPA runs; .* remove it$/),
      expect.stringMatching(/^agentEnabled: agentEnabled chooses how Sentinel or OPA runs; .* remove it$/),
    ]);
    // What goes over the wire, seen by a proxy in front of the local server.
    const created: Record<string, unknown>[] = [];
    const proxy = await startFaultServer((request, response) => {
      void (async () => {
        if (request.method === "POST" && /\/policy-sets$/.test(request.url)) {
          created.push(JSON.parse(request.body.toString()).data.attributes);
        }
        const answer = await fetch(server.url + request.url, {
          method: request.method,
          headers: { authorization: String(request.headers.authorization), "content-type": "application/vnd.api+json" },
          body: request.body.byteLength > 0 ? new Uint8Array(request.body) : undefined,
        });
        const headers = Object.fromEntries(answer.headers);
        delete headers["content-length"];
        response.writeHead(answer.status, headers);
        response.end(Buffer.from(await answer.arrayBuffer()));
      })();
    });
    const proxied = new TfeClient({ address: proxy.url, token, rateLimit: false });
    const viaProxy = new PolicySetProvider();
    viaProxy.context.useClient(proxied);
    try {
      const inputs = (await viaProxy.check({}, args(tfpolicy({ name: "tf-runtime" })))).inputs as PolicySetInputs;
      const { id, outs } = await viaProxy.create(inputs);
      expect(created).toHaveLength(1);
      expect(created[0]).toMatchObject({ name: "tf-runtime", kind: "tfpolicy" });
      expect(Object.keys(created[0] as object)).not.toContain("policy-tool-version");
      expect(Object.keys(created[0] as object)).not.toContain("agent-enabled");
      // Whatever the service shows for them is its default: no drift, nothing to send back.
      const read = await viaProxy.read(id, outs as PolicySetOutputs);
      expect((await viaProxy.diff(id, read.props as PolicySetOutputs, inputs)).changes).toBe(false);
      await viaProxy.delete(id);
    } finally {
      await proxied.close();
      await proxy.close();
    }
  });

  it("refuses individual policies in a Terraform policy set: its code lives in its versions only", async () => {
    expect(await reasons({ kind: "tfpolicy", directory: undefined, policyIds: ["pol-u3S5p2Uwk21keu1s"] })).toEqual([
      expect.stringMatching(/^policyIds: a Terraform policy set holds no individual policies .*\(directory\)/),
    ]);
  });
});

describe("PolicySet: pulumi import", () => {
  const wire = (value: object) =>
    (
      createRequire(require.resolve("@pulumi/pulumi"))("google-protobuf/google/protobuf/struct_pb") as {
        Struct: { fromJavaScript(value: object): { toJavaScript(): Record<string, unknown> } };
      }
    ).Struct.fromJavaScript(value);

  it("reads a set with no state at all into properties the engine can carry, each identifying field the service's", async () => {
    const made = await client.policySets.create(organization, { name: "imported", description: "from the UI" });
    const version = await client.policySets.createVersion(made.id);
    await client.policySets.uploadVersion(version, packFiles(collectFolder(join(examples, "sentinel-baseline")).files));
    const read = await provider.read(made.id, {
      __urn: "urn:pulumi:dev::p::pulumi-nodejs:dynamic/tfe:PolicySet::x",
    } as never);
    expect(() => wire(read.props as object)).not.toThrow();
    expect(() => wire(read.inputs as object)).not.toThrow();
    expect(read.props).toMatchObject({ organization, name: "imported", description: "from the UI", kind: "sentinel" });
    expect(read.inputs).toMatchObject({ organization, name: "imported" });
    // Its version's files cannot be read here: what it enforces is not known, never "nothing".
    expect((read.props as PolicySetOutputs).policiesUnknown).toMatch(/.+/);
  });
});

describe("PolicySet check: Sentinel code parsed and the folder's own tests run, at preview", () => {
  /** A Sentinel set folder of its own under `work`, from `files`. */
  function sentinelFolder(files: Record<string, string>): string {
    const directory = mkdtempSync(join(work, "sentinel-checked-"));
    writeFiles(directory, files);
    return directory;
  }
  const config =
    'module "helpers" {\n  source = "./helpers.sentinel"\n}\n\npolicy "limit" {\n  enforcement_level = "hard-mandatory"\n}\n';
  const helpers = "at_most = func(n, limit) {\n  return n <= limit\n}\n";
  const policy = 'import "helpers"\n\nparam limit default 2\n\nmain = rule { helpers.at_most(3, limit) }\n';
  const testCase = (main: boolean) =>
    `module "helpers" {\n  source = "../../helpers.sentinel"\n}\n\ntest {\n  rules = {\n    main = ${main}\n  }\n}\n`;

  it("a syntax error in a policy or in a module fails preview naming the file, line, column and what was expected", async () => {
    const brokenPolicy = sentinelFolder({
      "sentinel.hcl": config,
      "helpers.sentinel": helpers,
      "limit.sentinel": 'import "helpers"\n\nmain = rule {\n  helpers.at_most(3, 2)\n',
    });
    expect(await reasons({ directory: brokenPolicy })).toEqual([
      `directory: directory ${brokenPolicy}: sentinel.hcl:5: policy "limit": limit.sentinel:5:1: syntax error: expected "}" to close the rule opened at 3:13 (a rule holds one expression), found end of file`,
    ]);
    const brokenModule = sentinelFolder({
      "sentinel.hcl": config,
      "helpers.sentinel": "at_most = func(n, limit) {\n  retrun n <= limit\n}\n",
      "limit.sentinel": policy,
    });
    expect(await reasons({ directory: brokenModule })).toEqual([
      `directory: directory ${brokenModule}: sentinel.hcl:1: module "helpers": helpers.sentinel:2:10: syntax error: expected "=" or the end of the statement after retrun (did you mean return?), found identifier n`,
    ]);
    // Nothing was asked of the service: the folder fails on its own.
    expect(server.requestLog.entries()).toEqual([]);
  });

  it("an import a module uses that neither the runtime nor sentinel.hcl provides fails too", async () => {
    const directory = sentinelFolder({
      "sentinel.hcl": config,
      "helpers.sentinel": `import "tfplan-functions"\n\n${helpers}`,
      "limit.sentinel": policy,
    });
    expect(await reasons({ directory })).toEqual([
      `directory: directory ${directory}: sentinel.hcl:1: module "helpers": helpers.sentinel:1 imports "tfplan-functions", which is no Sentinel import and which sentinel.hcl does not declare: add a module or import block for it, or fix the name`,
    ]);
  });

  it("a failing test case is a warning naming the case and the rule; with requirePolicyTests, a refusal", async () => {
    const directory = sentinelFolder({
      "sentinel.hcl": config,
      "helpers.sentinel": helpers,
      "limit.sentinel": policy,
      "test/limit/fails-as-written.hcl": testCase(true),
      "test/limit/passes.hcl": testCase(false),
    });
    const warned = await capturedStderr(() => reasons({ directory }));
    expect(warned.result).toEqual([]);
    expect(warned.stderr).toContain(
      `warning: policy set "baseline": directory ${directory}: 1 of the folder's 2 test cases fail: ` +
        "test/limit/fails-as-written.hcl (limit.sentinel): rule main is false, expected true (tfe-governance test",
    );
    vi.stubEnv("TFE_REQUIRE_POLICY_TESTS", "true");
    try {
      expect(await reasons({ directory })).toEqual([
        expect.stringMatching(
          new RegExp(
            `^directory: directory ${directory}: 1 of the folder's 2 test cases fail: test/limit/fails-as-written\\.hcl \\(limit\\.sentinel\\): rule main is false, expected true\\. tfe:requirePolicyTests \\(or TFE_REQUIRE_POLICY_TESTS\\) refuses a folder whose tests fail`,
          ),
        ),
      ]);
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it("a folder whose tests pass, or that has none, says nothing of tests", async () => {
    const tested = sentinelFolder({
      "sentinel.hcl": config,
      "helpers.sentinel": helpers,
      "limit.sentinel": policy,
      "test/limit/passes.hcl": testCase(false),
    });
    const untested = sentinelFolder({ "sentinel.hcl": config, "helpers.sentinel": helpers, "limit.sentinel": policy });
    for (const directory of [tested, untested]) {
      const { result, stderr } = await capturedStderr(() => reasons({ directory }));
      expect(result).toEqual([]);
      expect(stderr).not.toMatch(/test case/);
    }
  });
});
