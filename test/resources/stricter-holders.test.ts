import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { TfeClient } from "../../src/client";
import { describeAnswer, noReach, readImpact } from "../../src/impact";
import type { PolicySetOutputs } from "../../src/resources/policy-set";
import { sayWhomSetBlocks } from "../../src/resources/policy-set/stricter";
import { ProviderContext, unknownValue } from "../../src/resources/provider-context";
import type { RunningServer } from "../../src/server";
import { type Declared, EngineDriver } from "../resources/engine-driver";
import { startSeededServer } from "../seeded-server";

// Review of issue 51 ("never 'none' from what was not read"): each test below states what the truth is, from the
// seed, and fails where preview (or the reads behind it) says otherwise. Against the local server over HTTP, with the
// providers driven as the engine drives them (test/resources/engine-driver.ts).

const organization = "acme";
const token = "review51-impact-token-0123456789";
const wsA = "ws-ReviewA00000001";
const wsB = "ws-ReviewB00000001";
const wsC = "ws-ReviewC00000001";
const code = "main = rule { true }\n";

/** Everything preview said under the resources (info and warnings go to stderr), and how it ended. */
async function previewSaying(driver: EngineDriver, program: Declared[]) {
  const said: string[] = [];
  const spy = vi.spyOn(console, "error").mockImplementation((line: unknown) => void said.push(String(line)));
  try {
    const outcome = await driver.preview(program);
    return { outcome, said };
  } finally {
    spy.mockRestore();
  }
}

/** The stack as the first up made it (reads off), then a driver asking for certainty with the same state. */
async function stackAskingCertainty(client: TfeClient, first: Declared[]) {
  const setup = new EngineDriver(client, { impactWindowDays: "0" });
  const quiet = vi.spyOn(console, "error").mockImplementation(() => {});
  const made = await setup.up(first).finally(() => quiet.mockRestore());
  if (!made.applied) throw new Error(`the first up failed: ${made.refusal}`);
  const driver = new EngineDriver(client, { requireNoBlockedRuns: "true", impactWindowDays: "30" });
  for (const [name, recorded] of setup.state) driver.state.set(name, recorded);
  return { setup, driver };
}

describe("review 51: the count of runs that evaluated a policy", () => {
  let server: RunningServer;
  let client: TfeClient;
  beforeAll(async () => {
    server = await startSeededServer({
      organization,
      token,
      workspaceIds: [wsA],
      // Three runs, each of which evaluated "require-tags" of set "baseline" (and passed it).
      runs: [1, 2, 3].map((day) => ({
        id: `run-ReviewCount${day}`,
        workspace: wsA,
        daysAgo: day,
        policyResults: [
          { policySet: "baseline", policy: "require-tags", level: "advisory", status: "passed" as const },
        ],
      })),
    });
    client = new TfeClient({ address: server.url, token, rateLimit: false });
  });
  afterAll(async () => {
    await client?.close();
    await server?.close();
  });

  it('says how many runs evaluated the policy: 3 runs did, and "none" is said of 3, not of 1', async () => {
    const answer = await readImpact(client, {
      organization,
      kind: "sentinel",
      policies: [{ name: "require-tags", sets: ["baseline"], level: "hard-mandatory" }],
      reach: [{ ...noReach, workspaceIds: [wsA] }],
    });
    expect(answer.verdict).toBe("none");
    const said = describeAnswer('policy "require-tags" at hard-mandatory (was advisory)', answer);
    // Truth from the seed: three runs of the window evaluated it. The reads open only the first (the others show
    // nothing a run went on past), so a count would be short of it: none is said, only what holds.
    expect(said).not.toMatch(/\d+ runs? evaluated it/);
    expect(said).toContain("(1 of 1 workspaces read whole; it ran in each of them that had runs)");
    expect(answer.evaluated).toBeGreaterThanOrEqual(1);
  });
});

describe("review 51: an OPA set made non-overridable and widened in one change", () => {
  let server: RunningServer;
  let client: TfeClient;
  beforeAll(async () => {
    server = await startSeededServer({
      organization,
      token,
      workspaceIds: [wsA, wsB],
      runs: [
        {
          // A user overrode deny-public's failure at mandatory in the overridable set: the run went on.
          id: "run-ReviewOverridden1",
          workspace: wsA,
          daysAgo: 2,
          overridden: true,
          policyResults: [
            {
              kind: "opa" as const,
              policySet: "opa-guard",
              policy: "deny-public",
              level: "mandatory",
              status: "failed",
            },
          ],
        },
      ],
    });
    client = new TfeClient({ address: server.url, token, rateLimit: false });
  });
  afterAll(async () => {
    await client?.close();
    await server?.close();
  });

  const set = (declared: Record<string, unknown>) =>
    ({
      organization,
      name: "opa-guard",
      kind: "opa",
      ...noReach,
      folderPolicies: { "deny-public": "mandatory" },
      policyIds: [],
      policiesUnknown: null,
      ...declared,
    }) as unknown as PolicySetOutputs;

  it("counts the overridden run of the workspace it already reached, which no override would let go on now", async () => {
    const olds = set({ overridable: true, workspaceIds: [wsA] });
    const news = set({ overridable: false, workspaceIds: [wsA, wsB] });
    const context = new ProviderContext();
    context.useClient(client);
    const said: string[] = [];
    const spy = vi.spyOn(console, "error").mockImplementation((line: unknown) => void said.push(String(line)));
    vi.stubEnv("TFE_REQUIRE_NO_BLOCKED_RUNS", "true");
    let refusal: string | undefined;
    try {
      await sayWhomSetBlocks(context, undefined, olds, news);
    } catch (error) {
      refusal = (error as Error).message;
    } finally {
      spy.mockRestore();
      vi.unstubAllEnvs();
    }
    // Truth: run-ReviewOverridden1 in ws A went on past deny-public by an override; with overridable off it stops.
    // requireNoBlockedRuns must refuse the change, naming that run.
    expect({ refusal, said }).toEqual({ refusal: expect.stringContaining("run-ReviewOverridden1"), said: [] });
  });
});

describe("review 51: a raise that meets a change of its holders in the same preview", () => {
  let server: RunningServer;
  let client: TfeClient;
  beforeAll(async () => {
    server = await startSeededServer({
      organization,
      token,
      workspaceIds: [wsA, wsB, wsC],
      runs: [
        {
          // require-tags of set "holder" failed at advisory in ws A: a raise to hard-mandatory would stop this run.
          id: "run-ReviewJoinA1",
          workspace: wsA,
          daysAgo: 2,
          policyResults: [{ policySet: "holder", policy: "require-tags", level: "advisory", status: "failed" }],
        },
        {
          // Set "widening" reached ws C before (its results are there); ws B it reaches now, where p passed.
          id: "run-ReviewWidenB1",
          workspace: wsB,
          daysAgo: 3,
          policyResults: [{ policySet: "widening", policy: "owner-tag", level: "advisory", status: "passed" }],
        },
        {
          id: "run-ReviewWidenC1",
          workspace: wsC,
          daysAgo: 4,
          policyResults: [{ policySet: "widening", policy: "owner-tag", level: "advisory", status: "failed" }],
        },
      ],
    });
    client = new TfeClient({ address: server.url, token, rateLimit: false });
  });
  afterAll(async () => {
    await client?.close();
    await server?.close();
  });

  it("a policy raised while its set's policyIds take it in is refused under requireNoBlockedRuns", async () => {
    const program = (level: string, held: boolean): Declared[] => [
      {
        name: "require-tags",
        type: "Policy",
        args: () => ({ organization, name: "require-tags", code, enforcementLevel: level }),
      },
      {
        name: "holder",
        type: "PolicySet",
        args: (idOf) => ({
          organization,
          name: "holder",
          workspaceIds: [wsA],
          policyIds: held ? [idOf("require-tags")] : [],
        }),
      },
    ];
    const { driver } = await stackAskingCertainty(client, program("advisory", false));
    const { outcome, said } = await previewSaying(driver, program("hard-mandatory", true));
    // Truth: once applied, set "holder" enforces require-tags at hard-mandatory in ws A, whose run-ReviewJoinA1
    // failed it at advisory. Nothing may say it blocks no run, and requireNoBlockedRuns must refuse.
    expect({
      claimsNone: said.filter((line) =>
        /blocks no run|no run in the last \d+ days would have been blocked \(/.test(line),
      ),
      applied: outcome.applied,
    }).toEqual({ claimsNone: [], applied: false });
  });

  it("a policy raised while the set that holds it is widened is refused under requireNoBlockedRuns", async () => {
    const program = (level: string, workspaceIds: string[]): Declared[] => [
      {
        name: "owner-tag",
        type: "Policy",
        args: () => ({ organization, name: "owner-tag", code, enforcementLevel: level }),
      },
      {
        name: "widening",
        type: "PolicySet",
        args: (idOf) => ({ organization, name: "widening", workspaceIds, policyIds: [idOf("owner-tag")] }),
      },
    ];
    const { driver } = await stackAskingCertainty(client, program("advisory", [wsB]));
    const { outcome, said } = await previewSaying(driver, program("hard-mandatory", [wsB, wsC]));
    // Truth: after the change owner-tag is hard-mandatory in ws C too, whose run-ReviewWidenC1 failed it at advisory.
    expect({
      claimsNone: said.filter((line) =>
        /blocks no run|no run in the last \d+ days would have been blocked \(/.test(line),
      ),
      applied: outcome.applied,
    }).toEqual({ claimsNone: [], applied: false });
  });

  it("a new blocking policy taken in by another set's policyIds is not said to block none from its declared set alone", async () => {
    const program = (withPolicy: boolean): Declared[] => [
      { name: "empty-scope", type: "PolicySet", args: () => ({ organization, name: "empty-scope" }) },
      ...(withPolicy
        ? [
            {
              name: "new-rule",
              type: "Policy" as const,
              args: (idOf: (name: string) => unknown) => ({
                organization,
                name: "new-rule",
                code,
                enforcementLevel: "hard-mandatory",
                policySetIds: [idOf("empty-scope")],
              }),
            },
          ]
        : []),
      {
        name: "taker",
        type: "PolicySet",
        args: (idOf) => ({
          organization,
          name: "taker",
          workspaceIds: [wsA],
          policyIds: withPolicy ? [idOf("new-rule")] : [],
        }),
      },
    ];
    const { driver } = await stackAskingCertainty(client, program(false));
    const { outcome, said } = await previewSaying(driver, program(true));
    // Truth: "taker" holds the new policy at hard-mandatory in ws A, which has runs none of which could have evaluated
    // it: whom it would block there is not known. "blocks no run" is false, and requireNoBlockedRuns must refuse.
    expect({
      claimsNone: said.filter((line) =>
        /blocks no run|no run in the last \d+ days would have been blocked \(/.test(line),
      ),
      applied: outcome.applied,
    }).toEqual({ claimsNone: [], applied: false });
  });
});

describe("review 51: a new set whose policyIds are not known until apply", () => {
  let server: RunningServer;
  let client: TfeClient;
  beforeAll(async () => {
    server = await startSeededServer({
      organization,
      token,
      workspaceIds: [wsA],
      runs: [
        {
          id: "run-ReviewUnknownIds1",
          workspace: wsA,
          daysAgo: 1,
          policyResults: [{ policySet: "elsewhere", policy: "other", level: "advisory", status: "passed" }],
        },
      ],
    });
    client = new TfeClient({ address: server.url, token, rateLimit: false });
  });
  afterAll(async () => {
    await client?.close();
    await server?.close();
  });

  it("is said as not known (its members may block), and requireNoBlockedRuns refuses it", async () => {
    // An existing hard-mandatory policy, in no set yet.
    const hard: Declared = {
      name: "strict-rule",
      type: "Policy",
      args: () => ({ organization, name: "strict-rule", code, enforcementLevel: "hard-mandatory" }),
    };
    const { driver } = await stackAskingCertainty(client, [hard]);
    // The new set over ws A takes its members from a value known only at apply (pulumi.all(...).apply(...) over
    // policies one of which is new): which policies it will hold, at which levels, is not known at preview.
    const { outcome, said } = await previewSaying(driver, [
      hard,
      {
        name: "computed-members",
        type: "PolicySet",
        args: () => ({ organization, name: "computed-members", workspaceIds: [wsA], policyIds: unknownValue }),
      },
    ]);
    // Under requireNoBlockedRuns what cannot be judged is said in the refusal itself.
    expect({ said, outcome }).toEqual({
      said: [],
      outcome: { applied: false, refusal: expect.stringMatching(/policy set "computed-members": .*not known/) },
    });
  });
});

describe("review 51: adopting a policy at a level above the service's", () => {
  let server: RunningServer;
  let client: TfeClient;
  beforeAll(async () => {
    server = await startSeededServer({
      organization,
      token,
      workspaceIds: [wsA],
      runs: [
        {
          id: "run-ReviewAdopt1",
          workspace: wsA,
          daysAgo: 1,
          policyResults: [{ policySet: "existing", policy: "legacy-rule", level: "advisory", status: "failed" }],
        },
      ],
    });
    client = new TfeClient({ address: server.url, token, rateLimit: false });
  });
  afterAll(async () => {
    await client?.close();
    await server?.close();
  });

  it("says whom the raise would block, and requireNoBlockedRuns refuses it", async () => {
    // Made outside this stack: a set over ws A holding an advisory policy whose run failed it.
    const set = await client.policySets.create(organization, { name: "existing", workspaceIds: [wsA] });
    const policy = await client.policies.create(organization, {
      name: "legacy-rule",
      kind: "sentinel",
      enforcementLevel: "advisory",
    });
    await client.policies.upload(policy.id, Buffer.from(code));
    await client.policySets.addPolicies(set.id, [policy.id]);
    const driver = new EngineDriver(client, { requireNoBlockedRuns: "true", impactWindowDays: "30" });
    const { outcome, said } = await previewSaying(driver, [
      {
        name: "legacy-rule",
        type: "Policy",
        args: () => ({
          organization,
          name: "legacy-rule",
          code,
          enforcementLevel: "hard-mandatory",
          adoptExisting: true,
        }),
      },
    ]);
    // Truth: adopting writes hard-mandatory over the service's advisory, and run-ReviewAdopt1 failed it at advisory.
    // Under requireNoBlockedRuns the runs it would have blocked are named in the refusal itself.
    expect({ said, outcome }).toEqual({
      said: [],
      outcome: { applied: false, refusal: expect.stringContaining("run-ReviewAdopt1") },
    });
  });
});
