import { describe, expect, it } from "vitest";
import { TfeApiError } from "../../src/client/index";
import {
  empty,
  json,
  policyResource,
  type Reply,
  rejection,
  sequence,
  showPolicy,
  startFaultServer,
  testClient,
  text,
  token,
} from "./helpers";

/** An organization of `total` policies served page by page the way the service paginates. */
function paginatedPolicies(total: number): Reply {
  return (request, response) => {
    const query = new URL(request.url, "http://local").searchParams;
    const size = Number(query.get("page[size]") ?? 20);
    const number = Number(query.get("page[number]") ?? 1);
    const pages = Math.max(1, Math.ceil(total / size));
    const ids = Array.from({ length: total }, (_, index) => `pol-${index + 1}`).slice(
      (number - 1) * size,
      number * size,
    );
    json(200, {
      data: ids.map((id) => policyResource(id)),
      links: { self: request.url, first: "", prev: null, next: null, last: "" },
      meta: {
        pagination: {
          "current-page": number,
          "page-size": size,
          "prev-page": number > 1 ? number - 1 : null,
          "next-page": number < pages ? number + 1 : null,
          "total-pages": pages,
          "total-count": total,
        },
      },
    })(request, response, 0);
  };
}

describe("policies", () => {
  it("create sends the JSON:API document with the token and accepts 201 with the create response's shape", async () => {
    // The create response of the real service: 201, no download link, no kind, no policy-sets, nulls, enforce [].
    const created = policyResource(
      "pol-new",
      { name: "restrict", kind: undefined, description: null, "updated-at": null, enforce: [], "policy-set-count": 0 },
      {
        relationships: { organization: { data: { id: "acme", type: "organizations" } } },
        links: { self: "/api/v2/policies/pol-new", upload: "/api/v2/policies/pol-new/upload" },
      },
    );
    const server = await startFaultServer(json(201, { data: created }));
    const policy = await testClient(server.url).policies.create("acme", {
      name: "restrict",
      enforcementLevel: "hard-mandatory",
      policySetIds: ["polset-1"],
    });

    const [request] = server.requests;
    expect(request).toMatchObject({ method: "POST", url: "/api/v2/organizations/acme/policies" });
    expect(request!.headers).toMatchObject({
      authorization: `Bearer ${token}`,
      "content-type": "application/vnd.api+json",
      accept: "application/vnd.api+json",
    });
    expect(request!.headers["user-agent"]).toMatch(/^pulumi-tfe-governance\/\d/);
    expect(JSON.parse(request!.body.toString())).toEqual({
      data: {
        type: "policies",
        attributes: { name: "restrict", "enforcement-level": "hard-mandatory" },
        relationships: { "policy-sets": { data: [{ id: "polset-1", type: "policy-sets" }] } },
      },
    });
    expect(policy).toEqual({
      id: "pol-new",
      name: "restrict",
      description: null,
      kind: "sentinel",
      query: null,
      enforcementLevel: "soft-mandatory",
      enforce: [],
      policySetCount: 0,
      updatedAt: null,
      organization: "acme",
      policySetIds: undefined,
      hasCode: false,
    });
  });

  it("create sends kind and query of an OPA policy", async () => {
    const server = await startFaultServer(
      json(200, { data: policyResource("pol-opa", { kind: "opa", query: "data.terraform.deny" }) }),
    );
    const policy = await testClient(server.url).policies.create("acme", {
      name: "deny",
      kind: "opa",
      query: "data.terraform.deny",
      enforcementLevel: "mandatory",
      description: "Denies public buckets",
    });
    expect(JSON.parse(server.requests[0]!.body.toString()).data.attributes).toEqual({
      name: "deny",
      kind: "opa",
      query: "data.terraform.deny",
      "enforcement-level": "mandatory",
      description: "Denies public buckets",
    });
    expect(policy).toMatchObject({ kind: "opa", query: "data.terraform.deny" });
  });

  it("read asks for policy sets when told to and maps the show document", async () => {
    const server = await startFaultServer(showPolicy("pol-7"));
    const policy = await testClient(server.url).policies.read("pol-7", { includePolicySets: true });
    expect(server.requests[0]).toMatchObject({ method: "GET", url: "/api/v2/policies/pol-7?include=policy_sets" });
    expect(policy).toMatchObject({
      id: "pol-7",
      enforcementLevel: "soft-mandatory",
      policySetIds: ["polset-1"],
      policySetCount: 1,
      hasCode: true,
      updatedAt: "2026-11-20T10:00:00.000Z",
    });
  });

  it("read takes a show without the policy-sets relationship as no sets: the service leaves it out then", async () => {
    const inNoSet = policyResource("pol-8", { "policy-set-count": 0 }, { relationships: {} });
    const server = await startFaultServer(json(200, { data: inNoSet }));
    expect(await testClient(server.url).policies.read("pol-8")).toMatchObject({ policySetIds: [], policySetCount: 0 });
  });

  it("update sends only the attributes given, with null clearing the description", async () => {
    const server = await startFaultServer(showPolicy());
    await testClient(server.url).policies.update("pol-1", { enforcementLevel: "advisory", description: null });
    expect(server.requests[0]).toMatchObject({ method: "PATCH", url: "/api/v2/policies/pol-1" });
    expect(JSON.parse(server.requests[0]!.body.toString())).toEqual({
      data: { type: "policies", attributes: { "enforcement-level": "advisory", description: null } },
    });
  });

  it("upload sends the raw bytes as application/octet-stream, an empty body included", async () => {
    const server = await startFaultServer(empty(200));
    const client = testClient(server.url);
    const code = Buffer.from([0x6d, 0x61, 0x69, 0x6e, 0x00, 0xff, 0xfe, 0x0a]);
    await client.policies.upload("pol-1", code);
    await client.policies.upload("pol-1", "");
    expect(server.requests.map((request) => [request.method, request.url, request.headers["content-type"]])).toEqual([
      ["PUT", "/api/v2/policies/pol-1/upload", "application/octet-stream"],
      ["PUT", "/api/v2/policies/pol-1/upload", "application/octet-stream"],
    ]);
    expect(server.requests[0]!.body.equals(code)).toBe(true);
    expect(server.requests[1]!.body).toHaveLength(0);
  });

  it("delete accepts 204", async () => {
    const server = await startFaultServer(empty(204));
    await testClient(server.url).policies.delete("pol-1");
    expect(server.requests[0]).toMatchObject({ method: "DELETE", url: "/api/v2/policies/pol-1" });
  });

  it("percent-encodes the policy id", async () => {
    const server = await startFaultServer(showPolicy());
    await testClient(server.url).policies.read("pol?x#y%z");
    expect(server.requests[0]!.url).toBe("/api/v2/policies/pol%3Fx%23y%25z");
  });

  it("keeps the base path of an address that has one", async () => {
    const server = await startFaultServer(
      sequence(
        showPolicy(),
        (_request, response) => {
          response.writeHead(302, { location: "/tfe/objects/abc" });
          response.end();
        },
        empty(200),
      ),
    );
    const client = testClient(`${server.url}/tfe/`);
    await client.policies.read("pol-1");
    await client.policies.download("pol-1");
    expect(server.requests.map((request) => request.url)).toEqual([
      "/tfe/api/v2/policies/pol-1",
      "/tfe/api/v2/policies/pol-1/download",
      "/tfe/objects/abc",
    ]);
  });
});

describe("listing policies", () => {
  it("encodes every list parameter with %5B and %5D and maps pagination and included policy sets", async () => {
    const server = await startFaultServer(
      json(200, {
        data: [policyResource("pol-1")],
        included: [{ id: "polset-1", type: "policy-sets", attributes: { name: "base" } }],
        meta: {
          pagination: { "current-page": 2, "prev-page": 1, "next-page": null, "total-pages": 2, "total-count": 6 },
        },
      }),
    );
    const page = await testClient(server.url).policies.list("acme", {
      search: "deny all",
      kind: "opa",
      includePolicySets: true,
      pageNumber: 2,
      pageSize: 5,
      sort: "-name",
    });
    const url = server.requests[0]!.url;
    expect(url.startsWith("/api/v2/organizations/acme/policies?")).toBe(true);
    expect(url).not.toMatch(/[[\]]/);
    const sent = new URLSearchParams(url.split("?")[1]);
    expect(Object.fromEntries(sent)).toEqual({
      "page[number]": "2",
      "page[size]": "5",
      "search[name]": "deny all",
      "filter[kind]": "opa",
      include: "policy_sets",
      sort: "-name",
    });
    expect(url).toContain("page%5Bnumber%5D=2");
    expect(url).toContain("filter%5Bkind%5D=opa");
    expect(page.pagination).toEqual({
      currentPage: 2,
      previousPage: 1,
      nextPage: null,
      totalPages: 2,
      totalCount: 6,
      pageSize: undefined,
    });
    expect(page.included).toEqual([{ id: "polset-1", type: "policy-sets" }]);
    expect(page.items.map((policy) => policy.id)).toEqual(["pol-1"]);
  });

  it("listAll follows next-page across every page and stops at the last", async () => {
    const server = await startFaultServer(paginatedPolicies(250));
    const ids: string[] = [];
    for await (const policy of testClient(server.url).policies.listAll("acme")) ids.push(policy.id);
    expect(ids).toEqual(Array.from({ length: 250 }, (_, index) => `pol-${index + 1}`));
    expect(
      server.requests.map((request) => new URL(request.url, "http://local").searchParams.get("page[number]")),
    ).toEqual(["1", "2", "3"]);
  });

  it("listAll keeps a smaller page size and the filters on every page", async () => {
    const server = await startFaultServer(paginatedPolicies(7));
    const client = testClient(server.url);
    const ids: string[] = [];
    for await (const policy of client.policies.listAll("acme", { pageSize: 2, kind: "sentinel" })) ids.push(policy.id);
    expect(ids).toHaveLength(7);
    expect(server.requests).toHaveLength(4);
    for (const request of server.requests) {
      expect(request.url).toContain("page%5Bsize%5D=2");
      expect(request.url).toContain("filter%5Bkind%5D=sentinel");
    }
  });

  it("listAll stops when a response has no pagination and when next-page does not move forward", async () => {
    const page = (nextPage: number | null) =>
      json(200, {
        data: [policyResource("pol-1")],
        meta: { pagination: { "current-page": 1, "next-page": nextPage, "total-pages": 2, "total-count": 2 } },
      });
    for (const reply of [json(200, { data: [policyResource("pol-1")] }), page(1)]) {
      const server = await startFaultServer(reply);
      const ids: string[] = [];
      for await (const policy of testClient(server.url).policies.listAll("acme")) ids.push(policy.id);
      expect(ids).toEqual(["pol-1"]);
      expect(server.requests).toHaveLength(1);
    }
  });
});

describe("download", () => {
  it("follows the redirect to another origin without the token and returns the exact bytes", async () => {
    const code = Buffer.concat([
      Buffer.from('import "tfplan/v2"\nmain = rule { true }\n'),
      Buffer.from([0, 0xff, 0x80]),
    ]);
    const storage = await startFaultServer((_request, response) => {
      response.writeHead(200, { "content-type": "application/octet-stream" });
      response.end(code);
    });
    const service = await startFaultServer((_request, response) => {
      response.writeHead(307, { location: `${storage.url}/objects/abc?signature=xyz` });
      response.end();
    });

    const bytes = await testClient(service.url).policies.download("pol-1");

    expect(bytes.equals(code)).toBe(true);
    expect(service.requests[0]).toMatchObject({ method: "GET", url: "/api/v2/policies/pol-1/download" });
    expect(service.requests[0]!.headers.authorization).toBe(`Bearer ${token}`);
    expect(storage.requests).toHaveLength(1);
    expect(storage.requests[0]!.url).toBe("/objects/abc?signature=xyz");
    expect(storage.requests[0]!.headers.authorization).toBeUndefined();
    expect(JSON.stringify(storage.requests[0]!.headers)).not.toContain(token);
  });

  it("reports 404 before any upload as not found or no permission", async () => {
    const server = await startFaultServer(json(404, { errors: [{ status: "404", title: "not found" }] }));
    const error = await rejection(() => testClient(server.url).policies.download("pol-1"));
    expect(error).toBeInstanceOf(TfeApiError);
    expect(error).toMatchObject({ status: 404, method: "GET", path: "/api/v2/policies/pol-1/download" });
    expect((error as Error).message).toContain("not found, or the token lacks permission");
  });

  it("names a failing temporary URL by origin and path, without its signature", async () => {
    const storage = await startFaultServer(text(403, "<Error><Code>SignatureExpired</Code></Error>"));
    const service = await startFaultServer((_request, response) => {
      response.writeHead(307, { location: `${storage.url}/objects/abc?signature=s3cr3t` });
      response.end();
    });
    const error = await rejection(() => testClient(service.url).policies.download("pol-1"));
    expect(error).toMatchObject({ status: 403, path: `${storage.url}/objects/abc` });
    expect((error as Error).message).toBe(`GET ${storage.url}/objects/abc: the service answered 403: SignatureExpired`);
  });

  it("gives up on a redirect loop with a message saying so", async () => {
    const server = await startFaultServer((_request, response) => {
      response.writeHead(302, { location: "/api/v2/policies/pol-1/download" });
      response.end();
    });
    const error = await rejection(() => testClient(server.url).policies.download("pol-1"));
    expect(error).toBeInstanceOf(TfeApiError);
    expect((error as Error).message).toContain("too many redirects");
    expect(server.requests.length).toBeLessThanOrEqual(5);
  });
});
