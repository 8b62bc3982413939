import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TfeClient } from "../../src/client";
import { type Answer, describeAnswer, noReach, type Reach, readImpact } from "../../src/impact";
import { type RunningServer, startServer } from "../../src/server";

// Whom a stricter policy would block, read from the local server's seeded runs over HTTP: the workspaces of the
// policy's sets, each one's runs of the window, the results the run went on past (failed or errored at advisory, or
// overridden at an overridable level), and the one answer made of them: blocked, none, or not known.

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
        { id: "ws-TfPolicy000000001", organization, name: "tf-workspace" },
      ],
      projects: [{ id: "prj-ImpactTeam00001", organization, name: "team" }],
      runs: [
        {
          id: "run-Pay0001",
          workspace: "ws-PaymentsProd00001",
          createdAt: daysAgo(1),
          policyResults: [failed("require-tags"), passed("always-passes")],
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
        // Failed at soft-mandatory, and a user overrode it: the run went on, which hard-mandatory would not let it.
        {
          id: "run-Pay0005",
          workspace: "ws-PaymentsProd00001",
          createdAt: daysAgo(3),
          overridden: true,
          policyResults: [failed("require-tags", "soft-mandatory")],
        },
        {
          id: "run-Web0001",
          workspace: "ws-Web00000000000001",
          createdAt: daysAgo(3),
          policyResults: [passed("require-tags"), passed("always-passes")],
        },
        // Errored at advisory: the run went on; at a blocking level an error stops it.
        {
          id: "run-Web0002",
          workspace: "ws-Web00000000000001",
          createdAt: daysAgo(6),
          policyResults: [{ ...passed("require-tags"), status: "errored" as const }, passed("always-passes")],
        },
        // Terraform policy: the service names a block in policy_name (its label here) with its file.
        {
          id: "run-Tf0001",
          workspace: "ws-TfPolicy000000001",
          createdAt: daysAgo(2),
          policyResults: [
            {
              kind: "tfpolicy" as const,
              policySet: "tf-rules",
              policy: "encrypted",
              fileName: "s3.policy.hcl",
              level: "advisory",
              status: "failed" as const,
            },
          ],
        },
        {
          id: "run-Tf0002",
          workspace: "ws-TfPolicy000000001",
          createdAt: daysAgo(3),
          overridden: true,
          policyResults: [
            {
              kind: "tfpolicy" as const,
              policySet: "tf-rules",
              policy: "resource_policy.aws_s3_bucket.encrypted",
              level: "mandatory_overridable",
              status: "failed" as const,
            },
          ],
        },
        {
          id: "run-Data0001",
          workspace: "ws-Data0000000000001",
          createdAt: daysAgo(10),
          policyResults: [
            { ...failed("require-tags"), via: "policy-check" as const },
            { ...passed("always-passes"), via: "policy-check" as const },
            failed("other-policy"),
          ],
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

/** Whom `policy` of set "baseline" at hard-mandatory would block in the workspaces of these sets, as held. */
async function impactOf(policySetIds: string[], policy = "require-tags", within = settings): Promise<Answer> {
  const reach: Reach[] = [];
  for (const id of policySetIds) reach.push({ ...noReach, ...(await client.policySets.read(id)) });
  return readImpact(
    client,
    {
      organization,
      kind: "sentinel",
      policies: [{ name: policy, sets: ["baseline"], level: "hard-mandatory" }],
      reach,
    },
    within,
  );
}

const scope = (declared: Partial<Reach>): Reach => ({ ...noReach, ...declared });

const change = (policy: string, reach: Reach[], extra: Record<string, unknown> = {}) => ({
  organization,
  kind: "sentinel" as const,
  policies: [{ name: policy, sets: ["baseline"], level: "hard-mandatory", ...extra }],
  reach,
});

describe("whom a stricter policy would block", () => {
  it("names each run of the window it would have stopped, and how the run went on past it", async () => {
    const impact = await impactOf([setId]);
    expect(impact.blocked.map((run) => `${run.workspaceName} ${run.runId}: ${run.wentOn}`)).toEqual([
      "payments-prod run-Pay0001: failed at advisory",
      "payments-prod run-Pay0005: failed at mandatory, overridden",
      "payments-prod run-Pay0002: failed at advisory",
      "web run-Web0002: errored at advisory",
      "data run-Data0001: failed at advisory",
    ]);
    expect([impact.verdict, impact.reached, impact.readWhole, impact.notRead]).toEqual(["blocked", 3, 3, []]);
    expect(describeAnswer('policy "require-tags" at hard-mandatory', impact)).toBe(
      'policy "require-tags" at hard-mandatory would have blocked 5 runs in 3 of 3 workspaces in the last 30 days: ' +
        "payments-prod (run-Pay0001, 2026-11-26, failed at advisory; run-Pay0005, 2026-11-24, failed at mandatory, " +
        "overridden; run-Pay0002, 2026-11-22, failed at advisory), web (run-Web0002, 2026-11-21, errored at " +
        "advisory), data (run-Data0001, 2026-11-17, failed at advisory) (3 of 3 workspaces read whole)",
    );
  });

  it("counts an overridden run only where the new level cannot be overridden", async () => {
    const reach = [{ ...noReach, workspaceIds: ["ws-PaymentsProd00001"] }];
    const soft = await readImpact(client, change("require-tags", reach, { level: "soft-mandatory" }), settings);
    expect(soft.blocked.map((run) => run.runId)).toEqual(["run-Pay0001", "run-Pay0002"]);
    // An override taken away without a raise (an OPA set no longer overridable): only the overridden runs stop.
    const overriddenOnly = await readImpact(client, change("require-tags", reach, { overriddenOnly: true }), settings);
    expect(overriddenOnly.blocked.map((run) => run.runId)).toEqual(["run-Pay0005"]);
  });

  it("answers none only where every workspace was read whole and the policy ran there", async () => {
    const passing = await impactOf([setId], "always-passes");
    expect(passing.verdict).toBe("none");
    expect(describeAnswer('policy "always-passes" at hard-mandatory', passing)).toBe(
      'policy "always-passes" at hard-mandatory: no run in the last 30 days would have been blocked ' +
        "(3 of 3 workspaces read whole; it ran in each of them that had runs)",
    );
  });

  it("answers not known where no run of the window evaluated it: not the same as nobody", async () => {
    const unknown = await impactOf([setId], "never-evaluated");
    expect(unknown.verdict).toBe("not known");
    expect(describeAnswer('policy "never-evaluated" at hard-mandatory', unknown)).toBe(
      'policy "never-evaluated" at hard-mandatory: whom it would block is not known: in 3 of the 3 workspaces it ' +
        "reaches, no run of the window evaluated it, so the runs there show nothing of it (3 of 3 workspaces read whole)",
    );
    // The same policy name of another set is another policy: its runs say nothing of this one.
    const otherSet = await readImpact(
      client,
      {
        ...change("require-tags", [{ ...noReach, workspaceIds: ["ws-Web00000000000001"] }]),
        policies: [{ name: "require-tags", sets: ["another-set"], level: "hard-mandatory" }],
      },
      settings,
    );
    expect(otherSet.verdict).toBe("not known");
  });

  it("matches a Terraform policy block by every spelling a result may give it", async () => {
    const reach = [{ ...noReach, workspaceIds: ["ws-TfPolicy000000001"] }];
    const block = {
      name: "resource_policy.aws_s3_bucket.encrypted",
      sets: ["tf-rules"],
      level: "mandatory",
      spellings: ["encrypted", 'resource_policy "aws_s3_bucket" "encrypted"'],
    };
    const impact = await readImpact(client, { organization, kind: "tfpolicy", policies: [block], reach }, settings);
    expect(impact.blocked.map((run) => `${run.runId}: ${run.wentOn}`)).toEqual([
      "run-Tf0001: failed at advisory",
      "run-Tf0002: failed at mandatory_overridable, overridden",
    ]);
    // At mandatory_overridable, the overridden run could be overridden again: it is not stopped.
    const overridable = await readImpact(
      client,
      { organization, kind: "tfpolicy", policies: [{ ...block, level: "mandatory_overridable" }], reach },
      settings,
    );
    expect(overridable.blocked.map((run) => run.runId)).toEqual(["run-Tf0001"]);
  });

  it("reaches every workspace of a global set but the excluded ones", async () => {
    const impact = await impactOf([globalSetId]);
    expect(impact.reached).toBe(5);
    expect(impact.blocked.map((run) => run.workspaceName)).not.toContain("sandbox");
  });

  it("stops at the request budget, says how many workspaces it did not read, and claims nothing of them", async () => {
    const before = server.requestLog.entries().length;
    const impact = await impactOf([setId], "always-passes", { ...settings, requestBudget: 4 });
    // One more: the set's own read, which a provider shares with the guard's and which the budget leaves out.
    expect(server.requestLog.entries().length - before).toBe(impact.requests + 1);
    expect(impact.requests).toBeLessThanOrEqual(4 + 3);
    expect(impact.readWhole).toBeLessThan(3);
    expect(impact.verdict).toBe("not known");
    expect(impact.notRead.at(-1)).toMatch(/workspaces? past the budget of 4 requests; run tfe-governance impact/);
  });

  it("says what it could not read instead of failing, and never answers none of it", async () => {
    const impact = await readImpact(
      client,
      change("require-tags", [{ ...noReach, workspaceIds: ["ws-DoesNotExist0001"] }]),
      settings,
    );
    expect(impact.verdict).toBe("not known");
    expect(impact.notRead).toEqual([expect.stringMatching(/^workspace ws-DoesNotExist0001 \(GET .*\(404\)/)]);
  });

  it("reaches a project's workspaces, and leaves out an excluded project's", async () => {
    const project = await readImpact(
      client,
      change("require-tags", [scope({ projectIds: ["prj-ImpactTeam00001"] })]),
      settings,
    );
    expect(project.blocked.map((run) => `${run.workspaceName} ${run.runId}`)).toEqual(["team-api run-TeamApi01"]);
    expect(project.reached).toBe(1);
    const excluded = await readImpact(
      client,
      change("require-tags", [scope({ global: true, excludedProjectIds: ["prj-ImpactTeam00001"] })]),
      settings,
    );
    expect(excluded.reached).toBe(5);
    expect(excluded.blocked.map((run) => run.workspaceName)).not.toContain("team-api");
  });

  it("judges exclusions set by set: a workspace one set leaves out, another still reaches", async () => {
    const impact = await readImpact(
      client,
      change("require-tags", [
        scope({ global: true, excludedWorkspaceIds: ["ws-Sandbox0000000001"] }),
        scope({ workspaceIds: ["ws-Sandbox0000000001"] }),
      ]),
      settings,
    );
    expect(impact.reached).toBe(6);
    expect(impact.blocked.map((run) => run.workspaceName)).toContain("sandbox");
  });

  it("reads only the workspaces a widened scope newly reaches, and names only those it has something to say of", async () => {
    const before = server.requestLog.entries().length;
    const impact = await readImpact(
      client,
      {
        ...change("require-tags", [
          scope({ workspaceIds: ["ws-PaymentsProd00001", "ws-Web00000000000001", "ws-Data0000000000001"] }),
        ]),
        reachedBefore: [scope({ workspaceIds: ["ws-PaymentsProd00001", "ws-Web00000000000001"] })],
      },
      settings,
    );
    expect([impact.reached, impact.readWhole]).toEqual([1, 1]);
    expect(impact.blocked.map((run) => `${run.workspaceName} ${run.runId}`)).toEqual(["data run-Data0001"]);
    const namesRead = server.requestLog
      .entries()
      .slice(before)
      .filter((entry) => entry.route === "/api/v2/workspaces/:id")
      .map((entry) => entry.path);
    expect(namesRead).toEqual(["/api/v2/workspaces/ws-Data0000000000001"]);
  });
});
