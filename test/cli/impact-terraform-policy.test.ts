import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { impactMain } from "../../src/cli/impact";
import { TfeClient } from "../../src/client";
import { noReach, readImpact, tfPolicySpellings } from "../../src/impact";
import type { RunningServer } from "../../src/server";
import { startSeededServer } from "../seeded-server";

// Review of issue 51: `tfe-governance impact` is to give the answer preview gives (one answer, made in one place).
// A Terraform policy block known by its address is matched by preview under every spelling a result may give it
// (docs/reviewing-governance-changes.md); the command matches the address alone.

const organization = "acme";
const token = "review51-cli-token-0123456789";
const workspace = "ws-ReviewTfCli00001";
const address = "resource_policy.aws_s3_bucket.encrypted";

let server: RunningServer;
beforeAll(async () => {
  server = await startSeededServer({
    organization,
    token,
    workspaces: [{ id: workspace, name: "storage" }],
    runs: [
      {
        id: "run-ReviewTfCli1",
        workspace,
        createdAt: new Date(Date.now() - 24 * 3600 * 1000).toISOString(),
        // The service names the block by its label here: one of the spellings preview takes.
        policyResults: [
          {
            kind: "tfpolicy" as const,
            policySet: "tf-rules",
            policy: "encrypted",
            level: "advisory",
            status: "failed",
          },
        ],
      },
    ],
  });
});
afterAll(() => server?.close());

describe("review 51: tfe-governance impact and a Terraform policy's spellings", () => {
  it("answers for a block named by its address as preview does: the run that failed it at advisory", async () => {
    // Preview, on the same runs: blocked, run-ReviewTfCli1.
    const client = new TfeClient({ address: server.url, token, rateLimit: false });
    const preview = await readImpact(client, {
      organization,
      kind: "tfpolicy",
      policies: [{ name: address, sets: ["tf-rules"], level: "mandatory", spellings: tfPolicySpellings(address) }],
      reach: [{ ...noReach, workspaceIds: [workspace] }],
    }).finally(() => client.close());
    expect(preview.verdict).toBe("blocked");

    const out = new PassThrough();
    let text = "";
    out.on("data", (chunk) => (text += chunk));
    const code = await impactMain(
      ["--kind", "tfpolicy", "--policy", address, "--policy-set", "tf-rules", "--level", "mandatory", "--json"],
      {
        out,
        log: () => {},
        env: { TFE_ADDRESS: server.url, TFE_TOKEN: token, TFE_ORGANIZATION: organization },
      },
    );
    expect(code).toBe(0);
    const report = JSON.parse(text) as { raise: { verdict: string; said: string } };
    expect({ verdict: report.raise.verdict, said: report.raise.said }).toEqual({
      verdict: preview.verdict,
      said: expect.stringContaining("run-ReviewTfCli1"),
    });
  });
});
