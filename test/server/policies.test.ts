import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { RunningServer } from "../../src/server";
import {
  call,
  createPolicy,
  opaPolicySetId,
  organization,
  otherOrganization,
  otherToken,
  policyBody,
  policySetId,
  readOnlyToken,
  start,
} from "./helpers";

let server: RunningServer;
let nameCounter = 0;
const uniqueName = (prefix: string) => `${prefix}-${++nameCounter}`;
const policiesPath = `/api/v2/organizations/${organization}/policies`;

beforeAll(async () => {
  server = await start();
});
afterAll(() => server.close());
beforeEach(() => server.requestLog.clear());

describe("create (spec 4.1)", () => {
  it("answers 201 with the service's shape: no download link, null updated-at, empty enforce, no policy-sets", async () => {
    const name = uniqueName("baseline");
    const answer = await call(server, "POST", policiesPath, {
      body: policyBody(name, { description: "Tags", "enforcement-level": "soft-mandatory" }),
    });
    expect(answer.status).toBe(201);
    expect(answer.headers.get("content-type")).toContain("application/vnd.api+json");
    const data = answer.body.data;
    expect(data.id).toMatch(/^pol-[A-Za-z0-9]{16}$/);
    expect(data.attributes).toEqual({
      name,
      description: "Tags",
      kind: "sentinel",
      "enforcement-level": "soft-mandatory",
      enforce: [],
      "policy-set-count": 0,
      "updated-at": null,
    });
    expect(data.relationships).toEqual({ organization: { data: { id: organization, type: "organizations" } } });
    expect(data.links).toEqual({ self: `/api/v2/policies/${data.id}`, upload: `/api/v2/policies/${data.id}/upload` });
  });

  it("creates an opa policy with its query and a policy-set relationship", async () => {
    const answer = await call(server, "POST", policiesPath, {
      body: {
        data: {
          type: "policies",
          attributes: {
            name: uniqueName("opa"),
            kind: "opa",
            query: "data.terraform.deny",
            "enforcement-level": "mandatory",
          },
          relationships: { "policy-sets": { data: [{ id: opaPolicySetId, type: "policy-sets" }] } },
        },
      },
    });
    expect(answer.status).toBe(201);
    expect(answer.body.data.attributes).toMatchObject({
      kind: "opa",
      query: "data.terraform.deny",
      "policy-set-count": 1,
    });
    expect(answer.body.data.relationships["policy-sets"]).toEqual({
      data: [{ id: opaPolicySetId, type: "policy-sets" }],
    });
  });

  it.each([
    ["sentinel, path matches: the mode", "sentinel", "sentinel", "soft-mandatory", "soft-mandatory"],
    ["sentinel, other path: hard-mandatory", "sentinel", "elsewhere.sentinel", "advisory", "hard-mandatory"],
    ["opa, path matches: the mode", "opa", "rego", "mandatory", "mandatory"],
    ["opa, other path: advisory", "opa", "other.rego", "mandatory", "advisory"],
  ])("accepts the deprecated enforce array (%s)", async (_case, kind, path, mode, expected) => {
    const name = uniqueName("enforce");
    const enforcePath = path === "sentinel" || path === "rego" ? `${name}.${path}` : path;
    const attributes: Record<string, unknown> = { name, kind, enforce: [{ path: enforcePath, mode }] };
    if (kind === "opa") attributes.query = "data.x.deny";
    const answer = await call(server, "POST", policiesPath, { body: { data: { type: "policies", attributes } } });
    expect(answer.status).toBe(201);
    expect(answer.body.data.attributes["enforcement-level"]).toBe(expected);
  });

  it.each([
    [
      "a missing name",
      { data: { type: "policies", attributes: { "enforcement-level": "advisory" } } },
      "/data/attributes/name",
    ],
    ["a name with a space", policyBody("has space"), "/data/attributes/name"],
    [
      "a wrong type",
      { data: { type: "policy", attributes: { name: "x", "enforcement-level": "advisory" } } },
      "/data/type",
    ],
    ["a number for description", policyBody("x", { description: 5 }), "/data/attributes/description"],
    [
      "an opa level on sentinel",
      policyBody("x", { "enforcement-level": "mandatory" }),
      "/data/attributes/enforcement-level",
    ],
    ["a query on sentinel", policyBody("x", { query: "data.x" }), "/data/attributes/query"],
    ["opa without query", policyBody("x", { kind: "opa" }), "/data/attributes/query"],
    [
      "no level at all",
      { data: { type: "policies", attributes: { name: "x" } } },
      "/data/attributes/enforcement-level",
    ],
    ["an unknown attribute", policyBody("x", { colour: "red" }), "/data/attributes/colour"],
    [
      "an unknown policy set",
      {
        data: {
          ...policyBody("x").data,
          relationships: { "policy-sets": { data: [{ id: "polset-none", type: "policy-sets" }] } },
        },
      },
      "/data/relationships/policy-sets/data/0/id",
    ],
    ["no body", undefined, ""],
  ])("answers 422 naming the member for %s", async (_case, body, pointer) => {
    const answer = await call(server, "POST", policiesPath, { body });
    expect(answer.status).toBe(422);
    const error = answer.body.errors.find(
      (item: { source?: { pointer?: string } }) => item.source?.pointer === pointer,
    );
    expect(error, JSON.stringify(answer.body)).toMatchObject({ status: "422", title: "invalid attribute" });
    expect(error.detail.length).toBeGreaterThan(5);
  });

  it("counts a policy set named twice in the relationship once, instead of failing with a 500", async () => {
    const set = { id: policySetId, type: "policy-sets" };
    const answer = await call(server, "POST", policiesPath, {
      body: {
        data: { ...policyBody(uniqueName("twice")).data, relationships: { "policy-sets": { data: [set, set] } } },
      },
    });
    expect(answer.status).toBe(201);
    expect(answer.body.data.attributes["policy-set-count"]).toBe(1);
    expect(answer.body.data.relationships["policy-sets"]).toEqual({ data: [set] });
  });

  it("answers 422 'has already been taken' for a second policy of the same name", async () => {
    const name = uniqueName("twice");
    await createPolicy(server, name);
    const answer = await call(server, "POST", policiesPath, { body: policyBody(name) });
    expect(answer.status).toBe(422);
    expect(answer.body.errors[0]).toMatchObject({
      status: "422",
      source: { pointer: "/data/attributes/name" },
      detail: expect.stringContaining("has already been taken"),
    });
  });

  it("lets exactly one of 50 concurrent creates of one name succeed", async () => {
    const name = uniqueName("race");
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => call(server, "POST", policiesPath, { body: policyBody(name) })),
    );
    expect(answers.filter((answer) => answer.status === 201)).toHaveLength(1);
    expect(answers.filter((answer) => answer.status === 422)).toHaveLength(49);
    const listed = await call(server, "GET", `${policiesPath}?search%5Bname%5D=${name}`);
    expect(listed.body.data).toHaveLength(1);
  });

  it("answers 404 for an unknown organization, another organization, and a token without permission", async () => {
    for (const [path, auth] of [
      ["/api/v2/organizations/nowhere/policies", undefined],
      [`/api/v2/organizations/${otherOrganization}/policies`, undefined],
      [policiesPath, otherToken],
      [policiesPath, readOnlyToken],
    ] as const) {
      const answer = await call(server, "POST", path, { body: policyBody(uniqueName("denied")), auth });
      expect(answer.status, `${path} ${auth}`).toBe(404);
      expect(answer.body.errors[0]).toMatchObject({ status: "404", title: "not found" });
    }
    expect(server.requestLog.entries().every((entry) => entry.status === 404)).toBe(true);
  });
});

describe("show, update, delete (spec 4.2, 4.4, 4.10)", () => {
  it("shows a policy, with include=policy_sets adding the sets to included", async () => {
    const created = await call(server, "POST", policiesPath, {
      body: {
        data: {
          ...policyBody(uniqueName("shown")).data,
          relationships: { "policy-sets": { data: [{ id: policySetId, type: "policy-sets" }] } },
        },
      },
    });
    const id = created.body.data.id;
    const shown = await call(server, "GET", `/api/v2/policies/${id}?include=policy_sets`);
    expect(shown.status).toBe(200);
    expect(shown.body.data).toEqual(created.body.data);
    expect(shown.body.included).toEqual([{ id: policySetId, type: "policy-sets", attributes: { name: "baseline" } }]);
    expect((await call(server, "GET", `/api/v2/policies/${id}?include=workspaces`)).status).toBe(400);
  });

  it("shows the same policy to a read-only token of its organization but 404 to another organization", async () => {
    const policy = await createPolicy(server, uniqueName("visible"));
    expect((await call(server, "GET", `/api/v2/policies/${policy.id}`, { auth: readOnlyToken })).status).toBe(200);
    const hidden = await call(server, "GET", `/api/v2/policies/${policy.id}`, { auth: otherToken });
    const missing = await call(server, "GET", "/api/v2/policies/pol-doesnotexist0000");
    expect(hidden.status).toBe(404);
    expect(hidden.body).toEqual(missing.body);
  });

  it("accepts a PATCH that names the policy in data.id, as JSON:API clients send it", async () => {
    const policy = await createPolicy(server, uniqueName("with-id"));
    const answer = await call(server, "PATCH", `/api/v2/policies/${policy.id}`, {
      body: { data: { type: "policies", id: policy.id, attributes: { "enforcement-level": "hard-mandatory" } } },
    });
    expect(answer.status).toBe(200);
    expect(answer.body.data.attributes["enforcement-level"]).toBe("hard-mandatory");
  });

  it("updates the level, description and query; the deprecated enforce array sets the level", async () => {
    const policy = await createPolicy(server, uniqueName("updated"), { description: "old" });
    const level = await call(server, "PATCH", `/api/v2/policies/${policy.id}`, {
      body: { data: { type: "policies", attributes: { "enforcement-level": "hard-mandatory" } } },
    });
    expect(level.status).toBe(200);
    expect(level.body.data.attributes).toMatchObject({ "enforcement-level": "hard-mandatory", description: "old" });
    const cleared = await call(server, "PATCH", `/api/v2/policies/${policy.id}`, {
      body: { data: { type: "policies", attributes: { description: null } } },
    });
    expect(cleared.body.data.attributes).toMatchObject({ description: null, "enforcement-level": "hard-mandatory" });
    const viaEnforce = await call(server, "PATCH", `/api/v2/policies/${policy.id}`, {
      body: {
        data: {
          type: "policies",
          attributes: { enforce: [{ path: `${policy.attributes.name}.sentinel`, mode: "soft-mandatory" }] },
        },
      },
    });
    expect(viaEnforce.body.data.attributes["enforcement-level"]).toBe("soft-mandatory");

    const opa = await createPolicy(server, uniqueName("opa-updated"), {
      kind: "opa",
      query: "data.a.deny",
      "enforcement-level": "mandatory",
    });
    const query = await call(server, "PATCH", `/api/v2/policies/${opa.id}`, {
      body: { data: { type: "policies", attributes: { query: "data.b.deny" } } },
    });
    expect(query.body.data.attributes).toMatchObject({ query: "data.b.deny", "enforcement-level": "mandatory" });
  });

  it.each([
    ["a level of the other kind", { "enforcement-level": "mandatory" }, "/data/attributes/enforcement-level"],
    ["a query on sentinel", { query: "data.x" }, "/data/attributes/query"],
    ["a new name", { name: "renamed" }, "/data/attributes/name"],
    ["a wrong type", { "enforcement-level": 3 }, "/data/attributes/enforcement-level"],
  ])("answers 422 on update with %s", async (_case, attributes, pointer) => {
    const policy = await createPolicy(server, uniqueName("bad-update"));
    const answer = await call(server, "PATCH", `/api/v2/policies/${policy.id}`, {
      body: { data: { type: "policies", attributes } },
    });
    expect(answer.status).toBe(422);
    expect(answer.body.errors.map((error: { source: { pointer: string } }) => error.source.pointer)).toContain(pointer);
    const unchanged = await call(server, "GET", `/api/v2/policies/${policy.id}`);
    expect(unchanged.body.data.attributes["enforcement-level"]).toBe("advisory");
  });

  it("answers 404 on update of a missing policy or by a token without permission", async () => {
    const policy = await createPolicy(server, uniqueName("locked"));
    const body = { data: { type: "policies", attributes: { "enforcement-level": "hard-mandatory" } } };
    expect((await call(server, "PATCH", "/api/v2/policies/pol-doesnotexist0000", { body })).status).toBe(404);
    expect((await call(server, "PATCH", `/api/v2/policies/${policy.id}`, { body, auth: readOnlyToken })).status).toBe(
      404,
    );
    expect((await call(server, "PATCH", `/api/v2/policies/${policy.id}`, { body, auth: otherToken })).status).toBe(404);
  });

  it("deletes with the JSON:API Content-Type and no body, as go-tfe and the Terraform provider send it", async () => {
    const policy = await createPolicy(server, uniqueName("go-tfe-delete"));
    for (const contentType of ["application/vnd.api+json", "application/json"]) {
      const answer = await call(server, "DELETE", `/api/v2/policies/${policy.id}`, { raw: "", contentType });
      expect(answer.status, contentType).toBe(contentType === "application/vnd.api+json" ? 204 : 404);
    }
    const empty = await call(server, "POST", policiesPath, { raw: "", contentType: "application/vnd.api+json" });
    expect(empty.status).toBe(422);
    expect(empty.body.errors[0]).toMatchObject({ status: "422", source: { pointer: "" } });
  });

  it("deletes with 204, then answers 404 to show and to a second delete", async () => {
    const policy = await createPolicy(server, uniqueName("deleted"));
    expect((await call(server, "DELETE", `/api/v2/policies/${policy.id}`, { auth: otherToken })).status).toBe(404);
    expect((await call(server, "DELETE", `/api/v2/policies/${policy.id}`, { auth: readOnlyToken })).status).toBe(404);
    const deleted = await call(server, "DELETE", `/api/v2/policies/${policy.id}`);
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe("");
    expect((await call(server, "GET", `/api/v2/policies/${policy.id}`)).status).toBe(404);
    expect((await call(server, "DELETE", `/api/v2/policies/${policy.id}`)).status).toBe(404);
  });
});

describe("list (spec 4.9)", () => {
  let listServer: RunningServer;
  const listPath = `/api/v2/organizations/${organization}/policies`;

  beforeAll(async () => {
    listServer = await start();
    for (let index = 1; index <= 45; index++) {
      const name = `list-${String(index).padStart(2, "0")}`;
      const opa = index % 5 === 0;
      await createPolicy(
        listServer,
        name,
        opa ? { kind: "opa", query: "data.x.deny", "enforcement-level": "mandatory" } : {},
      );
    }
  });
  afterAll(() => listServer.close());

  it("pages by 20 by default with meta.pagination and links", async () => {
    const first = await call(listServer, "GET", listPath);
    expect(first.status).toBe(200);
    expect(first.body.data).toHaveLength(20);
    expect(first.body.meta.pagination).toEqual({
      "current-page": 1,
      "page-size": 20,
      "prev-page": null,
      "next-page": 2,
      "total-pages": 3,
      "total-count": 45,
    });
    expect(first.body.links.prev).toBeNull();
    expect(new URL(first.body.links.next).searchParams.get("page[number]")).toBe("2");
    expect(new URL(first.body.links.last).searchParams.get("page[number]")).toBe("3");
    const last = await call(listServer, "GET", `${listPath}?page%5Bnumber%5D=3`);
    expect(last.body.data).toHaveLength(5);
    expect(last.body.meta.pagination).toMatchObject({ "current-page": 3, "prev-page": 2, "next-page": null });
    expect(last.body.links.next).toBeNull();
  });

  it("caps page[size] at 100 and answers a page past the end with 200 and no data", async () => {
    const big = await call(listServer, "GET", `${listPath}?page%5Bsize%5D=500`);
    expect(big.body.data).toHaveLength(45);
    expect(big.body.meta.pagination["page-size"]).toBe(100);
    const past = await call(listServer, "GET", `${listPath}?page%5Bnumber%5D=9`);
    expect(past.status).toBe(200);
    expect(past.body.data).toEqual([]);
    expect(past.body.meta.pagination["total-count"]).toBe(45);
    // Out of range, as the service's pagination (Kaminari) answers it: no page before it to follow either.
    expect(past.body.meta.pagination).toMatchObject({ "prev-page": null, "next-page": null });
    expect(past.body.links.prev).toBeNull();
  });

  it("narrows data and total-count with search[name] and filter[kind]", async () => {
    const searched = await call(listServer, "GET", `${listPath}?search%5Bname%5D=list-1`);
    expect(searched.body.data.map((policy: { attributes: { name: string } }) => policy.attributes.name)).toEqual(
      Array.from({ length: 10 }, (_, index) => `list-1${index}`),
    );
    expect(searched.body.meta.pagination["total-count"]).toBe(10);
    const opa = await call(listServer, "GET", `${listPath}?filter%5Bkind%5D=opa`);
    expect(opa.body.meta.pagination["total-count"]).toBe(9);
    expect(opa.body.data.every((policy: { attributes: { kind: string } }) => policy.attributes.kind === "opa")).toBe(
      true,
    );
  });

  it("sorts by name either way and by updated-at", async () => {
    const names = (answer: { body: { data: { attributes: { name: string } }[] } }) =>
      answer.body.data.map((policy) => policy.attributes.name);
    const descending = await call(listServer, "GET", `${listPath}?sort=-name&page%5Bsize%5D=3`);
    expect(names(descending)).toEqual(["list-45", "list-44", "list-43"]);
    const ascending = await call(listServer, "GET", `${listPath}?sort=name&page%5Bsize%5D=2`);
    expect(names(ascending)).toEqual(["list-01", "list-02"]);
    const policies = (await call(listServer, "GET", `${listPath}?search%5Bname%5D=list-07`)).body.data;
    await call(listServer, "PUT", `/api/v2/policies/${policies[0].id}/upload`, { raw: "main = rule { true }" });
    const recent = await call(listServer, "GET", `${listPath}?sort=-updated-at&page%5Bsize%5D=1`);
    expect(names(recent)).toEqual(["list-07"]);
  });

  it("adds included policy sets with include=policy_sets", async () => {
    await call(listServer, "POST", listPath, {
      body: {
        data: {
          ...policyBody("zz-in-set").data,
          relationships: { "policy-sets": { data: [{ id: policySetId, type: "policy-sets" }] } },
        },
      },
    });
    const answer = await call(listServer, "GET", `${listPath}?search%5Bname%5D=zz-in-set&include=policy_sets`);
    expect(answer.body.included).toEqual([{ id: policySetId, type: "policy-sets", attributes: { name: "baseline" } }]);
    expect((await call(listServer, "GET", `${listPath}?search%5Bname%5D=zz-in-set`)).body.included).toBeUndefined();
  });

  it.each([
    ["page[number]=0", "page%5Bnumber%5D=0", "page[number]"],
    ["page[size]=abc", "page%5Bsize%5D=abc", "page[size]"],
    ["filter[kind]=rego", "filter%5Bkind%5D=rego", "filter[kind]"],
    ["sort=created", "sort=created", "sort"],
  ])("answers 400 naming the parameter for %s", async (_case, query, parameter) => {
    const answer = await call(listServer, "GET", `${listPath}?${query}`);
    expect(answer.status).toBe(400);
    expect(answer.body.errors[0]).toMatchObject({ status: "400", source: { parameter } });
  });

  it("answers 404 for an unknown organization or another organization's token", async () => {
    expect((await call(listServer, "GET", "/api/v2/organizations/nowhere/policies")).status).toBe(404);
    expect((await call(listServer, "GET", listPath, { auth: otherToken })).status).toBe(404);
  });
});
