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
    server = await startSeededServer({
      organization,
      token,
      workspaceIds: ["ws-PendingProd000001", "ws-PendingOther00001"],
      modules: [{ name: "vpc", provider: "aws", versions: ["1.0.0", "1.1.0"] }],
    });
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
    expect(plan.imports).toEqual([{ urn: "urn:pulumi:dev::p::x$tfe:PolicySet::killed", id: made.id, type: setType }]);
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
          `someone-elses: ${theirs.id} has the declared name, but its global is true: not what the killed run sent, so it is left alone`,
        ),
      ),
      expect.stringMatching(new RegExp(`their-policy: ${policy.id} has the declared name, but its level is advisory`)),
    ]);
  });

  it("recovers the plugin's resources of other languages as it does a Node.js program's", async () => {
    const made = await client.policies.create(organization, { name: "from-python", enforcementLevel: "advisory" });
    const exported = pending("urn:pulumi:dev::p::tfegov:index:Policy::from-python", "tfegov:index:Policy", {
      organization,
      name: "from-python",
      kind: "sentinel",
      enforcementLevel: "advisory",
    });
    const plan = await planPendingCreates(exported, client);
    expect(plan.imports).toEqual([
      { urn: "urn:pulumi:dev::p::tfegov:index:Policy::from-python", id: made.id, type: "tfegov:index:Policy" },
    ]);
    const recorded = withImports(exported, plan).deployment?.resources?.[0] as unknown as {
      outputs: Record<string, unknown>;
    };
    expect(recorded.outputs).toMatchObject({ codeHash: null });
  });

  const pending = (urn: string, type: string, inputs: Record<string, unknown>) => ({
    deployment: { resources: [], pending_operations: [{ type: "creating", resource: { urn, type, inputs } }] },
  });

  it("leaves alone a set of the name that holds scope or parameters the killed run never sent", async () => {
    const theirs = await client.policySets.create(organization, { name: "same-settings" });
    await client.policySets.addToScope(theirs.id, "workspaces", ["ws-PendingOther00001"]);
    await client.policySets.createParameter(theirs.id, { key: "region", value: "us-east-1", sensitive: false });
    const sent = {
      organization,
      name: "same-settings",
      kind: "sentinel",
      description: null,
      global: false,
      workspaceIds: ["ws-PendingProd000001"],
      parameters: { region: { value: "eu-west-1", sensitive: false } },
    };
    const plan = await planPendingCreates(pending("urn:pulumi:dev::p::x$tfe:PolicySet::same", setType, sent), client);
    expect(plan.imports).toEqual([]);
    expect(plan.notes[0]).toContain("its workspaceIds hold ws-PendingOther00001, which the run did not send");
    expect(plan.notes[0]).toContain("its parameter region holds another value");
  });

  it("records a set the killed run got part of the way through: fewer members than sent, none it did not send", async () => {
    const made = await client.policySets.create(organization, { name: "part-way" });
    await client.policySets.createParameter(made.id, { key: "region", value: "eu-west-1", sensitive: false });
    const sent = {
      organization,
      name: "part-way",
      kind: "sentinel",
      workspaceIds: ["ws-PendingProd000001"],
      parameters: { region: { value: "eu-west-1", sensitive: false }, token: { value: "x", sensitive: true } },
    };
    const plan = await planPendingCreates(pending("urn:pulumi:dev::p::x$tfe:PolicySet::part", setType, sent), client);
    expect(plan.notes).toEqual([]);
    expect(plan.imports.map((entry) => entry.id)).toEqual([made.id]);
  });

  it("leaves alone a deprecation of the version with another reason or link, and takes its own", async () => {
    const deprecationType = "pulumi-nodejs:dynamic/tfe:ModuleVersionDeprecation";
    const address = { organization, moduleName: "vpc", moduleProvider: "aws" };
    await client.moduleVersions.deprecate({
      organization,
      name: "vpc",
      provider: "aws",
      version: "1.0.0",
      reason: "Deprecated in the UI by the network team.",
    });
    const theirs = await planPendingCreates(
      pending("urn:pulumi:dev::p::x$tfe:ModuleVersionDeprecation::vpc-1.0.0", deprecationType, {
        ...address,
        version: "1.0.0",
        reason: "Use 1.1.0.",
        link: null,
      }),
      client,
    );
    expect(theirs.imports).toEqual([]);
    expect(theirs.notes[0]).toMatch(/its reason is "Deprecated in the UI by the network team\./);
    const ours = await planPendingCreates(
      pending("urn:pulumi:dev::p::x$tfe:ModuleVersionDeprecation::vpc-1.0.0", deprecationType, {
        ...address,
        version: "1.0.0",
        reason: "Deprecated in the UI by the network team.",
        link: null,
      }),
      client,
    );
    expect(ours.imports).toHaveLength(1);
  });

  it("never takes one object for two pending creates", async () => {
    const made = await client.policySets.create(organization, { name: "claimed-twice" });
    const inputs = { organization, name: "claimed-twice", kind: "sentinel" };
    const exported = {
      deployment: {
        resources: [],
        pending_operations: ["first", "second"].map((name) => ({
          type: "creating",
          resource: { urn: `urn:pulumi:dev::p::x$tfe:PolicySet::${name}`, type: setType, inputs },
        })),
      },
    };
    const plan = await planPendingCreates(exported, client);
    expect(plan.imports).toEqual([]);
    expect(plan.notes.join("\n")).toContain(`${made.id} is also what urn:pulumi:dev::p::x$tfe:PolicySet::first left`);
  });
});
