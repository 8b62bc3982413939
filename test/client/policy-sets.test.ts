import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TfeValidationError } from "../../src/client/index";
import { packFiles } from "../../src/policy-code/archive";
import { type RunningServer, startServer } from "../../src/server/index";
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

describe("policy sets against the local server", () => {
  const organization = "acme";
  const seed = {
    organizations: [{ name: organization, plus: true }],
    tokens: [{ token: "acme-client-sets-token-0001", organizations: [organization] }],
    workspaces: [{ id: "ws-production0000001", organization, name: "production" }],
    projects: [{ id: "prj-platform00000001", organization, name: "platform" }],
  };
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({ seed });
  });
  afterAll(() => server.close());

  it("creates a scoped set, reads, lists, updates, rescopes and deletes it", async () => {
    const client = testClient(server.url, { token: server.token });
    const created = await client.policySets.create(organization, {
      name: "client-scoped",
      kind: "opa",
      description: "tags",
      workspaceIds: ["ws-production0000001"],
      excludedProjectIds: ["prj-platform00000001"],
    });
    expect(created).toMatchObject({
      name: "client-scoped",
      kind: "opa",
      description: "tags",
      global: false,
      overridable: false,
      agentEnabled: true,
      workspaceIds: ["ws-production0000001"],
      excludedProjectIds: ["prj-platform00000001"],
      currentVersionId: null,
    });
    expect(await client.policySets.read(created.id, { include: ["workspaces"] })).toEqual(created);
    const listed = [];
    for await (const set of client.policySets.listAll(organization, { search: "client-" })) listed.push(set.id);
    expect(listed).toEqual([created.id]);
    const updated = await client.policySets.update(created.id, { description: null, overridable: true });
    expect(updated).toMatchObject({ description: null, overridable: true, name: "client-scoped" });
    await client.policySets.removeFromScope(created.id, "workspaces", ["ws-production0000001"]);
    await client.policySets.addToScope(created.id, "projects", ["prj-platform00000001"]);
    expect(await client.policySets.read(created.id)).toMatchObject({
      workspaceIds: [],
      projectIds: ["prj-platform00000001"],
    });
    await client.policySets.delete(created.id);
    await expect(client.policySets.read(created.id)).rejects.toMatchObject({ status: 404 });
  });

  it("uploads a version to its link, which becomes ready and current", async () => {
    const client = testClient(server.url, { token: server.token });
    const set = await client.policySets.create(organization, { name: "client-versioned" });
    const version = await client.policySets.createVersion(set.id);
    expect(version).toMatchObject({ status: "pending", errorMessage: null });
    const folder = new Map([
      ["sentinel.hcl", Buffer.from('policy "p" {\n  enforcement_level = "soft-mandatory"\n}\n')],
      ["p.sentinel", Buffer.from("main = rule { true }\n")],
    ]);
    await client.policySets.uploadVersion(version, packFiles(folder));
    let read = await client.policySets.readVersion(version.id);
    for (let attempt = 0; read.status !== "ready" && attempt < 100; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      read = await client.policySets.readVersion(version.id);
    }
    expect(read).toMatchObject({ status: "ready", uploadLink: null });
    expect((await client.policySets.read(set.id)).currentVersionId).toBe(version.id);
  });

  it("an upload whose answer is lost is retried, finds its link spent (409), and succeeds: the version holds it", async () => {
    const client = testClient(server.url, { token: server.token });
    const set = await client.policySets.create(organization, { name: "client-lost-upload" });
    const version = await client.policySets.createVersion(set.id);
    const folder = new Map([
      ["sentinel.hcl", Buffer.from('policy "p" {\n  enforcement_level = "soft-mandatory"\n}\n')],
      ["p.sentinel", Buffer.from("main = rule { true }\n")],
    ]);
    server.setFaults([
      { route: "PUT /policy-set-versions/:versionId/upload", status: 503, afterHandler: true, times: 1 },
    ]);
    try {
      await client.policySets.uploadVersion(version, packFiles(folder));
    } finally {
      server.setFaults([]);
    }
    const uploads = server.requestLog
      .entries()
      .filter((entry) => entry.path.includes(version.id) && entry.method === "PUT");
    expect(uploads.map((entry) => entry.status)).toEqual([503, 409]);
    expect((await client.policySets.readVersion(version.id)).status).not.toBe("pending");
    // A 409 on the first attempt is a real conflict: the link was spent before this upload.
    await expect(client.policySets.uploadVersion(version, packFiles(folder))).rejects.toMatchObject({ status: 409 });
  });

  it("creates, lists, updates and deletes parameters; a sensitive value never comes back", async () => {
    const client = testClient(server.url, { token: server.token });
    const set = await client.policySets.create(organization, { name: "client-parameters" });
    const limit = await client.policySets.createParameter(set.id, { key: "limit", value: "5", sensitive: false });
    await client.policySets.createParameter(set.id, { key: "token", value: "s3cr3t", sensitive: true });
    expect(await client.policySets.listParameters(set.id)).toEqual([
      { id: limit.id, key: "limit", value: "5", sensitive: false },
      { id: expect.stringMatching(/^var-/), key: "token", value: "", sensitive: true },
    ]);
    expect(await client.policySets.updateParameter(set.id, limit.id, { value: "6" })).toMatchObject({ value: "6" });
    await client.policySets.deleteParameter(set.id, limit.id);
    expect((await client.policySets.listParameters(set.id)).map((parameter) => parameter.key)).toEqual(["token"]);
  });
});

describe("a version's upload", () => {
  it("goes to the link with the archive and without the token, even on the service's own origin", async () => {
    const server = await startFaultServer(empty(200));
    const link = `${server.url}/upload/polsetver-abc?signature=opaque`;
    await testClient(server.url).policySets.uploadVersion(
      { id: "polsetver-abc", uploadLink: link },
      Buffer.from("tgz"),
    );
    const [request] = server.requests;
    expect(request).toMatchObject({ method: "PUT", url: "/upload/polsetver-abc?signature=opaque" });
    expect(request?.headers.authorization).toBeUndefined();
    expect(request?.headers["content-type"]).toBe("application/octet-stream");
    expect(request?.body.toString()).toBe("tgz");
  });

  it("refuses a version with no link, and an archive past the limit, before sending anything", async () => {
    const server = await startFaultServer(empty(200));
    const client = testClient(server.url);
    await expect(
      client.policySets.uploadVersion({ id: "polsetver-abc", uploadLink: null }, Buffer.alloc(1)),
    ).rejects.toThrow(/no upload link/);
    await expect(
      client.policySets.uploadVersion({ id: "v", uploadLink: `${server.url}/x` }, Buffer.alloc(11 * 1024 * 1024)),
    ).rejects.toThrow(/archive/);
    expect(server.requests).toEqual([]);
  });
});
