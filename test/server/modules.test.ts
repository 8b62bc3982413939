import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningServer } from "../../src/server";
import { call, organization, otherOrganization, otherToken, readOnlyToken, start, token } from "./helpers";

let server: RunningServer;
const versionPath = (version: string, org = organization, name = "vpc") =>
  `/api/v2/organizations/${org}/registry-modules/private/${org}/${name}/aws/${version}`;
const deprecateBody = (reason: string, link?: string) => ({
  data: {
    type: "module-versions",
    attributes: { deprecation: { "deprecated-status": "Deprecated", reason, ...(link ? { link } : {}) } },
  },
});
const undeprecateBody = {
  data: { type: "module-versions", attributes: { deprecation: { "deprecated-status": "Undeprecated" } } },
};

beforeAll(async () => {
  server = await start();
});
afterAll(() => server.close());

describe("deprecate and reinstate (spec 4.5, 4.6)", () => {
  it("deprecates with the service's document and appended reason, and the registry reads show it", async () => {
    const answer = await call(server, "PATCH", versionPath("1.0.0"), {
      body: deprecateBody("Use 1.1.0.", "https://example.com/vpc"),
    });
    expect(answer.status).toBe(200);
    const { data, included } = answer.body;
    expect(Object.keys(data).sort()).toEqual(["id", "relationships", "type"]);
    expect(data.id).toMatch(/^\d+$/);
    expect(data.type).toBe("module-versions");
    const deprecationId = data.relationships.deprecation.data.id;
    expect(deprecationId).toMatch(/^\d+$/);
    expect(included).toEqual([
      {
        id: deprecationId,
        type: "deprecations",
        attributes: { link: "https://example.com/vpc", reason: "Use 1.1.0. Applies will be blocked in 15 days." },
      },
    ]);

    const single = await call(server, "GET", `/api/registry/v1/modules/${organization}/vpc/aws/1.0.0`);
    expect(single.status).toBe(200);
    expect(single.headers.get("content-type")).toContain("application/json");
    expect(single.body).toMatchObject({
      id: `${organization}/vpc/aws/1.0.0`,
      namespace: organization,
      name: "vpc",
      provider: "aws",
      version: "1.0.0",
      deprecation: { reason: "Use 1.1.0. Applies will be blocked in 15 days.", link: "https://example.com/vpc" },
    });
    const all = await call(server, "GET", `/api/registry/v1/modules/${organization}/vpc/aws/versions`);
    expect(all.body.modules[0].source).toBe(`${organization}/vpc/aws`);
    expect(
      all.body.modules[0].versions.map((entry: { version: string; deprecation: unknown }) => [
        entry.version,
        entry.deprecation,
      ]),
    ).toEqual([
      ["1.0.0", { reason: "Use 1.1.0. Applies will be blocked in 15 days.", link: "https://example.com/vpc" }],
      ["1.1.0", null],
    ]);

    const reverted = await call(server, "PATCH", versionPath("1.0.0"), { body: undeprecateBody });
    expect(reverted.status).toBe(200);
    expect(reverted.body).toEqual({ data: { type: "module-versions", id: data.id } });
    const after = await call(server, "GET", `/api/registry/v1/modules/${organization}/vpc/aws/1.0.0`);
    expect(after.body.deprecation).toBeNull();
  });

  it.each([
    ["an unknown version", versionPath("9.9.9"), token],
    ["an unknown module", versionPath("1.0.0", organization, "nope"), token],
    ["another organization's token", versionPath("1.0.0"), otherToken],
    ["a token without module permission", versionPath("1.0.0"), readOnlyToken],
    ["an organization without Plus", versionPath("1.0.0", otherOrganization), otherToken],
    [
      "paths whose two organizations differ",
      `/api/v2/organizations/${organization}/registry-modules/private/${otherOrganization}/vpc/aws/1.0.0`,
      token,
    ],
  ])("answers 404 for %s", async (_case, path, auth) => {
    for (const body of [deprecateBody("Old."), undeprecateBody]) {
      const answer = await call(server, "PATCH", path, { body, auth });
      expect(answer.status).toBe(404);
      expect(answer.body.errors[0]).toMatchObject({ status: "404", title: "not found" });
    }
  });

  it.each([
    [
      "no reason",
      { data: { type: "module-versions", attributes: { deprecation: { "deprecated-status": "Deprecated" } } } },
      "/data/attributes/deprecation/reason",
    ],
    [
      "an unknown status",
      { data: { type: "module-versions", attributes: { deprecation: { "deprecated-status": "Gone" } } } },
      "/data/attributes/deprecation/deprecated-status",
    ],
    [
      "a wrong type",
      { data: { type: "modules", attributes: { deprecation: { "deprecated-status": "Undeprecated" } } } },
      "/data/type",
    ],
    ["a number as reason", deprecateBody(7 as unknown as string), "/data/attributes/deprecation/reason"],
  ])("answers 422 for %s", async (_case, body, pointer) => {
    const answer = await call(server, "PATCH", versionPath("1.1.0"), { body });
    expect(answer.status).toBe(422);
    expect(answer.body.errors.map((error: { source: { pointer: string } }) => error.source.pointer)).toContain(pointer);
  });

  it("answers 500 or 503 on a failure while deprecating, without deprecating", async () => {
    server.setFaults([
      {
        route: "PATCH /api/v2/organizations/:organization/registry-modules/private/:namespace/:name/:provider/:version",
        status: 503,
        times: 1,
      },
    ]);
    try {
      const failed = await call(server, "PATCH", versionPath("1.1.0"), { body: deprecateBody("Broken.") });
      expect(failed.status).toBe(503);
      expect(failed.body.errors[0].status).toBe("503");
      const read = await call(server, "GET", `/api/registry/v1/modules/${organization}/vpc/aws/1.1.0`);
      expect(read.body.deprecation).toBeNull();
      expect((await call(server, "PATCH", versionPath("1.1.0"), { body: deprecateBody("Broken.") })).status).toBe(200);
    } finally {
      server.setFaults([]);
    }
  });
});

describe("registry reads (spec 4.7, 4.8)", () => {
  it('answer {errors: ["Not Found"]} for missing versions and modules and for another organization', async () => {
    for (const [path, auth] of [
      [`/api/registry/v1/modules/${organization}/vpc/aws/7.0.0`, token],
      [`/api/registry/v1/modules/${organization}/none/aws/versions`, token],
      [`/api/registry/v1/modules/${organization}/vpc/aws/1.0.0`, otherToken],
      [`/api/registry/v1/modules/${otherOrganization}/vpc/aws/versions`, token],
    ] as const) {
      const answer = await call(server, "GET", path, { auth });
      expect(answer.status, path).toBe(404);
      expect(answer.body).toEqual({ errors: ["Not Found"] });
    }
    const anonymous = await call(server, "GET", `/api/registry/v1/modules/${organization}/vpc/aws/1.0.0`, {
      auth: null,
    });
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toEqual({ errors: ["Unauthorized"] });
  });
});

describe("creating modules and versions over HTTP", () => {
  it("creates a module, adds versions, and refuses duplicates and bad versions", async () => {
    const created = await call(server, "POST", `/api/v2/organizations/${organization}/registry-modules`, {
      body: {
        data: { type: "registry-modules", attributes: { name: "eks", provider: "aws", "registry-name": "private" } },
      },
    });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({
      type: "registry-modules",
      attributes: { name: "eks", namespace: organization },
    });
    const versions = `/api/v2/organizations/${organization}/registry-modules/private/${organization}/eks/aws/versions`;
    const version = await call(server, "POST", versions, {
      body: { data: { type: "registry-module-versions", attributes: { version: "2.0.0" } } },
    });
    expect(version.status).toBe(201);
    expect(version.body.data.attributes.version).toBe("2.0.0");
    const duplicate = await call(server, "POST", versions, {
      body: { data: { type: "registry-module-versions", attributes: { version: "2.0.0" } } },
    });
    expect(duplicate.status).toBe(422);
    const bad = await call(server, "POST", versions, {
      body: { data: { type: "registry-module-versions", attributes: { version: "two" } } },
    });
    expect(bad.body.errors[0].source.pointer).toBe("/data/attributes/version");
    const again = await call(server, "POST", `/api/v2/organizations/${organization}/registry-modules`, {
      body: {
        data: { type: "registry-modules", attributes: { name: "eks", provider: "aws", "registry-name": "private" } },
      },
    });
    expect(again.status).toBe(422);
    const read = await call(server, "GET", `/api/registry/v1/modules/${organization}/eks/aws/2.0.0`);
    expect(read.body).toMatchObject({ version: "2.0.0", deprecation: null });
    const denied = await call(server, "POST", `/api/v2/organizations/${organization}/registry-modules`, {
      auth: readOnlyToken,
      body: { data: { type: "registry-modules", attributes: { name: "rds", provider: "aws" } } },
    });
    expect(denied.status).toBe(404);
  });
});
