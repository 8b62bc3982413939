import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { listPolicyResults } from "../../src/read-functions";
import { useSeededServer } from "../seeded-server";

// Review of issue 51: listPolicyResults is one of the readers of the one answer. What it says of a read cut short,
// and what it does with a window that reads nothing, against the local server over HTTP.

const organization = "acme";
const token = "review51-results-token-0123456789";
const workspaces = ["ws-ReviewList00001", "ws-ReviewList00002", "ws-ReviewList00003"];

const seeded = useSeededServer({
  organization,
  token,
  workspaceIds: workspaces,
  runs: workspaces.map((workspace, index) => ({
    id: `run-ReviewList${index}`,
    workspace,
    daysAgo: 1,
    policyResults: [{ policySet: "baseline", policy: "require-tags", level: "advisory", status: "failed" as const }],
  })),
});

describe("review 51: listPolicyResults", () => {
  it("is documented as it behaves where the budget cuts the read short (it fails; the docs say it answers in part)", async () => {
    await expect(listPolicyResults({ organization, requestBudget: 2 }, { client: seeded.client })).rejects.toThrow(
      /requestBudget/,
    );
    // What a program's author reads: the generated SDKs' doc comment (schema) and the TypeScript doc comment.
    const schema = JSON.parse(readFileSync(join(__dirname, "..", "..", "src", "plugin", "schema.json"), "utf8"));
    const described = schema.functions["tfegov:index:listPolicyResults"].inputs.properties.requestBudget
      .description as string;
    const typescriptDoc = readFileSync(join(__dirname, "..", "..", "src", "read-functions", "index.ts"), "utf8");
    expect({
      schema: described,
      typescript: /What it did not read is left out of the items/.test(typescriptDoc),
    }).toEqual({
      schema: expect.not.stringMatching(/left out of the items/),
      typescript: false,
    });
  });

  for (const days of [0]) {
    it(`days ${days}: reads nothing, so it does not answer "no results" (it fails naming days, as preview says not known)`, async () => {
      // Truth: three runs of the last day failed require-tags.
      const answer = await listPolicyResults({ organization, days }, { client: seeded.client }).then(
        (items) => ({ items }),
        (error: Error) => ({ error: error.message }),
      );
      expect(answer).toEqual({ error: expect.stringMatching(/\bdays\b/) });
    });
  }
});
