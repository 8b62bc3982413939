import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TfeClient } from "../../src/client";
import { providerSource } from "../../src/resources/shim";
import type { RunningServer } from "../../src/server";
import { startSeededServer } from "../seeded-server";
import { PulumiProject } from "./pulumi-project";

// What each operation costs in requests under the real engine, counted exactly from the server's request log
// (times are not asserted: the machine is shared). Four policies with code from files, two deprecations.

const token = "e2e-counts-token-0123456789";
const organization = "acme";
const programSource = readFileSync(join(__dirname, "program", "index.js"), "utf8");
const names = ["tags", "types", "regions", "costs"];
const versions = ["1.0.0", "1.1.0"];
const policySetId = "polset-CountsBaseline1";

function declared(enforcementLevel: string, policyArgs: Record<string, unknown> = {}) {
  return {
    policies: names.map((name) => ({
      resource: name,
      enforcementLevel,
      codeFile: `policies/${name}.sentinel`,
      ...policyArgs,
    })),
    deprecations: versions.map((version) => ({
      resource: `vpc-${version}`,
      moduleName: "vpc",
      moduleProvider: "aws",
      version,
      reason: `${version} is superseded`,
    })),
  };
}

/** Requests answered while `action` ran, as "METHOD route" (the download origin's as "GET download origin"). */
async function requestsWhile(server: RunningServer, action: () => Promise<unknown>): Promise<Record<string, number>> {
  server.requestLog.clear();
  await action();
  const counts: Record<string, number> = {};
  for (const entry of server.requestLog.entries()) {
    const key = `${entry.method} ${entry.origin === "download" ? "download origin" : entry.route}`;
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

describe("requests per operation under the real engine", () => {
  let server: RunningServer;
  let project: PulumiProject;

  const requestsOf = (action: () => Promise<unknown>) => requestsWhile(server, action);
  const declare = (enforcementLevel: string, policyArgs: Record<string, unknown> = {}) =>
    project.writeFile("spec.json", JSON.stringify(declared(enforcementLevel, policyArgs)));

  beforeAll(async () => {
    server = await startSeededServer({
      organization,
      token,
      policySetId,
      modules: [{ name: "vpc", provider: "aws", versions }],
    });
    const files: Record<string, string> = { "index.js": programSource };
    for (const name of names) files[`policies/${name}.sentinel`] = `main = rule { true } # ${name}\n`;
    project = await PulumiProject.create({
      name: "tfe-governance-counts",
      files,
      config: { "tfe:address": server.url, "tfe:organization": organization },
      secrets: { "tfe:token": token },
    });
    await declare("soft-mandatory");
  }, 120_000);

  afterAll(async () => {
    await server?.close();
    await project?.dispose();
  });

  it("up from empty: one listing of names and one of versions at check; POST and upload per policy; a deprecation reads, then deprecates", async () => {
    expect(await requestsOf(() => project.up())).toEqual({
      // Check, before any write: are the names free, do the versions exist (one listing each, for every resource).
      "GET /api/v2/organizations/:organization/policies": 1,
      "GET /api/registry/v1/modules/:namespace/:name/:provider/versions": 1,
      // Two requests per policy: the upload's answer (its Date) spares both a read-back and the first refresh's
      // download.
      "POST /api/v2/organizations/:organization/policies": 4,
      "PUT /api/v2/policies/:policyId/upload": 4,
      // A version already deprecated as the program says is taken over without a second deprecation.
      "GET /api/registry/v1/modules/:namespace/:name/:provider/:version": 2,
      "PATCH /api/v2/organizations/:organization/registry-modules/private/:namespace/:name/:provider/:version": 2,
    });
  }, 180_000);

  it("state per policy is at most 3 KB, the provider's text written once in inputs and once in outputs", async () => {
    const state = JSON.parse((await project.run(["stack", "export"])).stdout) as {
      deployment: { resources: { type: string; inputs: Record<string, unknown>; outputs: Record<string, unknown> }[] };
    };
    const policies = state.deployment.resources.filter((resource) => resource.type.endsWith(":Policy"));
    expect(policies).toHaveLength(4);
    for (const policy of policies) {
      expect(Buffer.byteLength(JSON.stringify(policy))).toBeLessThanOrEqual(3072);
      expect(policy.inputs.__provider).toBe(providerSource("Policy"));
      expect(policy.outputs.__provider).toBe(providerSource("Policy"));
    }
  }, 60_000);

  it("a no-change preview sends no request", async () => {
    expect(await requestsOf(() => project.run(["preview", "--expect-no-changes"]))).toEqual({});
  }, 120_000);

  // Without --skip-preview the engine reads everything twice: once to preview the refresh, once to do it.
  const refresh = ["refresh", "--yes", "--skip-preview", "--expect-no-changes"];
  const registry = {
    version: "GET /api/registry/v1/modules/:namespace/:name/:provider/:version",
    versions: "GET /api/registry/v1/modules/:namespace/:name/:provider/versions",
  };

  it("the first refresh after up is as cheap as the next: one show, the organization's list, no download", async () => {
    expect(await requestsOf(() => project.run(refresh))).toEqual({
      "GET /api/v2/policies/:policyId": 1,
      "GET /api/v2/organizations/:organization/policies": 1,
      [registry.version]: 1,
      [registry.versions]: 1,
    });
  }, 120_000);

  it("a no-drift refresh: one show and the organization's list for the policies, no download; one module read", async () => {
    expect(await requestsOf(() => project.run(refresh))).toEqual({
      "GET /api/v2/policies/:policyId": 1,
      "GET /api/v2/organizations/:organization/policies": 1,
      [registry.version]: 1,
      [registry.versions]: 1,
    });
  }, 120_000);

  it("a changed enforcement level: one PATCH per policy, and one look at what the service holds", async () => {
    await declare("hard-mandatory");
    // What the service enforces is read before a level changes (one show, then the organization's list for the
    // rest), as a level raised outside since the last refresh must not be lowered unnoticed.
    expect(await requestsOf(() => project.up())).toEqual({
      "PATCH /api/v2/policies/:policyId": 4,
      "GET /api/v2/policies/:policyId": 1,
      "GET /api/v2/organizations/:organization/policies": 1,
    });
  }, 180_000);

  it("a policy set joined, then left: one request per policy and set, the same policy ids, leaving refused unless allowed", async () => {
    const policyIds = async () => JSON.parse((await project.run(["stack", "output", "--json", "policyIds"])).stdout);
    const before = await policyIds();
    const relationships = "/api/v2/policy-sets/:policySetId/relationships/policies";
    await declare("hard-mandatory", { policySetIds: [policySetId] });
    // The set is read once (its kind, whether it takes policies), what the service holds once as above.
    expect(await requestsOf(() => project.up())).toEqual({
      [`POST ${relationships}`]: 4,
      "GET /api/v2/policy-sets/:policySetId": 1,
      "GET /api/v2/policies/:policyId": 1,
      "GET /api/v2/organizations/:organization/policies": 1,
    });

    await declare("hard-mandatory", { policySetIds: [] });
    const refused = await requestsOf(async () => {
      const preview = await project.run(["preview"], { allowFailure: true });
      expect(preview.code).not.toBe(0);
      // The engine stops at the first refusal: which policy it names depends on timing.
      expect(preview.output).toMatch(
        new RegExp(`policy "(${names.join("|")})" weakens governance: it leaves policy set ${policySetId}`),
      );
    });
    expect(Object.keys(refused).filter((route) => !route.startsWith("GET "))).toEqual([]);

    await declare("hard-mandatory", { policySetIds: [], allowWeakening: true });
    expect(await requestsOf(() => project.up())).toEqual({
      [`DELETE ${relationships}`]: 4,
      "GET /api/v2/policies/:policyId": 1,
      "GET /api/v2/organizations/:organization/policies": 1,
    });
    expect(await policyIds()).toEqual(before);
  }, 240_000);

  it("destroy: one DELETE per policy, one PATCH per deprecation", async () => {
    expect(await requestsOf(() => project.run(["destroy", "--yes", "--skip-preview"]))).toEqual({
      "DELETE /api/v2/policies/:policyId": 4,
      "PATCH /api/v2/organizations/:organization/registry-modules/private/:namespace/:name/:provider/:version": 2,
    });
  }, 180_000);
});

// The scheduled drift check at the service's own rate limit (30 requests per second per token), at N = 200: what it
// costs when nothing drifted, and that it still finds an outside level change and an outside upload.
describe("a drift check of 200 policies at the service's rate limit", () => {
  const count = 200;
  let server: RunningServer;
  let project: PulumiProject;
  const policies = Array.from({ length: count }, (_, index) => ({
    resource: `drift-${index}`,
    enforcementLevel: "soft-mandatory",
    code: `main = rule { true } # ${index}\n`,
  }));

  const apiRequests = (action: () => Promise<unknown>) => requestsWhile(server, action);
  let upRequests: Record<string, number>;

  beforeAll(async () => {
    server = await startSeededServer({ organization, token }, { rateLimit: 30 });
    project = await PulumiProject.create({
      name: "tfe-governance-drift",
      files: { "index.js": programSource, "spec.json": JSON.stringify({ policies, deprecations: [] }) },
      config: { "tfe:address": server.url, "tfe:organization": organization },
      secrets: { "tfe:token": token },
    });
    upRequests = await apiRequests(() => project.run(["up", "--yes", "--skip-preview"]));
  }, 600_000);

  afterAll(async () => {
    await server?.close();
    await project?.dispose();
  });

  it("up: two requests per policy (create, upload) and the one listing of names at check", () => {
    expect(upRequests).toEqual({
      "GET /api/v2/organizations/:organization/policies": 1,
      "POST /api/v2/organizations/:organization/policies": count,
      "PUT /api/v2/policies/:policyId/upload": count,
    });
  });

  it("no drift, right after up: one show and two list pages, no download", async () => {
    const refresh = ["refresh", "--yes", "--skip-preview", "--expect-no-changes"];
    expect(await apiRequests(() => project.run(refresh))).toEqual({
      "GET /api/v2/policies/:policyId": 1,
      "GET /api/v2/organizations/:organization/policies": 2,
    });
  }, 300_000);

  it("an outside level change and an outside upload fail the drift check, and refresh records both", async () => {
    const client = new TfeClient({ address: server.url, token });
    try {
      const ids = JSON.parse((await project.run(["stack", "output", "policyIds", "--json"])).stdout);
      await client.policies.update(ids["drift-7"], { enforcementLevel: "hard-mandatory" });
      await client.policies.upload(ids["drift-42"], "main = rule { false }\n");
      const check = await project.run(["preview", "--refresh", "--expect-no-changes", "--diff"], {
        allowFailure: true,
      });
      expect(check.code).not.toBe(0);
      expect(check.output).toMatch(/drift-7[\s\S]*enforcementLevel/);
      expect(check.output).toMatch(/drift-42[\s\S]*codeHash/);

      const recorded = await apiRequests(() => project.run(["refresh", "--yes", "--skip-preview"]));
      expect(recorded).toEqual({
        "GET /api/v2/policies/:policyId": 1,
        "GET /api/v2/organizations/:organization/policies": 2,
        // The upload moved drift-42's updated-at; our server moves it on a PATCH too (drift-7).
        "GET /api/v2/policies/:policyId/download": 2,
        "GET download origin": 2,
      });
      const state = JSON.parse((await project.run(["stack", "export"])).stdout) as {
        deployment: { resources: { urn: string; outputs: Record<string, unknown> }[] };
      };
      const outputsOf = (name: string) =>
        state.deployment.resources.find((resource) => resource.urn.endsWith(`::${name}`))?.outputs;
      expect(outputsOf("drift-7")).toMatchObject({ enforcementLevel: "hard-mandatory" });
      expect(outputsOf("drift-42")).toMatchObject({ code: "main = rule { false }\n" });
    } finally {
      await client.close();
    }
  }, 300_000);
});
