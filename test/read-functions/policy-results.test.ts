import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TfeClient } from "../../src/client";
import { listPolicyResults } from "../../src/read-functions";
import type { RunningServer } from "../../src/server";
import { startSeededServer } from "../seeded-server";

// listPolicyResults, the numbers behind what preview says of a raised level, read from the local server over HTTP.

const organization = "acme";
const token = "policy-results-token-0123456789";

let server: RunningServer;
let client: TfeClient;

beforeAll(async () => {
  server = await startSeededServer({
    organization,
    token,
    workspaces: [
      { id: "ws-ResultsProd00001", name: "production" },
      { id: "ws-ResultsDev000001", name: "development" },
    ],
    runs: [
      {
        id: "run-ResultsProd01",
        workspace: "ws-ResultsProd00001",
        daysAgo: 2,
        policyResults: [
          { policySet: "baseline", policy: "require-tags", level: "advisory", status: "failed" },
          { policySet: "baseline", policy: "restrict-regions", level: "hard-mandatory", status: "passed" },
        ],
      },
      {
        id: "run-ResultsProd02",
        workspace: "ws-ResultsProd00001",
        daysAgo: 45,
        policyResults: [{ policySet: "baseline", policy: "require-tags", level: "advisory", status: "failed" }],
      },
      {
        id: "run-ResultsDev01",
        workspace: "ws-ResultsDev000001",
        daysAgo: 1,
        policyResults: [{ policySet: "baseline", policy: "require-tags", level: "advisory", status: "passed" }],
      },
    ],
  });
  client = new TfeClient({ address: server.url, token, rateLimit: false });
});
afterAll(async () => {
  await client?.close();
  await server?.close();
});

describe("listPolicyResults", () => {
  it("lists one policy's results of the window in every workspace of the organization", async () => {
    const results = await listPolicyResults({ policy: "require-tags" }, { client, organization });
    expect(results.map((result) => [result.workspaceName, result.runId, result.status, result.level])).toEqual([
      ["development", "run-ResultsDev01", "passed", "advisory"],
      ["production", "run-ResultsProd01", "failed", "advisory"],
    ]);
    expect(results[1]).toMatchObject({ kind: "sentinel", recordedBy: "task-stage", policySet: "baseline" });
  });

  it("takes a longer window and some workspaces, and refuses an argument it does not know", async () => {
    const results = await listPolicyResults(
      { workspaceIds: ["ws-ResultsProd00001"], days: 60 },
      { client, organization },
    );
    expect(results.map((result) => `${result.runId} ${result.policy}`)).toEqual([
      "run-ResultsProd01 require-tags",
      "run-ResultsProd01 restrict-regions",
      "run-ResultsProd02 require-tags",
    ]);
    await expect(listPolicyResults({ day: 60 } as never, { client, organization })).rejects.toThrow(
      "day is not a property of listPolicyResults's arguments: did you mean days?",
    );
  });

  it("fails rather than answer in part when the budget runs out, naming what to raise", async () => {
    await expect(listPolicyResults({ requestBudget: 2 }, { client, organization })).rejects.toThrow(
      /^listPolicyResults could not read every workspace: [12] workspaces? past the budget of 2 requests; raise requestBudget, or name workspaceIds$/,
    );
  });
});
