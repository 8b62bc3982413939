import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningServer } from "../../src/server";
import { call, createPolicy, start } from "./helpers";

// What HashiCorp's own clients (go-tfe, the Terraform tfe provider) need from the server beyond the spec; the
// go-tfe conformance suite (test/conformance) drives the same through the real client.

let server: RunningServer;
beforeAll(async () => {
  server = await start();
});
afterAll(() => server.close());

describe("an update that changes nothing", () => {
  // go-tfe sends exactly this for an Update with no option set, and the provider when a description is removed.
  it("answers 200 with the policy unchanged, updated-at too, for no attributes and for empty attributes", async () => {
    const policy = await createPolicy(server, "unchanged", { description: "kept" });
    await call(server, "PUT", `/api/v2/policies/${policy.id}/upload`, { raw: "main = rule { true }" });
    const shown = await call(server, "GET", `/api/v2/policies/${policy.id}`);
    for (const data of [
      { type: "policies" },
      { type: "policies", attributes: {} },
      { type: "policies", id: policy.id },
    ]) {
      const answer = await call(server, "PATCH", `/api/v2/policies/${policy.id}`, { body: { data } });
      expect(answer.status, JSON.stringify(data)).toBe(200);
      expect(answer.body.data).toEqual(shown.body.data);
    }
    expect(shown.body.data.attributes["updated-at"]).not.toBeNull();
    expect((await call(server, "GET", `/api/v2/policies/${policy.id}`)).body.data).toEqual(shown.body.data);
  });

  it("leaves updated-at alone when the values sent are the ones held, and moves it when one changes", async () => {
    const policy = await createPolicy(server, "same-values", { description: "same" });
    await call(server, "PUT", `/api/v2/policies/${policy.id}/upload`, { raw: "main = rule { true }" });
    const shown = await call(server, "GET", `/api/v2/policies/${policy.id}`);
    const same = { description: "same", "enforcement-level": "advisory" };
    const resent = await call(server, "PATCH", `/api/v2/policies/${policy.id}`, {
      body: { data: { type: "policies", attributes: same } },
    });
    expect(resent.body.data).toEqual(shown.body.data);
    await new Promise((resolve) => setTimeout(resolve, 5));
    const changed = await call(server, "PATCH", `/api/v2/policies/${policy.id}`, {
      body: { data: { type: "policies", attributes: { description: "other" } } },
    });
    expect(changed.body.data.attributes.description).toBe("other");
    expect(changed.body.data.attributes["updated-at"]).not.toBe(shown.body.data.attributes["updated-at"]);
  });

  it("still refuses a document without data or of another type, naming the member", async () => {
    const policy = await createPolicy(server, "unchanged-refusals");
    const noData = await call(server, "PATCH", `/api/v2/policies/${policy.id}`, { body: {} });
    expect(noData.status).toBe(422);
    expect(noData.body.errors[0].source.pointer).toBe("/data");
    const otherType = await call(server, "PATCH", `/api/v2/policies/${policy.id}`, {
      body: { data: { type: "teams" } },
    });
    expect(otherType.status).toBe(422);
    expect(otherType.body.errors[0].source.pointer).toBe("/data/type");
  });

  it("answers 404 for a missing policy or a token that may not manage policies, as a real update does", async () => {
    const policy = await createPolicy(server, "unchanged-permissions");
    const body = { data: { type: "policies" } };
    expect((await call(server, "PATCH", "/api/v2/policies/pol-doesNotExist00000", { body })).status).toBe(404);
    const reader = await call(server, "PATCH", `/api/v2/policies/${policy.id}`, {
      body,
      auth: "acme-reader-0123456789",
    });
    expect(reader.status).toBe(404);
  });
});

describe("service discovery (GET /.well-known/terraform.json)", () => {
  it("lists the tfe API versions at /api/v2/ as plain JSON, with or without a token", async () => {
    for (const auth of [null, undefined]) {
      const answer = await call(server, "GET", "/.well-known/terraform.json", { auth });
      expect(answer.status).toBe(200);
      // terraform-svchost (the provider's discovery) accepts application/json only.
      expect(answer.headers.get("content-type")).toMatch(/^application\/json(;|$)/);
      expect(answer.body).toEqual({ "tfe.v2": "/api/v2/", "tfe.v2.1": "/api/v2/", "tfe.v2.2": "/api/v2/" });
    }
  });
});

describe("the download origin's host name", () => {
  const downloadLocation = async (target: RunningServer) => {
    const policy = await createPolicy(target, `download-host-${Date.now()}`);
    await call(target, "PUT", `/api/v2/policies/${policy.id}/upload`, { raw: "main = rule { true }" });
    const answer = await call(target, "GET", `/api/v2/policies/${policy.id}/download`);
    expect(answer.status).toBe(302);
    return new URL(answer.headers.get("location")!);
  };

  // Go's HTTP client keeps Authorization on a redirect to the same host name, whatever the port.
  it("is localhost when the API is 127.0.0.1, so Go clients do not send the token there", async () => {
    expect(new URL(server.url).hostname).toBe("127.0.0.1");
    const location = await downloadLocation(server);
    expect(location.hostname).toBe("localhost");
    expect(location.origin).toBe(server.downloadOrigin);
    expect(await (await fetch(location)).text()).toBe("main = rule { true }");
  });

  it("is the one given with downloadHost", async () => {
    const custom = await start({ downloadHost: "127.0.0.1" });
    try {
      const location = await downloadLocation(custom);
      expect(location.hostname).toBe("127.0.0.1");
      expect(location.origin).toBe(custom.downloadOrigin);
      expect(await (await fetch(location)).text()).toBe("main = rule { true }");
    } finally {
      await custom.close();
    }
  });
});

describe("X-RateLimit-Limit", () => {
  // go-tfe paces itself by this header: a limit the server does not enforce would slow it for nothing.
  it("is not sent when no limit is enforced", async () => {
    const ping = await call(server, "GET", "/api/v2/ping");
    expect(ping.status).toBe(204);
    expect(ping.headers.has("x-ratelimit-limit")).toBe(false);
  });

  it("says the enforced limit on every answer under --rate-limit", async () => {
    const limited = await start({ rateLimit: 12 });
    try {
      for (const path of ["/api/v2/ping", "/api/v2/organizations/acme/policies"]) {
        expect((await call(limited, "GET", path)).headers.get("x-ratelimit-limit"), path).toBe("12");
      }
    } finally {
      await limited.close();
    }
  });
});
