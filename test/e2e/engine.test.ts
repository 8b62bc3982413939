import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TfeClient } from "../../src/client";
import type { RunningServer } from "../../src/server";
import { startSeededServer } from "../seeded-server";
import { changeSummary, PulumiProject } from "./pulumi-project";

// One scenario, step after step, under the real Pulumi engine against the real local server: each step starts
// from the state the previous one left, as a platform team's stack does.

const token = "e2e-token-0123456789abcdef";
const organization = "acme";
const policySetId = "polset-e2eBaseline01";
const programSource = readFileSync(join(__dirname, "program", "index.js"), "utf8");

const requireTags = 'main = rule { all tfplan.resources as _, r { r.applied.tags contains "owner" } }\n';
const restrictTypes = "main = rule { true } # restrict instance types\n";
const denyPublic = 'package terraform\n\ndeny[msg] { msg := "no public buckets" }\n';

interface PolicySpec {
  resource: string;
  name?: string;
  kind?: string;
  query?: string;
  description?: string;
  enforcementLevel: string;
  codeFile?: string;
  secretCode?: string;
  policySetIds?: string[];
}

const deprecation = {
  resource: "vpc-1-0-0",
  moduleName: "vpc",
  moduleProvider: "aws",
  version: "1.0.0",
  reason: "Uses a NAT gateway per subnet; upgrade to 2.0.0",
  link: "https://example.com/vpc/upgrade",
};

describe("pulumi up, preview, refresh and destroy under the real engine", () => {
  let server: RunningServer;
  let project: PulumiProject;
  let client: TfeClient;
  let policies: PolicySpec[];

  const declare = async (next: PolicySpec[], deprecations = [deprecation]) => {
    policies = next;
    await project.writeFile("spec.json", JSON.stringify({ policies, deprecations }, null, 2));
  };
  const serverPolicies = async () => {
    const all = [];
    for await (const policy of client.policies.listAll(organization)) all.push(policy);
    return all;
  };
  const mutatingRequests = () => server.requestLog.entries().filter((entry) => entry.method !== "GET");
  const serverPolicy = async (name: string) => (await serverPolicies()).find((policy) => policy.name === name);

  beforeAll(async () => {
    server = await startSeededServer({
      organization,
      token,
      policySetId,
      modules: [{ name: "vpc", provider: "aws", versions: ["1.0.0", "1.1.0", "2.0.0"] }],
    });
    client = new TfeClient({ address: server.url, token, rateLimit: false });
    project = await PulumiProject.create({
      name: "tfe-governance-e2e",
      files: {
        "index.js": programSource,
        "policies/require-tags.sentinel": requireTags,
        "policies/restrict-types.sentinel": restrictTypes,
        "policies/deny-public.rego": denyPublic,
      },
      config: { "tfe:address": server.url, "tfe:organization": organization },
      secrets: { "tfe:token": token },
    });
    await declare([
      {
        resource: "require-tags",
        description: "Resources carry an owner tag",
        enforcementLevel: "soft-mandatory",
        codeFile: "policies/require-tags.sentinel",
        policySetIds: [policySetId],
      },
      { resource: "restrict-types", enforcementLevel: "hard-mandatory", codeFile: "policies/restrict-types.sentinel" },
      {
        resource: "deny-public",
        kind: "opa",
        query: "data.terraform.deny",
        enforcementLevel: "mandatory",
        codeFile: "policies/deny-public.rego",
      },
    ]);
  }, 120_000);

  afterAll(async () => {
    await client?.close();
    await server?.close();
    await project?.dispose();
  });

  it("1. up creates exactly what the program declares", async () => {
    await project.up();
    const held = await serverPolicies();
    expect(held.map((policy) => policy.name).sort()).toEqual(["deny-public", "require-tags", "restrict-types"]);
    const tags = held.find((policy) => policy.name === "require-tags")!;
    expect(tags).toMatchObject({ kind: "sentinel", enforcementLevel: "soft-mandatory", policySetIds: [policySetId] });
    expect((await client.policies.download(tags.id)).toString()).toBe(requireTags);
    const opa = held.find((policy) => policy.name === "deny-public")!;
    expect(opa).toMatchObject({ kind: "opa", query: "data.terraform.deny", enforcementLevel: "mandatory" });
    expect((await client.policies.download(opa.id)).toString()).toBe(denyPublic);
    const version = await client.registry.getModuleVersion({
      namespace: organization,
      name: "vpc",
      provider: "aws",
      version: "1.0.0",
    });
    expect(version.deprecation?.reason.startsWith(deprecation.reason)).toBe(true);
  }, 180_000);

  it("2. preview right after shows no changes and sends no mutating request", async () => {
    server.requestLog.clear();
    const preview = await project.run(["preview", "--expect-no-changes", "--json"]);
    expect(changeSummary(preview)).toEqual({ same: 5 });
    expect(mutatingRequests()).toEqual([]);
  }, 120_000);

  it("3. a changed enforcement level updates in place; an edited file uploads the new code", async () => {
    // Lowered, which weakens governance: the program says it is intended.
    const lowered = { enforcementLevel: "advisory", allowWeakening: true };
    await declare(policies.map((p) => (p.resource === "restrict-types" ? { ...p, ...lowered } : p)));
    const levelPreview = await project.run(["preview", "--json"]);
    expect(changeSummary(levelPreview)).toMatchObject({ update: 1 });
    const before = (await serverPolicy("restrict-types"))!.id;
    await project.up();
    const after = (await serverPolicy("restrict-types"))!;
    expect(after).toMatchObject({ id: before, enforcementLevel: "advisory" });

    const edited = `${requireTags}# v2: also require cost-center\n`;
    await project.writeFile("policies/require-tags.sentinel", edited);
    server.requestLog.clear();
    await project.up();
    const tags = (await serverPolicy("require-tags"))!;
    expect((await client.policies.download(tags.id)).toString()).toBe(edited);
    expect(mutatingRequests().map((entry) => entry.method)).toEqual(["PUT"]);
  }, 180_000);

  it("4. a renamed policy is replaced; a new kind under the same name is deleted before it is replaced", async () => {
    await declare(
      policies.map((p) => (p.resource === "restrict-types" ? { ...p, name: "restrict-instance-types" } : p)),
    );
    await project.up();
    expect(await serverPolicy("restrict-types")).toBeUndefined();
    expect(await serverPolicy("restrict-instance-types")).toMatchObject({ enforcementLevel: "advisory" });

    await project.writeFile("policies/restrict-types.rego", 'package terraform\n\ndeny[msg] { false; msg := "" }\n');
    await declare(
      policies.map((p) =>
        p.resource === "restrict-types"
          ? {
              ...p,
              kind: "opa",
              query: "data.terraform.deny",
              enforcementLevel: "advisory",
              codeFile: "policies/restrict-types.rego",
            }
          : p,
      ),
    );
    const replaced = await project.up();
    expect(replaced.output).toMatch(/replaced/);
    expect(await serverPolicy("restrict-instance-types")).toMatchObject({ kind: "opa", enforcementLevel: "advisory" });
  }, 240_000);

  it("5. changes made outside Pulumi show as drift, refresh records them, and up converges", async () => {
    const tags = (await serverPolicy("require-tags"))!;
    const opa = (await serverPolicy("deny-public"))!;
    const restrict = (await serverPolicy("restrict-instance-types"))!;
    await client.policies.update(tags.id, { enforcementLevel: "hard-mandatory", description: "changed in the UI" });
    await client.policies.upload(opa.id, 'package terraform\n\ndeny[msg] { msg := "edited by hand" }\n');
    await client.policies.delete(restrict.id);
    await client.moduleVersions.undeprecate({ organization, name: "vpc", provider: "aws", version: "1.0.0" });

    // The drift check fails: the level raised outside is what the service enforces now, and putting the declared,
    // lower one back would weaken it, which the preview says first, once, under the resource.
    const drift = await project.run(["preview", "--refresh", "--expect-no-changes", "--diff"], { allowFailure: true });
    expect(drift.code).not.toBe(0);
    expect(drift.output).toMatch(
      /policy "require-tags" weakens governance: enforcementLevel goes from hard-mandatory to soft-mandatory\./,
    );
    expect(drift.output).not.toContain("GovernanceRefusal");
    expect(drift.output).toMatch(/codeHash/);

    // A refresh records every outside change, and shows each.
    const refresh = await project.run(["refresh", "--yes", "--diff"]);
    for (const change of [/enforcementLevel/, /description/, /codeHash/, /restrict-types/, /vpc-1-0-0/]) {
      expect(refresh.output).toMatch(change);
    }
    // From the state now: putting the declared, lower level back weakens what the service enforces, and is refused
    // until the stack allows it.
    const refused = await project.run(["up", "--yes", "--skip-preview"], { allowFailure: true });
    expect(refused.code).not.toBe(0);
    expect(refused.output).toMatch(
      /policy "require-tags" weakens governance: enforcementLevel goes from hard-mandatory to soft-mandatory\./,
    );
    await project.run(["config", "set", "tfe:allowWeakening", "true"]);
    await project.up();
    await project.run(["config", "rm", "tfe:allowWeakening"]);
    expect(await serverPolicy("require-tags")).toMatchObject({
      enforcementLevel: "soft-mandatory",
      description: "Resources carry an owner tag",
    });
    const restored = (await serverPolicy("deny-public"))!;
    expect((await client.policies.download(restored.id)).toString()).toBe(denyPublic);
    expect(await serverPolicy("restrict-instance-types")).toMatchObject({ kind: "opa" });
    const version = await client.registry.getModuleVersion({
      namespace: organization,
      name: "vpc",
      provider: "aws",
      version: "1.0.0",
    });
    expect(version.deprecation).not.toBeNull();

    await project.run(["preview", "--expect-no-changes"]);
  }, 300_000);

  it("6. destroy leaves none of the program's policies and no deprecation", async () => {
    await project.run(["destroy", "--yes"]);
    expect(await serverPolicies()).toEqual([]);
    const versions = await client.registry.listModuleVersions({
      namespace: organization,
      name: "vpc",
      provider: "aws",
    });
    expect(versions.map((version) => version.deprecation)).toEqual([null, null, null]);
  }, 180_000);

  it("7. the state holds no token, nothing computed from secret code, and each serialized provider is at most 4 KB", async () => {
    const secretCode = "main = rule { true } # secret-code-marker-93af\n";
    await declare([...policies, { resource: "secret-code", enforcementLevel: "advisory", secretCode }]);
    await project.up();
    const state = await project.stateText();
    expect(state).not.toContain(token);
    // Its hash would let anyone with the state test guesses of the code: it is as secret as the code.
    expect(state).not.toContain("secret-code-marker-93af");
    expect(state).not.toContain(createHash("sha256").update(secretCode).digest("hex"));
    const again = await project.run(["preview", "--expect-no-changes"], { allowFailure: true });
    expect(again.code, again.output).toBe(0);
    const providers = [...state.matchAll(/"__provider":\s*("(?:[^"\\]|\\.)*")/g)].map(
      (match) => JSON.parse(match[1]!) as string,
    );
    expect(providers.length).toBeGreaterThanOrEqual(4);
    for (const provider of providers) {
      expect(provider).not.toContain(token);
      expect(Buffer.byteLength(provider)).toBeLessThanOrEqual(4096);
    }
    await project.run(["destroy", "--yes"]);
  }, 240_000);
});
