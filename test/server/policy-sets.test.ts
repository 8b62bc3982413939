import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningServer } from "../../src/server";
import { call, createPolicy, otherToken, policySetId, readOnlyToken, start } from "./helpers";

let server: RunningServer;

beforeAll(async () => {
  server = await start();
});
afterAll(() => server.close());

const membershipPath = (setId: string) => `/api/v2/policy-sets/${setId}/relationships/policies`;
const members = (...ids: string[]) => ({ data: ids.map((id) => ({ type: "policies", id })) });

async function membership(policyId: string) {
  const answer = await call(server, "GET", `/api/v2/policies/${policyId}`);
  return {
    count: answer.body.data.attributes["policy-set-count"],
    sets: (answer.body.data.relationships["policy-sets"]?.data ?? []).map((set: { id: string }) => set.id),
    updatedAt: answer.body.data.attributes["updated-at"],
  };
}

describe("policy set membership (policy-sets-api.md, Policies and sets)", () => {
  it("POST adds policies to the set and DELETE removes them, answering 204; the policies keep their ids", async () => {
    const first = await createPolicy(server, "joins-and-leaves");
    const second = await createPolicy(server, "joins-too");
    const joined = await call(server, "POST", membershipPath(policySetId), { body: members(first.id, second.id) });
    expect(joined.status).toBe(204);
    expect(joined.text).toBe("");
    expect(await membership(first.id)).toEqual({ count: 1, sets: [policySetId], updatedAt: null });
    expect((await membership(second.id)).sets).toEqual([policySetId]);

    // Joining again and leaving a set the policy is not in change nothing.
    expect((await call(server, "POST", membershipPath(policySetId), { body: members(first.id) })).status).toBe(204);
    expect((await membership(first.id)).count).toBe(1);
    const left = await call(server, "DELETE", membershipPath(policySetId), { body: members(first.id) });
    expect(left.status).toBe(204);
    expect(await membership(first.id)).toEqual({ count: 0, sets: [], updatedAt: null });
    expect((await call(server, "DELETE", membershipPath(policySetId), { body: members(first.id) })).status).toBe(204);
    expect((await membership(second.id)).sets).toEqual([policySetId]);
  });

  it("answers 404 for an unknown set, a set of another organization, and a token that may not manage policies", async () => {
    const policy = await createPolicy(server, "not-for-strangers");
    expect(
      (await call(server, "POST", membershipPath("polset-unknown000000001"), { body: members(policy.id) })).status,
    ).toBe(404);
    for (const auth of [otherToken, readOnlyToken]) {
      const answer = await call(server, "POST", membershipPath(policySetId), { body: members(policy.id), auth });
      expect(answer.status).toBe(404);
    }
    expect((await membership(policy.id)).count).toBe(0);
  });

  it("answers 422 naming the entry for a policy that is not the set's organization's, and changes nothing", async () => {
    const policy = await createPolicy(server, "stays-out");
    const answer = await call(server, "POST", membershipPath(policySetId), {
      body: members(policy.id, "pol-nosuchpolicy000001"),
    });
    expect(answer.status).toBe(422);
    expect(answer.body.errors).toEqual([
      expect.objectContaining({
        source: { pointer: "/data/1/id" },
        detail: expect.stringContaining("pol-nosuchpolicy000001"),
      }),
    ]);
    expect((await membership(policy.id)).count).toBe(0);
  });

  it("answers 422 for a body that is not a list of policies", async () => {
    for (const body of [
      { data: [] },
      { data: [{ type: "workspaces", id: "ws-1" }] },
      { data: { type: "policies", id: "x" } },
    ]) {
      expect((await call(server, "POST", membershipPath(policySetId), { body })).status).toBe(422);
    }
  });
});
