import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TfeClient } from "../../src/client";
import { planPendingCreates, withImports } from "../../src/recovery/pending-creates";
import type { RunningServer } from "../../src/server";
import { startSeededServer } from "../seeded-server";

// What `tfe-governance pending-creates` finds of a killed create of a PolicySet, against the local server; the
// whole recovery of killed Policy creates runs under the engine in test/e2e/interrupted-runs.test.ts.

const organization = "acme";
const token = "pending-creates-token-0123456789";
const setType = "pulumi-nodejs:dynamic/tfe:PolicySet";

describe("pending creates of PolicySet", () => {
  let server: RunningServer;
  let client: TfeClient;
  beforeAll(async () => {
    server = await startSeededServer({ organization, token });
    client = new TfeClient({ address: server.url, token, rateLimit: false });
  });
  afterAll(async () => {
    await client.close();
    await server.close();
  });

  it("records the set a killed create made, claiming no version or parameter it may not have finished", async () => {
    const made = await client.policySets.create(organization, { name: "killed-mid-create" });
    const inputs = {
      organization,
      name: "killed-mid-create",
      kind: "sentinel",
      directory: "sentinel-baseline",
      contentHash: "a".repeat(64),
      parameters: { api_token: { value: "s3cr3t", sensitive: true } },
      __provider: "exports.handler = ...",
    };
    const exported = {
      deployment: {
        resources: [],
        pending_operations: [
          { type: "creating", resource: { urn: "urn:pulumi:dev::p::x$tfe:PolicySet::killed", type: setType, inputs } },
          {
            type: "creating",
            resource: {
              urn: "urn:pulumi:dev::p::x$tfe:PolicySet::never-made",
              type: setType,
              inputs: { ...inputs, name: "never-made" },
            },
          },
        ],
      },
    };
    const plan = await planPendingCreates(exported, client);
    expect(plan.imports).toEqual([{ urn: "urn:pulumi:dev::p::x$tfe:PolicySet::killed", id: made.id }]);
    expect(plan.notes).toEqual([expect.stringMatching(/never-made: nothing on the service/)]);
    const recorded = withImports(exported, plan).deployment?.resources?.[0] as unknown as {
      id: string;
      outputs: Record<string, unknown>;
    };
    expect(recorded.id).toBe(made.id);
    expect(recorded.outputs).toMatchObject({
      contentHash: null,
      currentVersionId: null,
      parameters: {},
      parameterIds: {},
    });
    expect(JSON.stringify(recorded.outputs)).not.toContain("s3cr3t");
  });

  it("leaves alone an object of the declared name that is not what the killed run sent", async () => {
    const theirs = await client.policySets.create(organization, { name: "someone-elses", global: true });
    const policy = await client.policies.create(organization, { name: "their-policy", enforcementLevel: "advisory" });
    const exported = {
      deployment: {
        resources: [],
        pending_operations: [
          {
            type: "creating",
            resource: {
              urn: "urn:pulumi:dev::p::x$tfe:PolicySet::someone-elses",
              type: setType,
              inputs: { organization, name: "someone-elses", kind: "sentinel", global: false, description: null },
            },
          },
          {
            type: "creating",
            resource: {
              urn: "urn:pulumi:dev::p::x$tfe:Policy::their-policy",
              type: "pulumi-nodejs:dynamic/tfe:Policy",
              inputs: { organization, name: "their-policy", kind: "sentinel", enforcementLevel: "hard-mandatory" },
            },
          },
        ],
      },
    };
    const plan = await planPendingCreates(exported, client);
    expect(plan.imports).toEqual([]);
    expect(plan.notes).toEqual([
      expect.stringMatching(
        new RegExp(
          `someone-elses: ${theirs.id} has the declared name, but global is true: not what the killed run sent, so it is left alone`,
        ),
      ),
      expect.stringMatching(new RegExp(`their-policy: ${policy.id} has the declared name, but its level is advisory`)),
    ]);
  });
});
