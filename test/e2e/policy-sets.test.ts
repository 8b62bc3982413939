import { cpSync, readdirSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TfeClient } from "../../src/client";
import type { RunningServer } from "../../src/server";
import { ingressRoute } from "../../src/server/faults";
import { startSeededServer } from "../seeded-server";
import { changeSummary, PulumiProject } from "./pulumi-project";

// PolicySet under the real Pulumi engine and Node.js language host against the local server: the quickstart's two
// folders (a Sentinel module, a static import and parameters; Rego shared across files) deploy as ready sets, and
// only a change of content uploads a version.

const token = "e2e-policy-set-token-0123456789";
const organization = "acme";
const production = "ws-production0000001";
const staging = "ws-staging000000001";
const secretValue = "s3cr3t-parameter-value";
const examples = join(__dirname, "..", "..", "examples", "quickstart", "policy-sets");

const program = `
const pulumi = require("@pulumi/pulumi");
const { PolicySet } = require("pulumi-tfe-governance");
const config = new pulumi.Config();
const workspaces = JSON.parse(config.get("workspaces") ?? '["${production}"]');
const baseline = new PolicySet("baseline", {
  directory: "sentinel-baseline",
  workspaceIds: workspaces,
  parameters: { max_instances: config.get("maxInstances") ?? "10", api_token: config.requireSecret("apiToken") },
  allowWeakening: config.getBoolean("allowWeakening") ?? false,
});
const network = new PolicySet("network", { directory: "opa-network", workspaceIds: ["${production}"] });
exports.baseline = { id: baseline.policySetId, version: baseline.currentVersionId };
exports.network = { id: network.policySetId, version: network.currentVersionId };
`;

describe("PolicySet under the real engine", () => {
  let server: RunningServer;
  let client: TfeClient;
  let project: PulumiProject;

  const mutating = () =>
    server.requestLog
      .entries()
      .filter((entry) => entry.method !== "GET")
      .map((entry) => `${entry.method} ${entry.route}`);
  const outputs = async () =>
    JSON.parse((await project.run(["stack", "output", "--json"])).stdout) as Record<
      "baseline" | "network",
      { id: string; version: string }
    >;
  const folder = (path: string) => join(project.dir, "sentinel-baseline", path);

  beforeAll(async () => {
    server = await startSeededServer({ organization, token, workspaceIds: [production, staging] });
    client = new TfeClient({ address: server.url, token, rateLimit: false });
    project = await PulumiProject.create({
      name: "tfe-governance-policy-set-e2e",
      files: { "index.js": program },
      config: { "tfe:address": server.url, "tfe:organization": organization },
      secrets: { "tfe:token": token, apiToken: secretValue },
    });
    for (const example of ["sentinel-baseline", "opa-network"]) {
      cpSync(join(examples, example), join(project.dir, example), { recursive: true });
    }
    // Two more shapes real sets use: a remote source (accepted, fetched by the service when it evaluates), and a
    // module whose file lives outside the folder, linked in (packed as its content, as go-slug packs links).
    const shared = join(project.dir, "shared-functions.sentinel");
    writeFileSync(shared, "always = func() { return true }\n");
    symlinkSync(shared, folder("shared-functions.sentinel"));
    writeFileSync(
      folder("sentinel.hcl"),
      `${readFileSync(folder("sentinel.hcl"), "utf8")}
module "shared-functions" {
  source = "./shared-functions.sentinel"
}

policy "from-the-policy-library" {
  source            = "https://raw.githubusercontent.com/hashicorp/policy-library-aws/main/policies/require-tags.sentinel"
  enforcement_level = "advisory"
}
`,
    );
  }, 120_000);

  afterAll(async () => {
    await project?.dispose();
    await client?.close();
    await server?.close();
  });

  it("deploys both folders as ready sets scoped to the workspace, with the parameters, and no change right after", async () => {
    const up = await project.up();
    // api_token is no param of the folder: said, not refused (a parameter may be meant for a later version).
    expect(up.output).toContain('parameters.api_token: the folder declares no param "api_token" in sentinel.hcl');
    const { baseline, network } = await outputs();
    for (const { id, version } of [baseline, network]) {
      const set = await client.policySets.read(id);
      expect(set).toMatchObject({ workspaceIds: [production], versioned: true, currentVersionId: version });
      expect((await client.policySets.readVersion(version)).status).toBe("ready");
    }
    const parameters = await client.policySets.listParameters(baseline.id);
    expect(parameters.map(({ key, value, sensitive }) => ({ key, value, sensitive }))).toEqual(
      expect.arrayContaining([
        { key: "max_instances", value: "10", sensitive: false },
        { key: "api_token", value: "", sensitive: true },
      ]),
    );
    await project.run(["preview", "--expect-no-changes"]);
    expect(await project.exportState()).not.toContain(secretValue);
  }, 300_000);

  it("has no change after every file's modification time moves", async () => {
    const later = new Date(Date.now() + 86_400_000);
    for (const example of ["sentinel-baseline", "opa-network"]) {
      // Every entry, links followed: read from this process, whose directory is not the project's, the file-access
      // rule would not let the folder's link to the project's shared file be read.
      for (const file of readdirSync(join(project.dir, example), { recursive: true })) {
        utimesSync(join(project.dir, example, String(file)), later, later);
      }
    }
    await project.run(["preview", "--expect-no-changes"]);
  }, 120_000);

  it("uploads exactly one new version when one module file changes, and changes nothing else", async () => {
    const before = await outputs();
    server.requestLog.clear();
    writeFileSync(
      folder("modules/tfplan-functions.sentinel"),
      `${readFileSync(folder("modules/tfplan-functions.sentinel"), "utf8")}\n# edited\n`,
    );
    const run = await project.up();
    expect(mutating()).toEqual([
      "POST /api/v2/policy-sets/:policySetId/versions",
      "PUT /policy-set-versions/:versionId/upload",
    ]);
    expect(run.stdout).toMatch(/1 updated/);
    const after = await outputs();
    expect(after.baseline.version).not.toBe(before.baseline.version);
    expect(after.network).toEqual(before.network);
  }, 300_000);

  it("preview --diff names each file a content change touches, and a plain parameter's change beside a secret one", async () => {
    const module = folder("modules/tfplan-functions.sentinel");
    const held = readFileSync(module, "utf8");
    writeFileSync(module, `${held}# edited again\n`);
    writeFileSync(folder("NOTES.md"), "Why these policies\n");
    await project.run(["config", "set", "maxInstances", "12"]);
    try {
      const preview = await project.run(["preview", "--diff"]);
      const shown = preview.stdout;
      expect(shown).toMatch(/~ "?modules\/tfplan-functions\.sentinel"?\s*:/);
      expect(shown).toMatch(/\+ "?NOTES\.md"?\s*:/);
      // Only those two: the other files of the folder are no change.
      expect(shown.match(/^\s*[~+-] "?[\w/.-]+\.(sentinel|hcl|json|md)"?\s*:/gm)).toHaveLength(2);
      expect(shown).toMatch(/max_instances[\s\S]*?"10"\s*=>\s*"12"/);
      expect(shown).toMatch(/api_token\s*:\s*\[secret\]/);
      expect(preview.output).not.toContain(secretValue);
    } finally {
      writeFileSync(module, held);
      rmSync(folder("NOTES.md"));
      await project.run(["config", "rm", "maxInstances"]);
    }
    await project.run(["preview", "--expect-no-changes"]);
  }, 180_000);

  it("fails preview on a broken folder naming the file, with no request that changes anything", async () => {
    const config = readFileSync(folder("sentinel.hcl"), "utf8");
    writeFileSync(folder("sentinel.hcl"), config.replace("./data/approved.json", "./data/missing.json"));
    server.requestLog.clear();
    const preview = await project.run(["preview"], { allowFailure: true });
    writeFileSync(folder("sentinel.hcl"), config);
    expect(preview.code).not.toBe(0);
    expect(preview.output).toMatch(
      /sentinel\.hcl:\d+: import "static" "approved": \.\/data\/missing\.json is not in the folder/,
    );
    expect(mutating()).toEqual([]);
  }, 120_000);

  it("fails preview on a Sentinel syntax error in a module, naming the file, line and column, with no request", async () => {
    const module = folder("shared-functions.sentinel");
    // The module is linked in from outside the folder: the check reads what the upload would carry.
    const held = readFileSync(module, "utf8");
    writeFileSync(module, "always = func() {\n  return true\n");
    server.requestLog.clear();
    const preview = await project.run(["preview"], { allowFailure: true });
    writeFileSync(module, held);
    expect(preview.code).not.toBe(0);
    expect(preview.output).toMatch(
      /sentinel\.hcl:\d+: module "shared-functions": shared-functions\.sentinel:3:1: syntax error: expected "}" to close the function's body opened at 1:17, found end of file/,
    );
    expect(server.requestLog.entries()).toEqual([]);
  }, 120_000);

  it("fails up with the service's error-message for a folder it errors on, and keeps the last ready version", async () => {
    const before = await outputs();
    server.setFaults([{ route: ingressRoute, versionError: 'sentinel 0.40: import "static" is not enabled' }]);
    writeFileSync(folder("data/approved.json"), '{ "regions": ["eu-west-1"] }\n');
    const up = await project.run(["up", "--yes", "--skip-preview"], { allowFailure: true });
    server.setFaults([]);
    expect(up.code).not.toBe(0);
    expect(up.output).toContain('import "static" is not enabled. The set keeps its last ready version');
    expect((await client.policySets.read(before.baseline.id)).currentVersionId).toBe(before.baseline.version);
    expect((await outputs()).baseline.version).toBe(before.baseline.version);
    // The change is still pending: the next up uploads it again, and it goes through.
    await project.up();
    expect((await outputs()).baseline.version).not.toBe(before.baseline.version);
    await project.run(["preview", "--expect-no-changes"]);
  }, 300_000);

  it("fails preview on a lowered level, a removed policy and a narrowed scope, listing all, until allowed", async () => {
    const config = readFileSync(folder("sentinel.hcl"), "utf8");
    const weakened = config
      .replace('enforcement_level = "hard-mandatory"', 'enforcement_level = "advisory"')
      .replace(/policy "limit-instance-count\.sentinel" \{[^}]*\}/, "");
    writeFileSync(folder("sentinel.hcl"), weakened);
    await project.run(["config", "set", "workspaces", JSON.stringify([staging])]);
    server.requestLog.clear();
    const preview = await project.run(["preview"], { allowFailure: true });
    expect(preview.code).not.toBe(0);
    for (const part of [
      'policy set "baseline" weakens governance',
      'policy "approved-regions" goes from hard-mandatory to advisory',
      'policy "limit-instance-count.sentinel" (soft-mandatory) is removed',
      `workspaceIds loses ${production}`,
    ]) {
      expect(preview.output).toContain(part);
    }
    expect(mutating()).toEqual([]);
    await project.run(["config", "set", "allowWeakening", "true"]);
    const allowed = await project.run(["preview", "--json"]);
    expect(changeSummary(allowed)).toMatchObject({ update: 1 });
    // The warning is the set's, where Pulumi shows it: under the resource, not under the stack.
    const diagnostics =
      (JSON.parse(allowed.stdout) as { diagnostics?: { urn?: string; severity: string; message: string }[] })
        .diagnostics ?? [];
    expect(diagnostics).toContainEqual(
      expect.objectContaining({
        urn: expect.stringMatching(/::pulumi-nodejs:dynamic\/tfe:PolicySet::baseline$/),
        severity: "warning",
        message: expect.stringContaining('policy set "baseline" weakens governance'),
      }),
    );
    await project.run(["config", "rm", "allowWeakening"]);
    await project.run(["config", "rm", "workspaces"]);
    writeFileSync(folder("sentinel.hcl"), config);
  }, 120_000);

  it("destroy deletes both sets", async () => {
    const { baseline, network } = await outputs();
    await project.run(["destroy", "--yes"]);
    for (const id of [baseline.id, network.id]) {
      await expect(client.policySets.read(id)).rejects.toMatchObject({ status: 404 });
    }
  }, 120_000);
});
