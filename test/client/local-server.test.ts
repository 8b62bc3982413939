import { afterEach, describe, expect, it } from "vitest";
import { TfeApiError } from "../../src/client/index";
import { type RunningServer, type ServerOptions, startServer } from "../../src/server/index";
import { testClient } from "./helpers";

const organization = "acme";
const seed = {
  organizations: [{ name: organization, plus: true }],
  tokens: [{ token: "acme-client-e2e-token-0001", organizations: [organization] }],
  modules: [{ organization, name: "vpc", provider: "aws", versions: ["1.0.0", "1.1.0"] }],
};

const servers: RunningServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function localClient(options: ServerOptions = {}, retry = {}) {
  const server = await startServer({ seed, ...options });
  servers.push(server);
  return { server, client: testClient(server.url, { token: server.token, retry }) };
}

describe("the client against the local server", () => {
  it("creates, lists across pages, uploads, downloads, updates and deletes policies", async () => {
    const { client } = await localClient();
    const names = ["a-first", "b-second", "c-third", "d-fourth", "e-fifth"];
    const created = [];
    for (const name of names)
      created.push(await client.policies.create(organization, { name, enforcementLevel: "advisory" }));
    const opa = await client.policies.create(organization, {
      name: "f-opa",
      kind: "opa",
      query: "data.terraform.deny",
      enforcementLevel: "mandatory",
    });
    expect(created[0]).toMatchObject({ name: "a-first", kind: "sentinel", updatedAt: null, hasCode: false });
    expect(opa).toMatchObject({ kind: "opa", query: "data.terraform.deny", enforcementLevel: "mandatory" });

    const listed: string[] = [];
    for await (const policy of client.policies.listAll(organization, { pageSize: 2 })) listed.push(policy.name);
    expect(listed.sort()).toEqual([...names, "f-opa"].sort());
    const firstPage = await client.policies.list(organization, { pageSize: 2 });
    expect(firstPage.pagination).toMatchObject({ currentPage: 1, nextPage: 2, totalPages: 3, totalCount: 6 });
    const opaOnly = await client.policies.list(organization, { kind: "opa" });
    expect(opaOnly.items.map((policy) => policy.name)).toEqual(["f-opa"]);

    const code = Buffer.from('import "tfplan/v2" as tfplan\nmain = rule { true }\n\u00e9\n');
    await client.policies.upload(created[0]!.id, code);
    expect((await client.policies.download(created[0]!.id)).equals(code)).toBe(true);
    expect(await client.policies.read(created[0]!.id)).toMatchObject({ hasCode: true });

    const updated = await client.policies.update(created[1]!.id, { enforcementLevel: "hard-mandatory" });
    expect(updated.enforcementLevel).toBe("hard-mandatory");

    const duplicate = await client.policies
      .create(organization, { name: "a-first", enforcementLevel: "advisory" })
      .catch((error: unknown) => error);
    expect(duplicate).toBeInstanceOf(TfeApiError);
    expect(duplicate).toMatchObject({ status: 422, invalidAttributes: ["name"] });

    await client.policies.delete(created[2]!.id);
    const gone = await client.policies.read(created[2]!.id).catch((error: unknown) => error);
    expect(gone).toMatchObject({ status: 404 });
    expect((gone as Error).message).toContain("not found, or the token lacks permission");
  });

  it("deprecates and reinstates a module version, as the registry reads show", async () => {
    const { client } = await localClient();
    const version = { organization, name: "vpc", provider: "aws", version: "1.0.0" };
    const deprecation = await client.moduleVersions.deprecate({
      ...version,
      reason: "CVE-2026-1",
      link: "https://x.test",
    });
    expect(deprecation.reason?.startsWith("CVE-2026-1")).toBe(true);
    const address = { namespace: organization, name: "vpc", provider: "aws" };
    expect(await client.registry.getModuleVersion({ ...address, version: "1.0.0" })).toMatchObject({
      deprecation: { reason: deprecation.reason, link: "https://x.test" },
    });
    expect(await client.registry.listModuleVersions(address)).toEqual(
      expect.arrayContaining([{ version: "1.1.0", deprecation: null }]),
    );

    await client.moduleVersions.undeprecate(version);
    expect((await client.registry.getModuleVersion({ ...address, version: "1.0.0" })).deprecation).toBeNull();
  });

  it("rides out the server's rate limit through 429 retries", async () => {
    const { client, server } = await localClient({ rateLimit: 5 }, { maxRetries: 20, maxElapsedMs: 10_000 });
    const policy = await client.policies.create(organization, { name: "limited", enforcementLevel: "advisory" });
    const reads = await Promise.all(Array.from({ length: 12 }, () => client.policies.read(policy.id)));
    expect(reads.every((read) => read.id === policy.id)).toBe(true);
    expect(server.requestLog.entries().some((entry) => entry.status === 429)).toBe(true);
  });
});
