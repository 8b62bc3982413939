import { cpSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TfeClient } from "../../src/client";
import { collectFolder } from "../../src/policy-code/archive";
import type { RunningServer } from "../../src/server";
import { startSeededServer } from "../seeded-server";
import { PulumiProject } from "./pulumi-project";

// A Terraform policy (tfpolicy) set under the real Pulumi engine and Node.js language host against the local server:
// the quickstart's folder of policy files, each beside its test, deploys ready; its levels are guarded block by
// block, and a broken file fails preview before any request.

const token = "e2e-tfpolicy-token-0123456789";
const organization = "acme";
const production = "ws-production0000001";
const example = join(__dirname, "..", "..", "examples", "quickstart", "policy-sets", "terraform-policy");

const program = `
const pulumi = require("@pulumi/pulumi");
const { PolicySet } = require("pulumi-tfe-governance");
const config = new pulumi.Config();
const set = new PolicySet("terraform-policy", {
  directory: "terraform-policy",
  workspaceIds: ["${production}"],
  parameters: { require_tags_level: config.get("requireTagsLevel") ?? "mandatory" },
  allowWeakening: config.getBoolean("allowWeakening") ?? false,
});
exports.set = { id: set.policySetId, version: set.currentVersionId, kind: set.kind };
`;

describe("a Terraform policy set under the real engine", () => {
  let server: RunningServer;
  let client: TfeClient;
  let project: PulumiProject;
  const file = (name: string) => join(project.dir, "terraform-policy", name);
  const output = async () =>
    JSON.parse((await project.run(["stack", "output", "--json", "set"])).stdout) as {
      id: string;
      version: string;
      kind: string;
    };

  beforeAll(async () => {
    server = await startSeededServer({ organization, token, workspaceIds: [production] });
    client = new TfeClient({ address: server.url, token, rateLimit: false });
    project = await PulumiProject.create({
      name: "tfe-governance-tfpolicy-e2e",
      files: { "index.js": program },
      config: { "tfe:address": server.url, "tfe:organization": organization },
      secrets: { "tfe:token": token },
    });
    cpSync(example, join(project.dir, "terraform-policy"), { recursive: true });
  }, 120_000);

  afterAll(async () => {
    await project?.dispose();
    await client?.close();
    await server?.close();
  });

  it("deploys the example ready, and has no change right after, nor after every file's time moves", async () => {
    await project.up();
    const { id, version, kind } = await output();
    expect(kind).toBe("tfpolicy");
    expect(await client.policySets.read(id)).toMatchObject({ kind: "tfpolicy", workspaceIds: [production] });
    expect((await client.policySets.readVersion(version)).status).toBe("ready");
    await project.run(["preview", "--expect-no-changes"]);
    const later = new Date(Date.now() + 86_400_000);
    for (const path of collectFolder(join(project.dir, "terraform-policy")).files.keys()) {
      utimesSync(file(path), later, later);
    }
    await project.run(["preview", "--expect-no-changes"]);
  }, 300_000);

  it("fails preview on a block's level lowered in its file, naming the block; shows the level per block in --diff, and passes with allowWeakening", async () => {
    const original = readFileSync(file("block-public-buckets.policy.hcl"), "utf8");
    writeFileSync(
      file("block-public-buckets.policy.hcl"),
      original.replace('enforcement_level = "mandatory_overridable"', 'enforcement_level = "advisory"'),
    );
    try {
      server.requestLog.clear();
      const refused = await project.run(["preview"], { allowFailure: true });
      expect(refused.code).not.toBe(0);
      expect(refused.output).toContain(
        'policy set "terraform-policy" weakens governance: policy "resource_policy.aws_s3_bucket_public_access_block.all_public_access_blocked" goes from mandatory_overridable to advisory',
      );
      expect(server.requestLog.entries().filter((entry) => entry.method !== "GET")).toEqual([]);

      // A parameter that lowers the level an input gives is a weakening too.
      writeFileSync(file("block-public-buckets.policy.hcl"), original);
      await project.run(["config", "set", "requireTagsLevel", "advisory"]);
      const lowered = await project.run(["preview"], { allowFailure: true });
      expect(lowered.code).not.toBe(0);
      expect(lowered.output).toContain(
        'policy "resource_policy.aws_s3_bucket.require_owner_tag" goes from mandatory to advisory',
      );

      await project.run(["config", "set", "allowWeakening", "true"]);
      const allowed = await project.run(["preview", "--diff"]);
      expect(allowed.stdout).toMatch(
        /~ "?resource_policy\.aws_s3_bucket\.require_owner_tag"?\s*:\s*"mandatory"\s*=>\s*"advisory"/,
      );
    } finally {
      writeFileSync(file("block-public-buckets.policy.hcl"), original);
      await project.run(["config", "rm", "allowWeakening"]);
      await project.run(["config", "rm", "requireTagsLevel"]);
    }
    await project.run(["preview", "--expect-no-changes"]);
  }, 240_000);

  it("fails preview on a broken file, naming file and line, with zero requests", async () => {
    const original = readFileSync(file("require-tags.policy.hcl"), "utf8");
    writeFileSync(file("require-tags.policy.hcl"), original.replace("  enforce {", "  enforce {\n    condition ="));
    try {
      server.requestLog.clear();
      const preview = await project.run(["preview"], { allowFailure: true });
      expect(preview.code).not.toBe(0);
      expect(preview.output).toMatch(/require-tags\.policy\.hcl:\d+,\d+/);
      expect(server.requestLog.entries()).toEqual([]);
    } finally {
      writeFileSync(file("require-tags.policy.hcl"), original);
    }
  }, 120_000);

  it("destroy deletes the set", async () => {
    const { id } = await output();
    await project.run(["destroy", "--yes"]);
    await expect(client.policySets.read(id)).rejects.toMatchObject({ status: 404 });
  }, 120_000);
});
