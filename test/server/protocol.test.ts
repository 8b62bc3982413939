import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FaultPlan, RunningServer } from "../../src/server";
import { call, createPolicy, organization, policyBody, start, token } from "./helpers";

let server: RunningServer;
const policiesPath = `/api/v2/organizations/${organization}/policies`;
const createRoute = "POST /api/v2/organizations/:organization/policies";

beforeAll(async () => {
  server = await start();
});
afterAll(() => server.close());

describe("authentication", () => {
  it("answers 401 without a token, with an unknown token and with a malformed header", async () => {
    for (const auth of [null, "not-a-token-at-all"]) {
      const answer = await call(server, "GET", policiesPath, { auth });
      expect(answer.status).toBe(401);
      expect(answer.body.errors[0]).toMatchObject({ status: "401", title: "unauthorized" });
    }
    const basic = await fetch(`${server.url}${policiesPath}`, { headers: { authorization: `Basic ${token}` } });
    expect(basic.status).toBe(401);
  });
});

describe("bad input never reaches a 500", () => {
  it("answers malformed JSON with 400", async () => {
    const answer = await call(server, "POST", policiesPath, {
      raw: '{"data": {',
      contentType: "application/vnd.api+json",
    });
    expect(answer.status).toBe(400);
    expect(answer.body.errors[0]).toMatchObject({ status: "400", title: "bad request" });
    expect(answer.text).not.toMatch(/at .*\.js:\d+/);
  });

  it("answers a wrong media type with 415 and accepts application/json too", async () => {
    const text = await call(server, "POST", policiesPath, {
      raw: JSON.stringify(policyBody("t")),
      contentType: "text/plain",
    });
    expect(text.status).toBe(415);
    expect(text.body.errors[0].detail).toContain("application/vnd.api+json");
    const bytes = await call(server, "POST", policiesPath, { raw: "{}", contentType: "application/octet-stream" });
    expect(bytes.status).toBe(415);
    const json = await call(server, "POST", policiesPath, {
      body: policyBody("plain-json"),
      contentType: "application/json",
    });
    expect(json.status).toBe(201);
  });

  it("answers a JSON body over 1 MB with 413", async () => {
    const answer = await call(server, "POST", policiesPath, {
      body: policyBody("huge", { description: "x".repeat(1024 * 1024) }),
    });
    expect(answer.status).toBe(413);
    expect(answer.body.errors[0].status).toBe("413");
  });

  it("answers unknown routes with a JSON:API 404", async () => {
    const answer = await call(server, "GET", "/api/v2/workspaces");
    expect(answer.status).toBe(404);
    expect(answer.body.errors[0]).toMatchObject({ status: "404", title: "not found" });
    expect((await call(server, "DELETE", policiesPath)).status).toBe(404);
  });

  it("answers a repeated query parameter with its last value, as the service does, not with a 500", async () => {
    const name = "repeated-search";
    await createPolicy(server, name);
    const answer = await call(server, "GET", `${policiesPath}?search%5Bname%5D=nothing&search%5Bname%5D=${name}`);
    expect(answer.status).toBe(200);
    expect(answer.body.data.map((policy: { attributes: { name: string } }) => policy.attributes.name)).toEqual([name]);
    expect(new URL(answer.body.links.self).searchParams.getAll("search[name]")).toEqual([name]);
  });

  it("answers a malformed percent-encoding in the path with a 400 error document on both origins", async () => {
    const api = await call(server, "GET", "/api/v2/policies/%ZZ");
    expect(api.status).toBe(400);
    expect(api.body.errors[0]).toMatchObject({ status: "400", title: "bad request" });
    const registry = await call(server, "GET", "/api/registry/v1/modules/acme/vpc/aws/%ZZ");
    expect(registry.status).toBe(400);
    expect(registry.body).toEqual({ errors: ["Bad Request"] });
    const download = await fetch(`${server.downloadOrigin}/policy-code/%ZZ`);
    expect(download.status).toBe(400);
    expect(((await download.json()) as { errors: { status: string }[] }).errors[0]!.status).toBe("400");
  });

  it("answers a deeply nested or infinite value for an enumerated attribute with 422, naming what was sent", async () => {
    const depth = 100_000;
    const nested = `${"[".repeat(depth)}${"]".repeat(depth)}`;
    const raw = JSON.stringify(policyBody("deep", { kind: "KIND" })).replace('"KIND"', nested);
    const deep = await call(server, "POST", policiesPath, { raw, contentType: "application/vnd.api+json" });
    expect(deep.status).toBe(422);
    expect(deep.body.errors[0]).toMatchObject({ source: { pointer: "/data/attributes/kind" } });
    expect(deep.body.errors[0].detail).toContain("not an array");
    const infinite = JSON.stringify(policyBody("huge", { kind: "KIND" })).replace('"KIND"', "1e400");
    const huge = await call(server, "POST", policiesPath, { raw: infinite, contentType: "application/vnd.api+json" });
    expect(huge.status).toBe(422);
    expect(huge.body.errors[0].detail).toContain("not Infinity");
  });

  it("answers a JSON array, a string and null bodies with 422", async () => {
    for (const raw of ["[]", '"policies"', "null"]) {
      const answer = await call(server, "POST", policiesPath, { raw, contentType: "application/vnd.api+json" });
      expect(answer.status, raw).toBe(422);
    }
  });
});

describe("ping and rate limit", () => {
  it("answers ping with 204 and TFP-API-Version, and no X-RateLimit-Limit where it enforces no limit", async () => {
    const answer = await call(server, "GET", "/api/v2/ping");
    expect(answer.status).toBe(204);
    expect(answer.headers.get("x-ratelimit-limit")).toBeNull();
    expect(answer.headers.get("tfp-api-version")).toMatch(/^\d+\.\d+$/);
  });

  it("limits each token to N requests per second with 429 and a fractional X-RateLimit-Reset", async () => {
    const limited = await start({ rateLimit: 5 });
    try {
      const answers = await Promise.all(Array.from({ length: 8 }, () => call(limited, "GET", policiesPath)));
      expect(answers.filter((answer) => answer.status === 200)).toHaveLength(5);
      const refused = answers.filter((answer) => answer.status === 429);
      expect(refused).toHaveLength(3);
      for (const answer of refused) {
        expect(answer.headers.get("x-ratelimit-limit")).toBe("5");
        const reset = Number(answer.headers.get("x-ratelimit-reset"));
        expect(reset).toBeGreaterThan(0);
        expect(reset).toBeLessThanOrEqual(0.2);
        expect(answer.body.errors[0].status).toBe("429");
      }
      const other = await call(limited, "GET", "/api/v2/ping", { auth: "acme-reader-0123456789" });
      expect(other.status).toBe(204);
      expect(other.headers.get("x-ratelimit-limit")).toBe("5");
      await new Promise((resolve) => setTimeout(resolve, 1000 * Number(refused[0]!.headers.get("x-ratelimit-reset"))));
      expect((await call(limited, "GET", policiesPath)).status).toBe(200);
    } finally {
      await limited.close();
    }
  });

  it("counted every second, refuses what a token bucket lets through: its refill within the second of a burst", async () => {
    // Three more 700 ms after the burst was sent (not answered: a first answer can be slow).
    const burstThenMore = async (target: RunningServer) => {
      const burst = Promise.all(Array.from({ length: 5 }, () => call(target, "GET", policiesPath)));
      await new Promise((resolve) => setTimeout(resolve, 700));
      const more = await Promise.all(Array.from({ length: 3 }, () => call(target, "GET", policiesPath)));
      return [...(await burst), ...more];
    };
    const bucket = await start({ rateLimit: 5 });
    const everySecond = await start({ rateLimit: 5, rateLimitCounting: "every-second" });
    try {
      // The bucket refilled 3.5 in 700 ms: 8 within one second against a limit of 5 (7 where the burst came late).
      const throughBucket = (await burstThenMore(bucket)).filter((answer) => answer.status === 200);
      expect(throughBucket.length).toBeGreaterThanOrEqual(7);
      expect(bucket.busiestSecond()).toBe(throughBucket.length);
      const answers = await burstThenMore(everySecond);
      expect(answers.map((answer) => answer.status).sort()).toEqual([...Array(5).fill(200), ...Array(3).fill(429)]);
      // Free again once the burst's first request leaves the window: within the second.
      const reset = Math.max(
        ...answers
          .filter((answer) => answer.status === 429)
          .map((answer) => Number(answer.headers.get("x-ratelimit-reset"))),
      );
      expect(reset).toBeGreaterThan(0);
      expect(reset).toBeLessThan(1);
      expect(everySecond.busiestSecond()).toBe(5);
      await new Promise((resolve) => setTimeout(resolve, 1000 * reset));
      expect((await call(everySecond, "GET", policiesPath)).status).toBe(200);
    } finally {
      await Promise.all([bucket.close(), everySecond.close()]);
    }
  });
});

describe("faults", () => {
  const statuses = async (target: RunningServer, count: number) => {
    const result: number[] = [];
    for (let index = 0; index < count; index++) result.push((await call(target, "GET", "/api/v2/ping")).status);
    return result;
  };

  it("fail the same share of requests in the same order for the same seed", async () => {
    const plan: FaultPlan = { seed: 42, rules: [{ route: "GET /api/v2/ping", status: 500, share: 0.5 }] };
    const first = await start({ faults: plan });
    const second = await start({ faults: plan });
    try {
      const a = await statuses(first, 40);
      const b = await statuses(second, 40);
      expect(a).toEqual(b);
      const failed = a.filter((status) => status === 500).length;
      expect(failed).toBeGreaterThan(8);
      expect(failed).toBeLessThan(32);
      first.setFaults({ seed: 43, rules: [{ route: "GET /api/v2/ping", status: 500, share: 0.5 }] });
      expect(await statuses(first, 40)).not.toEqual(a);
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
  });

  it("with afterHandler, make the change and lose the answer: a retried create finds the name taken", async () => {
    server.setFaults([{ route: createRoute, status: 503, afterHandler: true, times: 1 }]);
    try {
      const lost = await call(server, "POST", policiesPath, { body: policyBody("lost-answer") });
      expect(lost.status).toBe(503);
      const retried = await call(server, "POST", policiesPath, { body: policyBody("lost-answer") });
      expect(retried.status).toBe(422);
      const listed = await call(server, "GET", `${policiesPath}?search%5Bname%5D=lost-answer`);
      expect(listed.body.data).toHaveLength(1);
    } finally {
      server.setFaults([]);
    }
  });

  it("before the handler, fail without a change; reset drops the connection; latency delays", async () => {
    server.setFaults([
      { route: createRoute, status: 500, times: 1 },
      { route: "GET /api/v2/policies/:policyId", reset: true, times: 1 },
      { route: "GET /api/v2/ping", latencyMs: 150, times: 1 },
    ]);
    try {
      expect((await call(server, "POST", policiesPath, { body: policyBody("never-made") })).status).toBe(500);
      const listed = await call(server, "GET", `${policiesPath}?search%5Bname%5D=never-made`);
      expect(listed.body.data).toEqual([]);
      const policy = await createPolicy(server, "reset-target");
      await expect(call(server, "GET", `/api/v2/policies/${policy.id}`)).rejects.toThrow();
      expect((await call(server, "GET", `/api/v2/policies/${policy.id}`)).status).toBe(200);
      const started = performance.now();
      expect((await call(server, "GET", "/api/v2/ping")).status).toBe(204);
      expect(performance.now() - started).toBeGreaterThanOrEqual(140);
      const log = server.requestLog.entries();
      expect(log.some((entry) => entry.route === "/api/v2/policies/:policyId" && entry.status === 0)).toBe(true);
    } finally {
      server.setFaults([]);
    }
  });

  it("refuses an invalid plan with a message naming the member", async () => {
    expect(() => server.setFaults([{ route: "ping", status: 500 }])).toThrow(/route must be/);
    expect(() => server.setFaults([{ route: "*" }])).toThrow(/needs status, reset, latencyMs or versionError/);
  });
});

describe("request log", () => {
  it("records method, path, route, status and duration of each request, never the token", async () => {
    server.requestLog.clear();
    await call(server, "GET", "/api/v2/ping");
    await call(server, "POST", policiesPath, { body: policyBody("logged") });
    await call(server, "GET", "/api/v2/nothing-here", { auth: null });
    const entries = server.requestLog.entries();
    expect(entries.map(({ method, path, status }) => ({ method, path, status }))).toEqual([
      { method: "GET", path: "/api/v2/ping", status: 204 },
      { method: "POST", path: policiesPath, status: 201 },
      { method: "GET", path: "/api/v2/nothing-here", status: 401 },
    ]);
    expect(entries[1]!.route).toBe("/api/v2/organizations/:organization/policies");
    expect(entries.every((entry) => entry.durationMs >= 0 && entry.origin === "api")).toBe(true);
    expect(JSON.stringify(entries)).not.toContain(token);
    server.requestLog.clear();
    expect(server.requestLog.entries()).toEqual([]);
  });
});

describe("OpenAPI document", () => {
  it("is OpenAPI 3.1 JSON with every endpoint and schemas from the client", async () => {
    const answer = await call(server, "GET", "/api/openapi.json", { auth: null });
    expect(answer.status).toBe(200);
    const document = answer.body;
    expect(document.openapi).toBe("3.1.0");
    const operations = Object.entries(document.paths as Record<string, Record<string, unknown>>).flatMap(
      ([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(operations.sort()).toEqual(
      [
        "GET /.well-known/terraform.json",
        "GET /api/openapi.json",
        "GET /api/v2/ping",
        "POST /_local/vcs-push",
        "POST /api/v2/organizations/{organization}/policies",
        "GET /api/v2/organizations/{organization}/policies",
        "GET /api/v2/policies/{policyId}",
        "PATCH /api/v2/policies/{policyId}",
        "DELETE /api/v2/policies/{policyId}",
        "PUT /api/v2/policies/{policyId}/upload",
        "GET /api/v2/policies/{policyId}/download",
        "GET /api/v2/organizations/{organization}/policy-sets",
        "GET /api/v2/organizations/{organization}/projects",
        "GET /api/v2/organizations/{organization}/workspaces",
        "POST /api/v2/organizations/{organization}/policy-sets",
        "GET /api/v2/policy-sets/{policySetId}",
        "PATCH /api/v2/policy-sets/{policySetId}",
        "DELETE /api/v2/policy-sets/{policySetId}",
        ...["policies", "workspaces", "workspace-exclusions", "projects", "project-exclusions"].flatMap(
          (relationship) => [
            `POST /api/v2/policy-sets/{policySetId}/relationships/${relationship}`,
            `DELETE /api/v2/policy-sets/{policySetId}/relationships/${relationship}`,
          ],
        ),
        "POST /api/v2/policy-sets/{policySetId}/versions",
        "GET /api/v2/policy-set-versions/{versionId}",
        "GET /api/v2/policy-sets/{policySetId}/parameters",
        "POST /api/v2/policy-sets/{policySetId}/parameters",
        "GET /api/v2/policy-sets/{policySetId}/parameters/{parameterId}",
        "GET /api/v2/projects/{id}",
        "GET /api/v2/workspaces/{id}",
        "PATCH /api/v2/policy-sets/{policySetId}/parameters/{parameterId}",
        "DELETE /api/v2/policy-sets/{policySetId}/parameters/{parameterId}",
        "POST /api/v2/organizations/{organization}/registry-modules",
        "POST /api/v2/organizations/{organization}/registry-modules/private/{namespace}/{name}/{provider}/versions",
        "PATCH /api/v2/organizations/{organization}/registry-modules/private/{namespace}/{name}/{provider}/{version}",
        "GET /api/registry/v1/modules/{namespace}/{name}/{provider}/versions",
        "GET /api/registry/v1/modules/{namespace}/{name}/{provider}/{version}",
        "GET /api/v2/workspaces/{workspaceId}/runs",
        "GET /api/v2/runs/{runId}/task-stages",
        "GET /api/v2/task-stages/{taskStageId}/policy-evaluations",
        "GET /api/v2/policy-evaluations/{policyEvaluationId}/policy-set-outcomes",
        "GET /api/v2/runs/{runId}/policy-checks",
        "GET /api/v2/runs/{runId}/tf-policy-evaluations",
        "GET /api/v2/tf-policy-evaluations/{tfPolicyEvaluationId}/tf-policy-set-outcomes",
      ].sort(),
    );
    const create = document.paths["/api/v2/organizations/{organization}/policies"].post;
    const requestSchema = create.requestBody.content["application/vnd.api+json"].schema;
    expect(requestSchema.properties.data.properties.attributes.properties.name.pattern).toBe("^[A-Za-z0-9_-]+$");
    expect(create.responses["422"].content["application/vnd.api+json"].schema.properties.errors.type).toBe("array");
    expect(create.responses["201"].content["application/vnd.api+json"].schema.properties.data).toBeDefined();
    // An update may carry no attributes at all (go-tfe's empty Update).
    const update = document.paths["/api/v2/policies/{policyId}"].patch;
    const updateData = update.requestBody.content["application/vnd.api+json"].schema.properties.data;
    expect(updateData.required).not.toContain("attributes");
  });
});
