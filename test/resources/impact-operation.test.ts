import { describe, expect, it, vi } from "vitest";
import { noReach, ResultsCache, readImpact, type StricterChange } from "../../src/impact";
import { ProviderContext } from "../../src/resources/provider-context";
import { readImpactOnce, sayImpact, startOperationReads } from "../../src/resources/stricter-changes";
import { useSeededServer } from "../seeded-server";

// One operation's reads of whom a stricter change would block, over HTTP against the local server: a workspace's
// runs read once however many resources ask, and one budget for the whole preview. (Its own file: the budget is
// the process's, as it is the provider process's in an operation.)

const organization = "acme";
const token = "impact-operation-token-0123456789";
const workspaceIds = ["ws-OperationA000001", "ws-OperationB000001", "ws-OperationC000001"];
const failed = (policy: string) => ({ policySet: "baseline", policy, level: "advisory", status: "failed" as const });

const seeded = useSeededServer({
  organization,
  token,
  workspaceIds,
  runs: workspaceIds.flatMap((workspace, index) =>
    [0, 1, 2].map((day) => ({
      id: `run-Operation${index}${day}`,
      workspace,
      daysAgo: day + 1,
      policyResults: [failed("require-tags"), failed("restrict-regions")],
    })),
  ),
});

const raise = (policy: string): StricterChange => ({
  organization,
  kind: "sentinel",
  policies: [{ name: policy, sets: ["baseline"], level: "hard-mandatory" }],
  reach: [{ ...noReach, workspaceIds }],
});

describe("the reads of one operation", () => {
  it("reads a workspace's runs and results once for every policy that asks", async () => {
    const cache = new ResultsCache();
    const settings = { windowDays: 30, requestBudget: 300, now: new Date() };
    const first = await readImpact(seeded.client, raise("require-tags"), settings, { cache });
    const second = await readImpact(seeded.client, raise("restrict-regions"), settings, { cache });
    expect(first.blocked).toHaveLength(9);
    expect(second.blocked).toHaveLength(9);
    expect(first.requests).toBeGreaterThan(0);
    // The runs, their results and the workspaces' names all came from the first read.
    expect(second.requests).toBe(0);
  });

  it("with the reads off (impactWindowDays 0), answers not known, which requireNoBlockedRuns refuses", async () => {
    vi.stubEnv("TFE_IMPACT_WINDOW_DAYS", "0");
    vi.stubEnv("TFE_REQUIRE_NO_BLOCKED_RUNS", "true");
    try {
      const context = new ProviderContext();
      context.useClient(seeded.client);
      const before = seeded.server.requestLog.entries().length;
      const answer = await readImpactOnce(context, raise("require-tags"));
      expect(answer.verdict).toBe("not known");
      expect(seeded.server.requestLog.entries().length).toBe(before);
      await expect(
        sayImpact(context, undefined, 'policy "require-tags" at hard-mandatory', answer, false),
      ).rejects.toThrow(
        'policy "require-tags" at hard-mandatory: whom it would block is not known: tfe:impactWindowDays is 0, which ' +
          "turns these reads off. TFE_REQUIRE_NO_BLOCKED_RUNS=true refuses a stricter change of which it is not known whom it " +
          "would block: set allowStricter: true on this resource to approve it",
      );
      // Approved on the resource, it is said and let through.
      await expect(sayImpact(context, undefined, "x", answer, true)).resolves.toBeUndefined();
      // Review of issue 52: the refusal names what the user set. Set in the stack, the setting; above, the variable
      // of the shell, which the stack does not show.
      const fromStack = new ProviderContext();
      fromStack.configureFrom((key) => (key === "requireNoBlockedRuns" ? "true" : undefined), "tfe");
      fromStack.useClient(seeded.client);
      await expect(sayImpact(fromStack, undefined, "x", answer, false)).rejects.toThrow(
        /\. tfe:requireNoBlockedRuns refuses a stricter change/,
      );
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it("shares one budget among the resources of a preview, and says so where it ran out", async () => {
    vi.stubEnv("TFE_IMPACT_REQUEST_BUDGET", "8");
    startOperationReads();
    try {
      const context = new ProviderContext();
      context.useClient(seeded.client);
      const first = await readImpactOnce(context, raise("require-tags"));
      expect(first.readWhole).toBeGreaterThan(0);
      const second = await readImpactOnce(context, raise("other-policy"));
      expect(second.requests).toBe(0);
      // Past the budget, what the first read is still taken, at no cost: the same runs judged for another policy.
      const third = await readImpactOnce(context, raise("restrict-regions"));
      expect([third.requests, third.readWhole, third.blocked.length]).toEqual([
        0,
        first.readWhole,
        first.blocked.length,
      ]);
      expect(second.notRead).toEqual([
        "3 workspaces past the budget of 8 requests this preview shares (tfe:impactRequestBudget); run " +
          "tfe-governance impact for the whole answer",
      ]);
    } finally {
      vi.unstubAllEnvs();
    }
  });
});
