import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningServer } from "../../src/server";
import { call, createPolicy, organization, otherToken, readOnlyToken, start } from "./helpers";

let server: RunningServer;

beforeAll(async () => {
  server = await start();
});
afterAll(() => server.close());

const setsPath = `/api/v2/organizations/${organization}/policy-sets`;
const production = "ws-production0000001";
const staging = "ws-staging000000001";
const platform = "prj-platform00000001";

function setBody(name: string, attributes: Record<string, unknown> = {}, relationships?: Record<string, unknown>) {
  return {
    data: { type: "policy-sets", attributes: { name, ...attributes }, ...(relationships ? { relationships } : {}) },
  };
}
const identifiers = (type: string, ...ids: string[]) => ({ data: ids.map((id) => ({ type, id })) });

async function createSet(
  name: string,
  attributes: Record<string, unknown> = {},
  relationships?: Record<string, unknown>,
) {
  const answer = await call(server, "POST", setsPath, { body: setBody(name, attributes, relationships) });
  if (answer.status !== 201) throw new Error(`create ${name}: ${answer.status} ${answer.text}`);
  return answer.body.data;
}

describe("policy sets: create, show, list, update, delete", () => {
  it("creates a set with the service's defaults, shows it, and lists it by search and kind", async () => {
    const created = await createSet("defaults");
    expect(created.id).toMatch(/^polset-[A-Za-z0-9]{16}$/);
    expect(created.attributes).toMatchObject({
      name: "defaults",
      description: null,
      kind: "sentinel",
      global: false,
      overridable: null,
      "agent-enabled": false,
      "policy-tool-version": "latest",
      versioned: false,
      "policy-count": 0,
    });
    expect(created.relationships["current-version"].data).toBeNull();
    const opa = await createSet("defaults-opa", { kind: "opa" });
    expect(opa.attributes).toMatchObject({ kind: "opa", overridable: false, "agent-enabled": true });

    const shown = await call(server, "GET", `/api/v2/policy-sets/${created.id}`);
    expect(shown.body.data).toEqual(created);
    const listed = await call(server, "GET", `${setsPath}?search[name]=defaults&filter[kind]=opa`);
    expect(listed.body.data.map((set: { id: string }) => set.id)).toEqual([opa.id]);
    expect(listed.body.meta.pagination["total-count"]).toBe(1);
  });

  it("scopes a set to workspaces, projects and exclusions, and includes them on request", async () => {
    const policy = await createPolicy(server, "scoped-member");
    const created = await createSet(
      "scoped",
      { description: "tagging rules" },
      {
        policies: identifiers("policies", policy.id),
        workspaces: identifiers("workspaces", production),
        projects: identifiers("projects", platform),
        "workspace-exclusions": identifiers("workspaces", staging),
      },
    );
    expect(created.attributes).toMatchObject({ "policy-count": 1, "workspace-count": 1, "project-count": 1 });
    const shown = await call(
      server,
      "GET",
      `/api/v2/policy-sets/${created.id}?include=workspaces,policies,workspace_exclusions`,
    );
    expect(shown.body.data.relationships.workspaces.data).toEqual([{ id: production, type: "workspaces" }]);
    expect(shown.body.data.relationships["workspace-exclusions"].data).toEqual([{ id: staging, type: "workspaces" }]);
    const included = shown.body.included.map((item: { type: string; id: string }) => `${item.type}/${item.id}`);
    expect(included.sort()).toEqual([`policies/${policy.id}`, `workspaces/${production}`, `workspaces/${staging}`]);
    const unknownInclude = await call(server, "GET", `/api/v2/policy-sets/${created.id}?include=workspace`);
    expect(unknownInclude.status).toBe(400);
  });

  it("changes scope through relationships: POST adds, DELETE removes, repeats change nothing", async () => {
    const created = await createSet("rescoped");
    const path = (relationship: string) => `/api/v2/policy-sets/${created.id}/relationships/${relationship}`;
    for (const [relationship, type, id] of [
      ["workspaces", "workspaces", production],
      ["projects", "projects", platform],
      ["project-exclusions", "projects", platform],
    ]) {
      expect(
        (await call(server, "POST", path(relationship as string), { body: identifiers(type as string, id as string) }))
          .status,
      ).toBe(204);
      expect(
        (await call(server, "POST", path(relationship as string), { body: identifiers(type as string, id as string) }))
          .status,
      ).toBe(204);
    }
    let shown = (await call(server, "GET", `/api/v2/policy-sets/${created.id}`)).body.data;
    expect(shown.attributes["workspace-count"]).toBe(1);
    expect(shown.relationships["project-exclusions"].data).toEqual([{ id: platform, type: "projects" }]);
    expect(
      (await call(server, "DELETE", path("workspaces"), { body: identifiers("workspaces", production) })).status,
    ).toBe(204);
    shown = (await call(server, "GET", `/api/v2/policy-sets/${created.id}`)).body.data;
    expect(shown.relationships.workspaces.data).toEqual([]);
    const foreign = await call(server, "POST", path("workspaces"), {
      body: identifiers("workspaces", "ws-globex0000000001"),
    });
    expect(foreign.status).toBe(422);
    expect(foreign.body.errors[0].source.pointer).toBe("/data/0/id");
  });

  it("refuses with 422 naming the attribute: a taken name, workspaces on a global set, overridable on a plain Sentinel set, a policy of the other kind", async () => {
    await createSet("taken");
    const taken = await call(server, "POST", setsPath, { body: setBody("taken") });
    expect(taken.status).toBe(422);
    expect(taken.body.errors[0].source.pointer).toBe("/data/attributes/name");

    const global = await call(server, "POST", setsPath, {
      body: setBody("global-with-workspaces", { global: true }, { workspaces: identifiers("workspaces", production) }),
    });
    expect(global.status).toBe(422);
    expect(global.body.errors[0].source.pointer).toBe("/data/relationships/workspaces");

    const overridable = await call(server, "POST", setsPath, { body: setBody("overridable", { overridable: true }) });
    expect(overridable.status).toBe(422);
    expect(overridable.body.errors[0].source.pointer).toBe("/data/attributes/overridable");

    const sentinelPolicy = await createPolicy(server, "sentinel-only");
    const mixed = await call(server, "POST", setsPath, {
      body: setBody("mixed", { kind: "opa" }, { policies: identifiers("policies", sentinelPolicy.id) }),
    });
    expect(mixed.status).toBe(422);
    expect(mixed.body.errors[0].source.pointer).toBe("/data/relationships/policies/data/0/id");

    const badName = await call(server, "POST", setsPath, { body: setBody("has space") });
    expect(badName.status).toBe(422);
    const listed = await call(server, "GET", `${setsPath}?search[name]=mixed`);
    expect(listed.body.data).toEqual([]);
  });

  it("updates only what the PATCH names, turns a set global (dropping its workspaces), and refuses a kind change", async () => {
    const created = await createSet(
      "patched",
      { description: "before", kind: "opa" },
      {
        workspaces: identifiers("workspaces", production),
      },
    );
    const patched = await call(server, "PATCH", `/api/v2/policy-sets/${created.id}`, {
      body: { data: { type: "policy-sets", attributes: { global: true, overridable: true } } },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.data.attributes).toMatchObject({ description: "before", global: true, overridable: true });
    expect(patched.body.data.relationships.workspaces).toBeUndefined();
    const kindChange = await call(server, "PATCH", `/api/v2/policy-sets/${created.id}`, {
      body: { data: { type: "policy-sets", attributes: { kind: "sentinel" } } },
    });
    expect(kindChange.status).toBe(422);
    expect(kindChange.body.errors[0].source.pointer).toBe("/data/attributes/kind");
  });

  it("deletes a set: 204, then 404; its policies stay, out of the set", async () => {
    const policy = await createPolicy(server, "outlives-its-set");
    const created = await createSet("deleted", {}, { policies: identifiers("policies", policy.id) });
    expect((await call(server, "DELETE", `/api/v2/policy-sets/${created.id}`)).status).toBe(204);
    expect((await call(server, "DELETE", `/api/v2/policy-sets/${created.id}`)).status).toBe(404);
    const kept = await call(server, "GET", `/api/v2/policies/${policy.id}`);
    expect(kept.body.data.attributes["policy-set-count"]).toBe(0);
  });

  it("answers 404 to tokens of another organization, and to a reader that tries to change a set", async () => {
    const created = await createSet("private");
    expect((await call(server, "GET", `/api/v2/policy-sets/${created.id}`, { auth: otherToken })).status).toBe(404);
    expect((await call(server, "GET", `/api/v2/policy-sets/${created.id}`, { auth: readOnlyToken })).status).toBe(200);
    expect((await call(server, "DELETE", `/api/v2/policy-sets/${created.id}`, { auth: readOnlyToken })).status).toBe(
      404,
    );
  });
});

describe("policy set parameters", () => {
  it("creates, lists, reads, updates and deletes parameters; a sensitive value reads back empty", async () => {
    const created = await createSet("with-parameters");
    const path = `/api/v2/policy-sets/${created.id}/parameters`;
    const plain = await call(server, "POST", path, {
      body: { data: { type: "vars", attributes: { key: "limit", value: "5", category: "policy-set" } } },
    });
    expect(plain.status).toBe(201);
    expect(plain.body.data.attributes).toEqual({ key: "limit", value: "5", category: "policy-set", sensitive: false });
    const secret = await call(server, "POST", path, {
      body: {
        data: {
          type: "vars",
          attributes: { key: "api_key", value: "s3cr3t", category: "policy-set", sensitive: true },
        },
      },
    });
    expect(secret.body.data.attributes.value).toBe("");
    const listed = await call(server, "GET", path);
    expect(listed.text).not.toContain("s3cr3t");
    expect(listed.body.data.map((item: { attributes: { key: string } }) => item.attributes.key)).toEqual([
      "limit",
      "api_key",
    ]);

    const duplicate = await call(server, "POST", path, {
      body: { data: { type: "vars", attributes: { key: "limit", category: "policy-set" } } },
    });
    expect(duplicate.status).toBe(422);
    expect(duplicate.body.errors[0].source.pointer).toBe("/data/attributes/key");

    const updated = await call(server, "PATCH", `${path}/${plain.body.data.id}`, {
      body: { data: { type: "vars", attributes: { value: "7" } } },
    });
    expect(updated.body.data.attributes).toMatchObject({ key: "limit", value: "7" });
    const unsensitive = await call(server, "PATCH", `${path}/${secret.body.data.id}`, {
      body: { data: { type: "vars", attributes: { sensitive: false } } },
    });
    expect(unsensitive.status).toBe(422);
    expect((await call(server, "DELETE", `${path}/${plain.body.data.id}`)).status).toBe(204);
    expect((await call(server, "GET", `${path}/${plain.body.data.id}`)).status).toBe(404);
  });

  it("refuses parameters on an OPA set", async () => {
    const created = await createSet("opa-no-parameters", { kind: "opa" });
    const answer = await call(server, "POST", `/api/v2/policy-sets/${created.id}/parameters`, {
      body: { data: { type: "vars", attributes: { key: "limit", category: "policy-set" } } },
    });
    expect(answer.status).toBe(422);
  });
});
