import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TfeClient } from "../../src/client";
import type { RunningServer } from "../../src/server";
import { startSeededServer } from "../seeded-server";
import { changeSummary, PulumiProject } from "./pulumi-project";
import { policiesOnService, policyIdsInState, stackState } from "./service-and-state";

// One owner per object, under the real engine: a resource renamed without `aliases` creates its new entry before
// deleting the old one, and that create must fail on the taken name (or the deprecated version) rather than take
// the object over and let the old entry's delete remove it. With `aliases` the rename is no change at all.

const organization = "acme";
const token = "ownership-token-0123456789abcdef";
const deprecationRoute =
  "PATCH /api/v2/organizations/:organization/registry-modules/private/:namespace/:name/:provider/:version";

/** A program of one policy, one deprecation and one folder, each under a name (and aliases) the test chooses. */
function program(names: { policy: string; deprecation: string; folder: string; aliased?: boolean }): string {
  const aliases = (old: string) => (names.aliased ? `{ aliases: [{ name: ${JSON.stringify(old)} }] }` : "{}");
  return [
    'const { ModuleVersionDeprecation, Policy, PolicyFolder } = require("pulumi-tfe-governance");',
    `new Policy(${JSON.stringify(names.policy)}, { name: "require-tags", enforcementLevel: "hard-mandatory",`,
    `  code: "main = rule { true }\\n" }, ${aliases("policy")});`,
    `new ModuleVersionDeprecation(${JSON.stringify(names.deprecation)}, { moduleName: "vpc", moduleProvider: "aws",`,
    `  version: "1.0.0", reason: "Use 1.1.0." }, ${aliases("deprecation")});`,
    `new PolicyFolder(${JSON.stringify(names.folder)}, { directory: "folder" }, ${aliases("folder")});`,
  ].join("\n");
}

describe("renames and duplicate declarations under the real engine", () => {
  let server: RunningServer;
  let client: TfeClient;
  let project: PulumiProject;

  const writes = () =>
    server.requestLog
      .entries()
      .filter((entry) => entry.method !== "GET")
      .map((entry) => `${entry.method} ${entry.route}`);
  const serviceNames = async () => (await policiesOnService(client, organization)).map((p) => p.name).sort();
  const deprecated = async () =>
    (
      await client.registry.getModuleVersion({
        namespace: organization,
        name: "vpc",
        provider: "aws",
        version: "1.0.0",
      })
    ).deprecation;

  beforeAll(async () => {
    server = await startSeededServer({
      organization,
      token,
      modules: [{ name: "vpc", provider: "aws", versions: ["1.0.0", "1.1.0"] }],
    });
    client = new TfeClient({ address: server.url, token, rateLimit: false });
    project = await PulumiProject.create({
      name: "tfe-ownership",
      files: {
        "index.js": program({ policy: "policy", deprecation: "deprecation", folder: "folder" }),
        "folder/sentinel.hcl": 'policy "folder-rule" {\n  enforcement_level = "advisory"\n}\n',
        "folder/folder-rule.sentinel": "main = rule { true }\n",
      },
      config: { "tfe:address": server.url, "tfe:organization": organization },
      secrets: { "tfe:token": token },
    });
    await project.up();
  }, 180_000);

  afterAll(async () => {
    await client?.close();
    await server?.close();
    await project?.dispose();
  });

  it("renaming every resource with aliases changes nothing", async () => {
    await project.writeFile(
      "index.js",
      program({ policy: "renamed", deprecation: "moved", folder: "checks", aliased: true }),
    );
    server.requestLog.clear();
    const preview = await project.run(["preview", "--json"]);
    expect(changeSummary(preview)).not.toHaveProperty("create");
    expect(changeSummary(preview)).not.toHaveProperty("delete");
    await project.run(["up", "--yes", "--skip-preview"]);
    expect(writes()).toEqual([]);
    expect(await serviceNames()).toEqual(["folder-rule", "require-tags"]);
    expect(await deprecated()).not.toBeNull();
    await project.run(["preview", "--expect-no-changes"]);
  }, 180_000);

  it("renaming each again without aliases fails up, naming the way out, and loses nothing", async () => {
    const before = await stackState(project);
    const policiesBefore = await policiesOnService(client, organization);
    const current = { policy: "renamed", deprecation: "moved", folder: "checks" };
    const renames = [
      {
        names: { ...current, policy: "again" },
        refusal: /"require-tags" already exists .*did not create it.*aliases/s,
      },
      {
        names: { ...current, deprecation: "elsewhere" },
        refusal: /acme\/vpc\/aws\/1\.0\.0 is already deprecated .*did not deprecate it.*aliases/s,
      },
      { names: { ...current, folder: "rules" }, refusal: /"folder-rule" already exists .*did not create it.*aliases/s },
    ];
    for (const { names, refusal } of renames) {
      await project.writeFile("index.js", program(names));
      server.requestLog.clear();
      const failed = await project.run(["up", "--yes", "--skip-preview"], { allowFailure: true });
      expect(failed.code).not.toBe(0);
      expect(failed.output).toMatch(refusal);
      // The refused create wrote nothing but its POST; nothing was deleted or reinstated.
      expect(writes().filter((write) => !write.startsWith("POST "))).toEqual([]);
    }
    expect(await policiesOnService(client, organization)).toEqual(policiesBefore);
    expect(await deprecated()).not.toBeNull();
    expect(policyIdsInState(await stackState(project)).sort()).toEqual(policyIdsInState(before).sort());
  }, 180_000);

  it("two new resources declaring one policy name or one version: one of each fails, nothing is made twice", async () => {
    const aliased = program({ policy: "renamed", deprecation: "moved", folder: "checks", aliased: true });
    const pair = (resource: string, adopt: boolean) =>
      [
        `new Policy("${resource}", { name: "pair", code: "main = rule { true }\\n", adoptExisting: ${adopt} });`,
        `new ModuleVersionDeprecation("${resource}", { moduleName: "vpc", moduleProvider: "aws", version: "1.1.0",`,
        `  reason: "Use 1.2.0.", adoptExisting: ${adopt} });`,
      ].join("\n");
    await project.writeFile("index.js", [aliased, pair("first", false), pair("second", true)].join("\n"));
    server.requestLog.clear();
    const failed = await project.run(["up", "--yes", "--skip-preview"], { allowFailure: true });
    expect(failed.code).not.toBe(0);
    // The engine stops starting steps at the first failure, so which refusals print, and whether the policy was made
    // before one, depend on timing; that nothing is made twice or left out of state does not.
    expect(failed.output).toMatch(
      /"pair" (already exists|\(pol-[^)]+\) is already managed by another resource)|1\.1\.0 is (already deprecated|declared by another resource of this stack too)/,
    );
    // Made once at most, and then in state once: where the other refusal stopped the engine first, not at all.
    const pairs = (await policiesOnService(client, organization)).filter((policy) => policy.name === "pair");
    expect(pairs.length).toBeLessThanOrEqual(1);
    const state = await stackState(project);
    expect(policyIdsInState(state).filter((id) => pairs.some((pair) => pair.id === id))).toHaveLength(pairs.length);
    expect(
      state.resources.filter((resource) => resource.id === "acme/vpc/aws/1.1.0").length,
      "the version is in state once at most",
    ).toBeLessThanOrEqual(1);
    expect(writes().filter((write) => write === deprecationRoute).length).toBeLessThanOrEqual(1);
    expect(writes().filter((write) => write.startsWith("DELETE "))).toEqual([]);
  }, 180_000);
});
