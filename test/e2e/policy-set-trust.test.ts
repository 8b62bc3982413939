import { cpSync, rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TfeClient } from "../../src/client";
import type { RunningServer } from "../../src/server";
import { startServer } from "../../src/server";
import { PulumiProject } from "./pulumi-project";
import { stackState } from "./service-and-state";

// PolicySet under the real Pulumi engine and Node.js language host, each way a set could be weakened, emptied or
// lost behind a team's back: memberships with one owner, replacements, a removed folder, a renamed member policy,
// a scope change that fails half-way, tokens that cannot see the set, a lost create answer, a link to the process
// environment, a credential given in plain text.

const organization = "acme";
const token = "e2e-trust-token-0123456789";
const readOnlyToken = "e2e-trust-reader-0123456789";
const outsiderToken = "e2e-trust-outsider-0123456789";
const production = "ws-production0000001";
const staging = "ws-staging000000001";
const examples = join(__dirname, "..", "..", "examples", "quickstart", "policy-sets");

const program = `
const pulumi = require("@pulumi/pulumi");
const { Policy, PolicySet } = require("pulumi-tfe-governance");
const config = new pulumi.Config();
const json = (key, fallback) => JSON.parse(config.get(key) ?? JSON.stringify(fallback));
const code = "main = rule { true }\\n";

// The pattern docs/policy-sets.md recommends: the set declares its policies.
const memberName = config.get("memberName") ?? "member";
const member = new Policy(
  memberName,
  { name: config.get("memberServiceName"), code, enforcementLevel: config.get("memberLevel") ?? "hard-mandatory" },
  { aliases: json("memberAliases", []) },
);
const bySet = new PolicySet("by-set", { policyIds: [member.policyId], workspaceIds: json("bySetWorkspaces", ["${production}"]) });

// The other way round: the policy declares its set.
const byPolicy = new PolicySet("by-policy", { workspaceIds: ["${production}"] });
const joiner = new Policy("joiner", { code, enforcementLevel: "hard-mandatory", policySetIds: [byPolicy.policySetId] });

const folderArgs = {
  global: config.getBoolean("global") ?? true,
  workspaceIds: json("workspaces", []),
  parameters: json("parameters", {}),
};
if (config.get("folder") !== "none") folderArgs.directory = config.get("folder") ?? "sentinel-baseline";
const folderSet = new PolicySet("folder-set", folderArgs);
exports.ids = { member: member.policyId, joiner: joiner.policyId, bySet: bySet.policySetId, byPolicy: byPolicy.policySetId, folderSet: folderSet.policySetId };
`;

describe("PolicySet a team can trust, under the real engine", () => {
  let server: RunningServer;
  let client: TfeClient;
  let project: PulumiProject;

  const writes = () => server.requestLog.entries().filter((entry) => entry.method !== "GET");
  const ids = async () =>
    JSON.parse((await project.run(["stack", "output", "ids", "--json"])).stdout) as Record<
      "member" | "joiner" | "bySet" | "byPolicy" | "folderSet",
      string
    >;
  const setConfig = (key: string, value: string) => project.run(["config", "set", key, value]);
  const removeConfig = (key: string) => project.run(["config", "rm", key]);

  beforeAll(async () => {
    server = await startServer({
      seed: {
        organizations: [{ name: organization, plus: true }, { name: "globex" }],
        tokens: [
          { token, organizations: [organization] },
          { token: readOnlyToken, organizations: [organization], managePolicies: false },
          { token: outsiderToken, organizations: ["globex"] },
        ],
        workspaces: [production, staging].map((id) => ({ id, organization, name: id })),
      },
    });
    client = new TfeClient({ address: server.url, token, rateLimit: false });
    project = await PulumiProject.create({
      name: "tfe-policy-set-trust",
      files: { "index.js": program },
      config: { "tfe:address": server.url, "tfe:organization": organization },
      secrets: { "tfe:token": token },
    });
    for (const example of ["sentinel-baseline", "opa-network"]) {
      cpSync(join(examples, example), join(project.dir, example), { recursive: true });
    }
    await project.up();
  }, 180_000);

  afterAll(async () => {
    await project?.dispose();
    await client?.close();
    await server?.close();
  });

  it("both membership patterns pass up, refresh and a no-change preview, with each policy still in its set", async () => {
    await project.run(["refresh", "--yes"]);
    await project.run(["preview", "--expect-no-changes"]);
    const { member, joiner, bySet, byPolicy } = await ids();
    expect((await client.policySets.read(bySet)).policyIds).toEqual([member]);
    expect((await client.policySets.read(byPolicy)).policyIds).toEqual([joiner]);
  }, 120_000);

  it("a membership removed outside Pulumi is drift on the resource that declared it, and only there", async () => {
    const { member, joiner, bySet, byPolicy } = await ids();
    await client.policySets.removePolicies(bySet, [member]);
    await client.policySets.removePolicies(byPolicy, [joiner]);
    const drift = await project.run(["preview", "--refresh", "--expect-no-changes", "--json"], { allowFailure: true });
    expect(drift.code).not.toBe(0);
    const steps = (JSON.parse(drift.stdout) as { steps: { op: string; urn: string }[] }).steps;
    const changed = steps
      .filter((step) => step.op !== "same" && step.op !== "refresh")
      .map((step) => `${step.urn.split("::").pop()} ${step.op}`);
    expect(changed.sort()).toEqual(["by-set update", "joiner update"]);
    await project.run(["up", "--yes", "--refresh", "--skip-preview"]);
    expect((await client.policySets.read(bySet)).policyIds).toEqual([member]);
    expect((await client.policySets.read(byPolicy)).policyIds).toEqual([joiner]);
    await project.run(["preview", "--refresh", "--expect-no-changes"]);
  }, 120_000);

  it("a kind change that enforces less fails preview, naming what is lost; allowed for one run, it says the window", async () => {
    await setConfig("folder", "opa-network");
    server.requestLog.clear();
    const refused = await project.run(["preview"], { allowFailure: true });
    expect(refused.code).not.toBe(0);
    expect(refused.output).toMatch(
      /PolicySet folder-set +error: policy set "folder-set" weakens governance: kind goes from sentinel to opa/,
    );
    expect(refused.output).toContain('policy "approved-regions" (hard-mandatory) is removed');
    expect(writes()).toEqual([]);
    const allowed = await project.run(["preview"], { env: { TFE_ALLOW_WEAKENING: "true" } });
    expect(allowed.output).toMatch(/no set of that name enforces in between/);
    expect(allowed.output).toMatch(/folder-set.*replace|replace.*folder-set/s);
    await removeConfig("folder");
  }, 120_000);

  it("removing directory from a versioned set fails preview with what to do instead", async () => {
    await setConfig("folder", "none");
    server.requestLog.clear();
    const refused = await project.run(["preview"], { allowFailure: true });
    await removeConfig("folder");
    expect(refused.code).not.toBe(0);
    expect(refused.output).toContain("directory cannot be removed from a set that holds versions");
    expect(writes()).toEqual([]);
  }, 120_000);

  it("renaming a member policy without aliases fails preview naming it and aliases; with aliases nothing changes", async () => {
    const { member } = await ids();
    await setConfig("memberName", "member-renamed");
    server.requestLog.clear();
    const refused = await project.run(["preview"], { allowFailure: true });
    expect(refused.code).not.toBe(0);
    expect(refused.output).toContain(`policyIds loses ${member} ("member")`);
    expect(refused.output).toContain("aliases resource option");
    expect(writes()).toEqual([]);
    // The same rename that keeps the policy's name and gives the old resource name as an alias keeps the policy
    // (and its id): nothing changes.
    await setConfig("memberServiceName", "member");
    await setConfig("memberAliases", JSON.stringify([{ name: "member" }]));
    await project.run(["preview", "--expect-no-changes"]);
    for (const key of ["memberName", "memberServiceName", "memberAliases"]) await removeConfig(key);
  }, 120_000);

  it("a workspace id that does not exist fails preview naming it, before any write", async () => {
    await setConfig("global", "false");
    await setConfig("workspaces", JSON.stringify([production, "ws-doesnotexist0001"]));
    server.requestLog.clear();
    const refused = await project.run(["preview"], { allowFailure: true, env: { TFE_ALLOW_WEAKENING: "true" } });
    expect(refused.code).not.toBe(0);
    expect(refused.output).toContain("workspace ws-doesnotexist0001 does not exist");
    expect(writes()).toEqual([]);
  }, 120_000);

  it("turning global off whose workspace join fails half-way: the set applies everywhere again, and state says so", async () => {
    await setConfig("workspaces", JSON.stringify([production]));
    server.setFaults([
      { route: "POST /api/v2/policy-sets/:policySetId/relationships/workspaces", status: 500, times: 20 },
    ]);
    const failed = await project.run(["up", "--yes", "--skip-preview"], {
      allowFailure: true,
      env: { TFE_ALLOW_WEAKENING: "true", TFE_MAX_RETRIES: "1" },
    });
    server.setFaults([]);
    expect(failed.code).not.toBe(0);
    const { folderSet } = await ids();
    expect(await client.policySets.read(folderSet)).toMatchObject({ global: true, workspaceIds: [] });
    const recorded = (await stackState(project)).resources.find((resource) => resource.id === folderSet) as unknown as {
      outputs: { global: boolean };
    };
    expect(recorded.outputs.global).toBe(true);
    // The next up converges from what state recorded.
    await project.run(["up", "--yes", "--skip-preview"], { env: { TFE_ALLOW_WEAKENING: "true" } });
    expect(await client.policySets.read(folderSet)).toMatchObject({ global: false, workspaceIds: [production] });
    await project.run(["preview", "--expect-no-changes"]);
  }, 180_000);

  it("a token that cannot see the set fails refresh and keeps it; a read-only token fails destroy and leaves it", async () => {
    const before = (await stackState(project)).resources.length;
    await project.run(["config", "set", "--secret", "tfe:token", outsiderToken]);
    const refresh = await project.run(["refresh", "--yes", "--run-program"], { allowFailure: true });
    expect(refresh.code).not.toBe(0);
    // Policies and sets fail alike; which the engine meets first varies.
    expect(refresh.output).toMatch(/this token cannot list the (policy sets|policies) of organization/);
    expect((await stackState(project)).resources.length).toBe(before);
    await project.run(["config", "set", "--secret", "tfe:token", readOnlyToken]);
    const destroy = await project.run(["destroy", "--yes", "--run-program"], { allowFailure: true });
    expect(destroy.code).not.toBe(0);
    expect(destroy.output).toContain("is still there and enforcing");
    const { folderSet } = await ids();
    expect((await client.policySets.read(folderSet)).id).toBe(folderSet);
    await project.run(["config", "set", "--secret", "tfe:token", token]);
    await project.run(["refresh", "--yes", "--run-program"]);
    await project.run(["preview", "--expect-no-changes"]);
  }, 180_000);

  it("a create whose answer is lost converges in one up, with no duplicate and nothing outside the state", async () => {
    await project.writeFile(
      "index.js",
      `${program}\nexports.late = new PolicySet("late", { workspaceIds: ["${staging}"] }).policySetId;\n`,
    );
    server.setFaults([
      { route: "POST /api/v2/organizations/:organization/policy-sets", status: 503, afterHandler: true, times: 1 },
    ]);
    await project.up();
    server.setFaults([]);
    const named = [];
    for await (const set of client.policySets.listAll(organization, { search: "late" })) named.push(set.id);
    const late = JSON.parse((await project.run(["stack", "output", "late", "--json"])).stdout) as string;
    expect(named).toEqual([late]);
    await project.writeFile("index.js", program);
    await project.up();
  }, 180_000);

  it("a link to the process environment and a credential in plain text fail preview, printing neither", async () => {
    const canary = "canary-value-of-the-environment-1234";
    const link = join(project.dir, "sentinel-baseline", "environ.sentinel");
    symlinkSync("/proc/self/environ", link);
    server.requestLog.clear();
    const linked = await project.run(["preview"], { allowFailure: true, env: { E2E_CANARY: canary } });
    rmSync(link);
    expect(linked.code).not.toBe(0);
    expect(linked.output).toMatch(
      /environ\.sentinel \(a link to \/proc\/self\/environ\) leads to \/proc\/.*which the kernel serves/,
    );
    expect(linked.output).not.toContain(canary);
    expect(writes()).toEqual([]);

    const plain = "pl41n-t0ken-v4lue";
    await setConfig("parameters", JSON.stringify({ api_token: plain }));
    const refused = await project.run(["preview"], { allowFailure: true });
    await removeConfig("parameters");
    expect(refused.code).not.toBe(0);
    expect(refused.output).toContain("parameters.api_token names a credential, and its value is no secret");
    expect(refused.output).not.toContain(plain);
    expect(project.transcript.join("\n")).not.toContain(plain);
  }, 120_000);

  it("the first weakened resource fails preview saying how to see the rest; one approved preview lists them all", async () => {
    await setConfig("memberLevel", "advisory");
    await setConfig("bySetWorkspaces", JSON.stringify([]));
    const refused = await project.run(["preview"], { allowFailure: true });
    expect(refused.code).not.toBe(0);
    expect(refused.output).toContain("TFE_ALLOW_WEAKENING=true pulumi preview lists every weakening of the change");
    const listed = await project.run(["preview"], { env: { TFE_ALLOW_WEAKENING: "true" } });
    expect(listed.output).toMatch(
      /policy "member" weakens governance: enforcementLevel goes from hard-mandatory to advisory/,
    );
    expect(listed.output).toMatch(/policy set "by-set" weakens governance: workspaceIds loses ws-production0000001/);
    await removeConfig("memberLevel");
    await removeConfig("bySetWorkspaces");
  }, 120_000);
});
