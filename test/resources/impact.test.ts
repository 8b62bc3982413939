import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TfeClient } from "../../src/client";
import { describeImpact, noReach, type Reach, reachOfSets, readImpact, wouldBlock } from "../../src/resources/impact";
import { type RunningServer, startServer } from "../../src/server";

// Whom a stricter policy would block, read from the local server's seeded runs over HTTP: the workspaces of the
// policy's sets, each one's runs of the window, the results that failed at a level that let the run go on.

const organization = "acme";
const token = "impact-token-0123456789";
const now = new Date("2026-11-27T12:00:00.000Z");
const daysAgo = (days: number) => new Date(now.getTime() - days * 24 * 3600 * 1000).toISOString();
const setId = "polset-ImpactBaseline01";
const globalSetId = "polset-ImpactGlobal0001";
const failed = (policy: string, level = "advisory") => ({
  policySet: "baseline",
  policy,
  level,
  status: "failed" as const,
});
const passed = (policy: string) => ({ policySet: "baseline", policy, level: "advisory", status: "passed" as const });

let server: RunningServer;
let client: TfeClient;

beforeAll(async () => {
  server = await startServer({
    seed: {
      organizations: [{ name: organization, plus: true }],
      tokens: [{ token, organizations: [organization] }],
      policySets: [
        { id: setId, organization, name: "baseline" },
        { id: globalSetId, organization, name: "everywhere" },
      ],
      workspaces: [
        { id: "ws-PaymentsProd00001", organization, name: "payments-prod" },
        { id: "ws-Web00000000000001", organization, name: "web" },
        { id: "ws-Data0000000000001", organization, name: "data" },
        { id: "ws-Sandbox0000000001", organization, name: "sandbox" },
        { id: "ws-TeamApi0000000001", organization, name: "team-api", project: "prj-ImpactTeam00001" },
      ],
      projects: [{ id: "prj-ImpactTeam00001", organization, name: "team" }],
      runs: [
        {
          id: "run-Pay0001",
          workspace: "ws-PaymentsProd00001",
          createdAt: daysAgo(1),
          policyResults: [failed("require-tags")],
        },
        {
          id: "run-Pay0002",
          workspace: "ws-PaymentsProd00001",
          createdAt: daysAgo(5),
          policyResults: [failed("require-tags")],
        },
        // Outside the window: not read.
        {
          id: "run-Pay0003",
          workspace: "ws-PaymentsProd00001",
          createdAt: daysAgo(40),
          policyResults: [failed("require-tags")],
        },
        // Failed at a level that stopped it already: no new block.
        {
          id: "run-Pay0004",
          workspace: "ws-PaymentsProd00001",
          createdAt: daysAgo(2),
          policyResults: [failed("require-tags", "mandatory")],
        },
        {
          id: "run-Web0001",
          workspace: "ws-Web00000000000001",
          createdAt: daysAgo(3),
          policyResults: [passed("require-tags"), passed("always-passes")],
        },
        {
          id: "run-Data0001",
          workspace: "ws-Data0000000000001",
          createdAt: daysAgo(10),
          policyResults: [{ ...failed("require-tags"), via: "policy-check" as const }, failed("other-policy")],
        },
        {
          id: "run-TeamApi01",
          workspace: "ws-TeamApi0000000001",
          createdAt: daysAgo(4),
          policyResults: [failed("require-tags")],
        },
        {
          id: "run-Sandbox01",
          workspace: "ws-Sandbox0000000001",
          createdAt: daysAgo(1),
          policyResults: [failed("require-tags")],
        },
      ],
    },
  });
  client = new TfeClient({ address: server.url, token, rateLimit: false });
  await client.policySets.addToScope(setId, "workspaces", [
    "ws-PaymentsProd00001",
    "ws-Web00000000000001",
    "ws-Data0000000000001",
  ]);
  await client.policySets.update(globalSetId, { global: true });
  await client.policySets.addToScope(globalSetId, "workspace-exclusions", ["ws-Sandbox0000000001"]);
});
afterAll(async () => {
  await client?.close();
  await server?.close();
});

const settings = { windowDays: 30, requestBudget: 300, now };

/** Whom `policy` at hard-mandatory would block in the workspaces of these sets, as the service holds them. */
async function impactOf(policySetIds: string[], policy = "require-tags", within = settings) {
  const sets = await reachOfSets(policySetIds, (id) => client.policySets.read(id));
  const impact = await readImpact(
    client,
    { organization, kind: "sentinel", policies: [{ name: policy, level: "hard-mandatory" }], reach: sets.reach },
    within,
  );
  return { ...impact, notRead: [...sets.notRead, ...impact.notRead] };
}

const scope = (declared: Partial<Reach>): Reach => ({ ...noReach, ...declared });

describe("whom a stricter policy would block", () => {
  it("counts only a failure at a level that let the run go on, for a level that blocks", () => {
    expect(wouldBlock({ level: "advisory", status: "failed" }, "sentinel", "soft-mandatory")).toBe(true);
    expect(wouldBlock({ level: "advisory", status: "passed" }, "sentinel", "hard-mandatory")).toBe(false);
    expect(wouldBlock({ level: "mandatory", status: "failed" }, "sentinel", "hard-mandatory")).toBe(false);
    expect(wouldBlock({ level: "advisory", status: "failed" }, "sentinel", "advisory")).toBe(false);
    expect(wouldBlock({ level: "advisory", status: "failed" }, "tfpolicy", "mandatory_overridable")).toBe(true);
  });

  it("names the runs of the window that failed it, by workspace, from task stages and policy checks alike", async () => {
    const impact = await impactOf([setId]);
    expect(impact.blocked.map((run) => `${run.workspaceName} ${run.runId}`)).toEqual([
      "payments-prod run-Pay0001",
      "payments-prod run-Pay0002",
      "data run-Data0001",
    ]);
    expect([impact.reached, impact.read, impact.notRead]).toEqual([3, 3, []]);
    expect(describeImpact('policy "require-tags" at hard-mandatory', impact)).toBe(
      'policy "require-tags" at hard-mandatory would have blocked 3 runs in 2 of 3 workspaces in the last 30 days: ' +
        "payments-prod (run-Pay0001, 2026-11-26; run-Pay0002, 2026-11-22), data (run-Data0001, 2026-11-17) " +
        "(3 of 3 workspaces read)",
    );
  });

  it("says when no run of the window failed it, and when none evaluated it at all", async () => {
    const passing = await impactOf([setId], "always-passes");
    expect(describeImpact('policy "always-passes" at hard-mandatory', passing)).toBe(
      'policy "always-passes" at hard-mandatory: no run in the last 30 days failed it (3 of 3 workspaces read)',
    );
    // Never evaluated there: whom it would block is not known, which is not the same as nobody.
    const unknown = await impactOf([setId], "never-evaluated");
    expect(describeImpact('policy "never-evaluated" at hard-mandatory', unknown)).toBe(
      'policy "never-evaluated" at hard-mandatory: no run in the last 30 days evaluated it there, so whom it would ' +
        "block is not known (3 of 3 workspaces read)",
    );
  });

  it("reaches every workspace of a global set but the excluded ones", async () => {
    const impact = await impactOf([globalSetId]);
    expect(impact.reached).toBe(4);
    expect(impact.blocked.map((run) => run.workspaceName)).not.toContain("sandbox");
  });

  it("stops at the request budget and says how many workspaces it did not read", async () => {
    const before = server.requestLog.entries().length;
    const impact = await impactOf([setId], "require-tags", { ...settings, requestBudget: 4 });
    // One more: the set's own read, which a provider shares with the guard's and which the budget leaves out.
    expect(server.requestLog.entries().length - before).toBe(impact.requests + 1);
    expect(impact.requests).toBeLessThanOrEqual(4 + 3);
    expect(impact.read).toBeLessThan(3);
    expect(impact.notRead.at(-1)).toMatch(/workspaces? past the budget of 4 requests; run tfe-governance impact/);
  });

  it("says what it could not read instead of failing", async () => {
    const impact = await impactOf(["polset-DoesNotExist01"]);
    expect(impact.reached).toBe(0);
    expect(impact.notRead).toEqual([expect.stringMatching(/^policy set polset-DoesNotExist01 \(GET .*\(404\)/)]);
  });

  it("reaches a project's workspaces, and leaves out an excluded project's", async () => {
    const impact = (reach: Reach[], reachedBefore?: Reach[]) =>
      readImpact(
        client,
        {
          organization,
          kind: "sentinel",
          policies: [{ name: "require-tags", level: "hard-mandatory" }],
          reach,
          ...(reachedBefore ? { reachedBefore } : {}),
        },
        settings,
      );
    const project = await impact([scope({ projectIds: ["prj-ImpactTeam00001"] })]);
    expect(project.blocked.map((run) => `${run.workspaceName} ${run.runId}`)).toEqual(["team-api run-TeamApi01"]);
    expect(project.reached).toBe(1);
    const excluded = await impact([scope({ global: true, excludedProjectIds: ["prj-ImpactTeam00001"] })]);
    expect(excluded.reached).toBe(4);
    expect(excluded.blocked.map((run) => run.workspaceName)).not.toContain("team-api");
  });

  it("judges exclusions set by set: a workspace one set leaves out, another still reaches", async () => {
    const impact = await readImpact(
      client,
      {
        organization,
        kind: "sentinel",
        policies: [{ name: "require-tags", level: "hard-mandatory" }],
        reach: [
          scope({ global: true, excludedWorkspaceIds: ["ws-Sandbox0000000001"] }),
          scope({ workspaceIds: ["ws-Sandbox0000000001"] }),
        ],
      },
      settings,
    );
    expect(impact.reached).toBe(5);
    expect(impact.blocked.map((run) => run.workspaceName)).toContain("sandbox");
  });

  it("reads only the workspaces a widened scope newly reaches, and names only those it has something to say of", async () => {
    const before = server.requestLog.entries().length;
    const impact = await readImpact(
      client,
      {
        organization,
        kind: "sentinel",
        policies: [{ name: "require-tags", level: "hard-mandatory" }],
        reach: [scope({ workspaceIds: ["ws-PaymentsProd00001", "ws-Web00000000000001", "ws-Data0000000000001"] })],
        reachedBefore: [scope({ workspaceIds: ["ws-PaymentsProd00001"] })],
      },
      settings,
    );
    expect([impact.reached, impact.read]).toEqual([2, 2]);
    expect(impact.blocked.map((run) => `${run.workspaceName} ${run.runId}`)).toEqual(["data run-Data0001"]);
    const namesRead = server.requestLog
      .entries()
      .slice(before)
      .filter((entry) => entry.route === "/api/v2/workspaces/:id")
      .map((entry) => entry.path);
    expect(namesRead).toEqual(["/api/v2/workspaces/ws-Data0000000000001"]);
  });
});
