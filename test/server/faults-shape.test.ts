import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningServer } from "../../src/server";
import { call, createPolicy, organization, start, token } from "./helpers";

let server: RunningServer;
beforeAll(async () => {
  server = await start();
});
afterAll(() => server.close());

const registryRoute = "GET /api/registry/v1/modules/:namespace/:name/:provider/versions";
const registryPath = `/api/registry/v1/modules/${organization}/vpc/aws/versions`;

describe("injected faults answer in the shape of the interface they hit", () => {
  for (const afterHandler of [false, true]) {
    it(`registry route, ${afterHandler ? "after" : "before"} the handler: {"errors": ["..."]}`, async () => {
      server.setFaults([{ route: registryRoute, status: 503, afterHandler }]);
      try {
        const answer = await call(server, "GET", registryPath);
        expect(answer.status).toBe(503);
        expect(answer.headers.get("content-type")).toMatch(/^application\/json/);
        expect(answer.body).toEqual({ errors: ["Service Unavailable"] });
      } finally {
        server.setFaults([]);
      }
    });
  }

  it("JSON:API route after the handler: a JSON:API error document", async () => {
    server.setFaults([{ route: "GET /api/v2/organizations/:organization/policies", status: 502, afterHandler: true }]);
    try {
      const answer = await call(server, "GET", `/api/v2/organizations/${organization}/policies`);
      expect(answer.status).toBe(502);
      expect(answer.headers.get("content-type")).toMatch(/^application\/vnd\.api\+json/);
      expect(answer.body.errors[0]).toMatchObject({ status: "502", title: "injected fault" });
    } finally {
      server.setFaults([]);
    }
  });
});

describe("a reset before the handler loses the request", () => {
  it("a DELETE, which has no body to wait for, deletes nothing", async () => {
    const policy = await createPolicy(server, "outlives-a-reset");
    server.setFaults([{ route: "DELETE /api/v2/policies/:policyId", reset: true, times: 1 }]);
    try {
      const sent = request(`${server.url}/api/v2/policies/${policy.id}`, {
        method: "DELETE",
        headers: { authorization: `Bearer ${token}` },
      });
      await expect(sent).rejects.toThrow();
    } finally {
      server.setFaults([]);
    }
    // The handler would have run by the time the client sees the reset, were it going to.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await call(server, "GET", `/api/v2/policies/${policy.id}`)).status).toBe(200);
  });
});
