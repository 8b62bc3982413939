import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningServer } from "../../src/server";
import { isLoopbackAddress } from "../../src/server/routes/vcs";
import { call, createPolicy, organization, otherToken, readOnlyToken, start } from "./helpers";

// The local server's access table: every route it serves (the list comes from the server itself, so a new route
// joins the table or fails it), each called with no token, a token of another organization, and a token of the
// organization that may read but manage nothing. A refusal looks like no resource (404), as on the service; a token
// that is missing is a 401. Nothing a refused request sent may change what the server holds.

let server: RunningServer;
const ids: Record<string, string> = {};

beforeAll(async () => {
  server = await start();
  ids.policyId = (await createPolicy(server, "access-guard")).id;
  await call(server, "PUT", `/api/v2/policies/${ids.policyId}/upload`, { raw: "main = rule { true }\n" });
  const set = await call(server, "POST", `/api/v2/organizations/${organization}/policy-sets`, {
    body: { data: { type: "policy-sets", attributes: { name: "access-uploaded", kind: "sentinel" } } },
  });
  ids.policySetId = set.body.data.id;
  // A pending version: the one a failed or interrupted upload leaves, which the next upload would make current.
  const version = await call(server, "POST", `/api/v2/policy-sets/${ids.policySetId}/versions`);
  ids.versionId = version.body.data.id;
  ids.uploadLink = version.body.data.links.upload;
  const parameter = await call(server, "POST", `/api/v2/policy-sets/${ids.policySetId}/parameters`, {
    body: { data: { type: "vars", attributes: { key: "region", value: "eu", category: "policy-set" } } },
  });
  ids.parameterId = parameter.body.data.id;
});
afterAll(() => server?.close());

/** The route's pattern with the ids of objects of organization acme. */
function pathOf(url: string): string {
  const values: Record<string, string> = {
    organization,
    policyId: ids.policyId as string,
    policySetId: ids.policySetId as string,
    versionId: ids.versionId as string,
    parameterId: ids.parameterId as string,
    namespace: organization,
    name: "vpc",
    provider: "aws",
    version: "1.0.0",
    id: url.includes("/projects/") ? "prj-platform00000001" : "ws-production0000001",
    workspaceId: "ws-production0000001",
    runId: "run-production00001",
    taskStageId: "ts-production00001",
    policyEvaluationId: "poleval-production00001s",
    tfPolicyEvaluationId: "tfpe-production00001",
  };
  return url.replace(/:([A-Za-z]+)/g, (_, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`the access table has no value for :${name} (${url}): add one`);
    return value;
  });
}

/** A body a writing route would accept from a token with the right: the refusal must not depend on its shape. */
function bodyOf(method: string, url: string): unknown {
  if (method === "GET" || (method === "DELETE" && !url.includes("/relationships/"))) return undefined;
  if (url.endsWith("/relationships/policies")) return { data: [{ type: "policies", id: ids.policyId }] };
  if (url.includes("/relationships/workspace")) return { data: [{ type: "workspaces", id: "ws-staging000000001" }] };
  if (url.includes("/relationships/project")) return { data: [{ type: "projects", id: "prj-platform00000001" }] };
  if (url.endsWith("/policies")) {
    return {
      data: { type: "policies", attributes: { name: "intruder", kind: "sentinel", "enforcement-level": "advisory" } },
    };
  }
  if (url.endsWith("/policy-sets")) return { data: { type: "policy-sets", attributes: { name: "intruder" } } };
  if (url.endsWith("/parameters")) {
    return { data: { type: "vars", attributes: { key: "intruder", value: "x", category: "policy-set" } } };
  }
  if (url.includes("/parameters/")) return { data: { type: "vars", attributes: { value: "intruded" } } };
  if (url.includes("/policy-sets/")) return { data: { type: "policy-sets", attributes: { description: "intruded" } } };
  if (url.includes("/policies/"))
    return { data: { type: "policies", attributes: { "enforcement-level": "advisory" } } };
  if (url.endsWith("/registry-modules")) {
    return {
      data: { type: "registry-modules", attributes: { name: "intruder", provider: "aws", "registry-name": "private" } },
    };
  }
  if (url.endsWith("/versions") && url.includes("registry-modules")) {
    return { data: { type: "registry-module-versions", attributes: { version: "9.9.9" } } };
  }
  if (url.includes("registry-modules")) {
    return { data: { type: "registry-module-versions", attributes: { deprecation: { reason: "intruded" } } } };
  }
  return {};
}

/** Routes that take no token by design, each with why. */
const publicRoutes: Record<string, string> = {
  "GET /api/openapi.json": "the API's own description",
  "GET /.well-known/terraform.json": "service discovery, as the service answers it",
  "POST /_local/vcs-push": "the local server's webhook, served to loopback only (below)",
  "GET /_local/enforcement": "the local server's view for tests, served to loopback only (below)",
  "GET /app/:organization/workspaces/:workspace/runs/:run":
    "a run's page, where a link of tfe-governance impact --html leads a browser (which carries no token), served to loopback only",
  "GET /policy-code/:policyId": "a signed link (below)",
  "PUT /policy-set-versions/:versionId/upload": "a signed link (below)",
};

/** What the server holds, as the manage token reads it; links (signed, so they change with time) left out. */
async function holdings(): Promise<string> {
  const reads = server.routes.filter(
    (route) =>
      route.origin === "api" &&
      route.method === "GET" &&
      route.url.startsWith("/api/") &&
      !route.url.endsWith("/download"),
  );
  const answers: string[] = [];
  for (const route of reads) {
    const answer = await call(server, "GET", pathOf(route.url));
    answers.push(
      `${route.url} ${answer.status} ${JSON.stringify(answer.body, (key, value) => (key === "links" ? undefined : value))}`,
    );
  }
  const enforcement = await fetch(`${server.url}/_local/enforcement?organization=${organization}`);
  answers.push(await enforcement.text());
  return answers.join("\n");
}

describe("the local server's access table", () => {
  it("refuses every route to a token without the right, of another organization, or none", async () => {
    const before = await holdings();
    const table: string[] = [];
    for (const route of server.routes) {
      const key = `${route.method} ${route.url}`;
      if (publicRoutes[key]) continue;
      expect(route.origin, `${key} is served without a token: add it to the table`).toBe("api");
      expect(route.url.startsWith("/api/"), `${key} takes no token: add it to the table with why`).toBe(true);
      const path = pathOf(route.url);
      const body = bodyOf(route.method, route.url);
      const writes = route.method !== "GET";
      const asked = async (auth: string | null) =>
        (await call(server, route.method, path, { auth, ...(body === undefined ? {} : { body }) })).status;
      const none = await asked(null);
      const other = await asked(otherToken);
      const reader = await asked(readOnlyToken);
      table.push(`${key}: none ${none}, other ${other}, reader ${reader}`);
      expect(none, `${key} without a token`).toBe(401);
      // /api/v2/ping names no organization: any valid token may ask whether the server is alive.
      if (route.url === "/api/v2/ping") continue;
      expect(other, `${key} with another organization's token`).toBe(404);
      if (writes) expect(reader, `${key} with a token that may manage nothing`).toBe(404);
      else expect(reader, `${key} with a token that may read`).toBeLessThan(400);
    }
    expect(table.length).toBeGreaterThan(35);
    expect(await holdings()).toBe(before);
  });

  it("gives the upload link of a pending version only to a token that may manage policies", async () => {
    const asReader = await call(server, "GET", `/api/v2/policy-set-versions/${ids.versionId}`, { auth: readOnlyToken });
    expect(asReader.status).toBe(200);
    expect(asReader.body.data.attributes.status).toBe("pending");
    expect(asReader.body.data.links).not.toHaveProperty("upload");
    const asManager = await call(server, "GET", `/api/v2/policy-set-versions/${ids.versionId}`);
    expect(asManager.body.data.links.upload).toMatch(/^http/);
  });

  it("serves signed links only with their signature", async () => {
    const unsigned = (link: string) => link.split("?")[0] as string;
    const upload = await fetch(unsigned(ids.uploadLink as string), { method: "PUT", body: "x" });
    expect(upload.status).toBe(403);
    const download = await call(server, "GET", `/api/v2/policies/${ids.policyId}/download`, { auth: readOnlyToken });
    expect(download.status).toBe(302);
    const code = await fetch(unsigned(download.headers.get("location") as string));
    expect(code.status).toBe(403);
    expect((await fetch(download.headers.get("location") as string)).status).toBe(200);
    // The forged upload made no version: it is still the pending one.
    const version = await call(server, "GET", `/api/v2/policy-set-versions/${ids.versionId}`);
    expect(version.body.data.attributes.status).toBe("pending");
  });

  it("takes a token and the rate limit on a route however its path is spelled", async () => {
    const encoded = await call(server, "GET", "/%61pi/v2/organizations/acme/policies", { auth: null });
    expect([401, 404]).toContain(encoded.status);
    const limited = await start({ rateLimit: 2 });
    try {
      const statuses: number[] = [];
      for (let index = 0; index < 6; index++) {
        statuses.push((await call(limited, "GET", "/%61pi/v2/organizations/acme/policies")).status);
      }
      expect(statuses.filter((status) => status === 200).length).toBeLessThanOrEqual(3);
    } finally {
      await limited.close();
    }
  });

  it("serves its own routes only under a name of this machine, whatever name resolved to it (DNS rebinding)", async () => {
    const { request } = await import("node:http");
    const statusFor = (host: string) =>
      new Promise<number>((done, fail) => {
        const url = new URL(`${server.url}/_local/enforcement?organization=${organization}`);
        request(
          { hostname: url.hostname, port: url.port, path: `${url.pathname}${url.search}`, headers: { host } },
          (answer) => {
            answer.resume();
            done(answer.statusCode ?? 0);
          },
        )
          .on("error", fail)
          .end();
      });
    expect(await statusFor("attacker.example:80")).toBe(403);
    expect(await statusFor(`localhost:${new URL(server.url).port}`)).toBe(200);
    expect(await statusFor(new URL(server.url).host)).toBe(200);
  });

  it("serves its own routes (/_local/) to loopback callers only", () => {
    for (const address of ["127.0.0.1", "127.8.9.10", "::1", "::ffff:127.0.0.1"]) {
      expect(isLoopbackAddress(address), address).toBe(true);
    }
    for (const address of ["10.0.0.5", "192.168.1.2", "::ffff:10.0.0.5", "fe80::1", "0.0.0.0", "::", undefined]) {
      expect(isLoopbackAddress(address), String(address)).toBe(false);
    }
  });
});
