import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TfeClient } from "../../src/client";
import { type RunningServer, startServer } from "../../src/server";
import { loadSeed } from "../../src/server/seed";
import { fencedBlocks } from "../e2e/doc-recipes";
import { call, seed, token } from "../server/helpers";

// A workspace's runs and the policy results they recorded, read through the client from the local server over HTTP,
// every document held to the contract on the way (test/server/contract.ts, through `call`). The seed's run records
// results each way the service does: Sentinel and OPA in a task stage, Sentinel in an older policy check,
// Terraform policy in its own evaluation.

let server: RunningServer;
let client: TfeClient;
const day = 24 * 3600 * 1000;
const now = Date.parse("2026-11-27T12:00:00.000Z");

beforeAll(async () => {
  // Twelve more runs of staging, one a day, with a failing advisory policy every third day.
  const staging = Array.from({ length: 12 }, (_, index) => ({
    id: `run-staging${String(index).padStart(8, "0")}`,
    workspace: "ws-staging000000001",
    createdAt: new Date(now - index * day).toISOString(),
    policyResults: [
      {
        policySet: "baseline",
        policy: "require-tags",
        level: "advisory",
        status: index % 3 === 0 ? ("failed" as const) : ("passed" as const),
      },
    ],
  }));
  server = await startServer({ seed: { ...seed, runs: [...seed.runs, ...staging] } });
  client = new TfeClient({ address: server.url, token, rateLimit: false });
});
afterAll(async () => {
  await client?.close();
  await server?.close();
});

describe("runs and their policy results", () => {
  it("lists a window of a workspace's runs newest first, reading only the pages the window spans", async () => {
    const before = server.requestLog.entries().length;
    const runs = [];
    for await (const run of client.runs.since("ws-staging000000001", new Date(now - 4.5 * day), 2)) runs.push(run);
    expect(runs.map((run) => run.id)).toEqual([
      "run-staging00000000",
      "run-staging00000001",
      "run-staging00000002",
      "run-staging00000003",
      "run-staging00000004",
    ]);
    // Three pages of two: the third holds the first run outside the window, and the walk stops there.
    expect(server.requestLog.entries().length - before).toBe(3);
  });

  it("reads every result of a run, whichever way it was recorded, as the same records", async () => {
    const runs = [];
    for await (const run of client.runs.since("ws-production0000001", new Date(0))) runs.push(run);
    expect(runs).toHaveLength(1);
    const results = await client.runs.policyResults(runs[0] as (typeof runs)[number]);
    expect(results.map(({ runId: _, ...result }) => result)).toEqual([
      {
        kind: "sentinel",
        recordedBy: "task-stage",
        policySet: "baseline",
        policy: "require-tags",
        level: "advisory",
        status: "failed",
        overridden: false,
      },
      {
        kind: "sentinel",
        recordedBy: "task-stage",
        policySet: "baseline",
        policy: "restrict-regions",
        level: "mandatory",
        status: "passed",
        overridden: false,
      },
      {
        kind: "opa",
        recordedBy: "task-stage",
        policySet: "opa-baseline",
        policy: "deny-public",
        level: "mandatory",
        status: "passed",
        overridden: false,
      },
      {
        kind: "sentinel",
        recordedBy: "policy-check",
        policySet: "legacy",
        policy: "old-rule",
        level: "mandatory",
        status: "failed",
        overridden: false,
      },
      {
        kind: "tfpolicy",
        recordedBy: "tf-policy-evaluation",
        policySet: "tf-rules",
        policy: "s3-encrypted",
        level: "mandatory_overridable",
        status: "failed",
        overridden: false,
        fileName: "s3-encrypted.policy.hcl",
        declarations: [],
      },
    ]);
  });

  it("opens only the evaluations that may hold a result the run went on past, when asked to", async () => {
    const runs = [];
    for await (const run of client.runs.since("ws-production0000001", new Date(0))) runs.push(run);
    const run = runs[0] as (typeof runs)[number];
    const sent = async (wentOnOnly: boolean) => {
      const before = server.requestLog.entries().length;
      const results = await client.runs.policyResults(run, { wentOnOnly });
      return { requests: server.requestLog.entries().length - before, results };
    };
    const whole = await sent(false);
    const failures = await sent(true);
    // The OPA evaluation passed and the Terraform policy one failed at a mandatory level: neither is opened.
    expect(failures.results.map((result) => `${result.recordedBy} ${result.policy}`)).toEqual([
      "task-stage require-tags",
      "task-stage restrict-regions",
      "policy-check old-rule",
    ]);
    expect(whole.requests - failures.requests).toBe(2);
  });

  it("says which results a user overrode, however the run recorded them, and opens an overridden evaluation", async () => {
    const overridden = await startServer({
      seed: {
        ...seed,
        runs: [
          {
            id: "run-overridden0001",
            workspace: "ws-production0000001",
            createdAt: new Date(now).toISOString(),
            overridden: true,
            policyResults: [
              { policySet: "baseline", policy: "soft-rule", level: "soft-mandatory", status: "failed" as const },
              {
                via: "policy-check" as const,
                policySet: "legacy",
                policy: "old-rule",
                level: "soft-mandatory",
                status: "failed" as const,
              },
              {
                kind: "tfpolicy" as const,
                policySet: "tf-rules",
                policy: "resource_policy.aws_s3_bucket.encrypted",
                fileName: "s3.policy.hcl",
                level: "mandatory_overridable",
                status: "failed" as const,
              },
            ],
          },
        ],
      },
    });
    const reader = new TfeClient({ address: overridden.url, token, rateLimit: false });
    try {
      const runs = [];
      for await (const run of reader.runs.since("ws-production0000001", new Date(now - day))) runs.push(run);
      const run = runs.find((each) => each.id === "run-overridden0001") as (typeof runs)[number];
      // No advisory failure in any count: only the override makes these evaluations worth opening.
      const results = await reader.runs.policyResults(run, { wentOnOnly: true });
      expect(results.map((result) => [result.recordedBy, result.policy, result.level, result.overridden])).toEqual([
        ["task-stage", "soft-rule", "mandatory", true],
        ["policy-check", "old-rule", "mandatory", true],
        ["tf-policy-evaluation", "resource_policy.aws_s3_bucket.encrypted", "mandatory_overridable", true],
      ]);
      expect(results[2]).toMatchObject({
        fileName: "s3.policy.hcl",
        declarations: ['resource_policy "aws_s3_bucket" "encrypted"'],
      });
    } finally {
      await reader.close();
      await overridden.close();
    }
  });

  it("orders runs by the time they name, so that two runs of one second never cross a window's edge", async () => {
    // The same second, written with and without its fraction: as text, "...:00Z" sorts after "...:00.500Z".
    const edge = await startServer({
      seed: {
        ...seed,
        runs: [
          { id: "run-edgeEarly00001", workspace: "ws-staging000000001", createdAt: "2026-11-27T12:00:00Z" },
          { id: "run-edgeLate000001", workspace: "ws-staging000000001", createdAt: "2026-11-27T12:00:00.500Z" },
          { id: "run-edgeOlder00001", workspace: "ws-staging000000001", createdAt: "2026-11-27T11:59:59.900Z" },
        ],
      },
    });
    const reader = new TfeClient({ address: edge.url, token, rateLimit: false });
    try {
      const runs = [];
      for await (const run of reader.runs.since("ws-staging000000001", new Date("2026-11-27T12:00:00.250Z"), 1)) {
        runs.push(run.id);
      }
      expect(runs).toEqual(["run-edgeLate000001"]);
      const all = [];
      for await (const run of reader.runs.since("ws-staging000000001", new Date(0))) all.push(run.id);
      expect(all).toEqual(["run-edgeLate000001", "run-edgeEarly00001", "run-edgeOlder00001"]);
    } finally {
      await reader.close();
      await edge.close();
    }
  });

  it("takes the seed of runs docs/local-server.md shows", () => {
    const blocks = fencedBlocks(readFileSync(join(__dirname, "..", "..", "docs", "local-server.md"), "utf8"), "json");
    const runs = blocks.find((block) => block.includes("run-PaymentsProd0001")) as string;
    expect(loadSeed(JSON.parse(runs)).runs.flatMap((run) => run.policyResults.map((result) => result.kind))).toEqual([
      "sentinel",
      "opa",
      "sentinel",
      "tfpolicy",
    ]);
  });

  it("answers each document on the contract, and a run of another organization as none", async () => {
    for (const path of [
      "/api/v2/workspaces/ws-production0000001/runs",
      "/api/v2/runs/run-production00001/task-stages",
      "/api/v2/task-stages/ts-production00001/policy-evaluations",
      "/api/v2/policy-evaluations/poleval-production00001s/policy-set-outcomes",
      "/api/v2/policy-evaluations/poleval-production00001o/policy-set-outcomes",
      "/api/v2/runs/run-production00001/policy-checks",
      "/api/v2/runs/run-production00001/tf-policy-evaluations",
      "/api/v2/tf-policy-evaluations/tfpe-production00001/tf-policy-set-outcomes",
    ]) {
      expect((await call(server, "GET", path)).status, path).toBe(200);
    }
    expect((await call(server, "GET", "/api/v2/workspaces/ws-globex0000000001/runs")).status).toBe(404);
    expect((await call(server, "GET", "/api/v2/runs/run-doesnotexist01/task-stages")).status).toBe(404);
    expect(
      (await call(server, "GET", "/api/v2/policy-evaluations/poleval-production00001x/policy-set-outcomes")).status,
    ).toBe(404);
  });
});
