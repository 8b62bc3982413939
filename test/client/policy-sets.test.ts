import { describe, expect, it } from "vitest";
import { TfeValidationError } from "../../src/client/index";
import { empty, startFaultServer, testClient } from "./helpers";

describe("policy set membership", () => {
  it.each([
    ["addPolicies", "POST"],
    ["removePolicies", "DELETE"],
  ] as const)(
    "%s sends %s to the set's relationships/policies with the policies' identifiers only",
    async (call, method) => {
      const server = await startFaultServer(empty(204));
      await testClient(server.url).policySets[call]("polset-abc", ["pol-1", "pol-2"]);
      const [request] = server.requests;
      expect(request?.method).toBe(method);
      expect(request?.url).toBe("/api/v2/policy-sets/polset-abc/relationships/policies");
      expect(request?.headers["content-type"]).toContain("application/vnd.api+json");
      expect(JSON.parse(request?.body.toString() ?? "")).toEqual({
        data: [
          { id: "pol-1", type: "policies" },
          { id: "pol-2", type: "policies" },
        ],
      });
    },
  );

  it("refuses an empty list and ids that are no path segment, before sending anything", async () => {
    const server = await startFaultServer(empty(204));
    const client = testClient(server.url);
    await expect(client.policySets.addPolicies("polset-abc", [])).rejects.toBeInstanceOf(TfeValidationError);
    await expect(client.policySets.addPolicies("polset-abc", ["../x"])).rejects.toThrow(/policyIds/);
    await expect(client.policySets.removePolicies("polset/abc", ["pol-1"])).rejects.toThrow(/policySetId/);
    expect(server.requests).toEqual([]);
  });
});
