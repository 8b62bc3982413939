import { describe, expect, it } from "vitest";
import { TfeApiError } from "../../src/client/index";
import { json, rejection, sequence, startFaultServer, testClient } from "./helpers";

const version = { organization: "acme", name: "vpc", provider: "aws", version: "1.2.0" };
const versionPath = "/api/v2/organizations/acme/registry-modules/private/acme/vpc/aws/1.2.0";

// The real deprecate response: no attributes or links in data, short numeric ids, the reason extended.
const deprecated = {
  data: {
    id: "1",
    type: "module-versions",
    relationships: { deprecation: { data: { id: "7", type: "deprecations" } } },
  },
  included: [
    {
      id: "7",
      type: "deprecations",
      attributes: { link: "https://example.com/cve", reason: "CVE-2026-1 Applies will be blocked in 15 days." },
    },
  ],
};

describe("module version deprecation", () => {
  it("deprecate sends the PATCH document and returns the reason as the service holds it", async () => {
    const server = await startFaultServer(json(200, deprecated));
    const result = await testClient(server.url).moduleVersions.deprecate({
      ...version,
      reason: "CVE-2026-1",
      link: "https://example.com/cve",
    });
    expect(server.requests[0]).toMatchObject({ method: "PATCH", url: versionPath });
    expect(server.requests[0]!.headers["content-type"]).toBe("application/vnd.api+json");
    expect(JSON.parse(server.requests[0]!.body.toString())).toEqual({
      data: {
        type: "module-versions",
        attributes: {
          deprecation: { "deprecated-status": "Deprecated", reason: "CVE-2026-1", link: "https://example.com/cve" },
        },
      },
    });
    expect(result).toEqual({
      moduleVersionId: "1",
      deprecationId: "7",
      reason: "CVE-2026-1 Applies will be blocked in 15 days.",
      link: "https://example.com/cve",
    });
  });

  it("deprecate accepts a response without relationships or included", async () => {
    const server = await startFaultServer(json(200, { data: { id: "1", type: "module-versions" } }));
    const result = await testClient(server.url).moduleVersions.deprecate({ ...version, reason: "old" });
    expect(JSON.parse(server.requests[0]!.body.toString()).data.attributes.deprecation).toEqual({
      "deprecated-status": "Deprecated",
      reason: "old",
    });
    expect(result).toEqual({ moduleVersionId: "1", deprecationId: null, reason: null, link: null });
  });

  it("undeprecate sends only the status and accepts the bare response", async () => {
    const server = await startFaultServer(json(200, { data: { type: "module-versions", id: "1" } }));
    const result = await testClient(server.url).moduleVersions.undeprecate(version);
    expect(server.requests[0]).toMatchObject({ method: "PATCH", url: versionPath });
    expect(JSON.parse(server.requests[0]!.body.toString())).toEqual({
      data: { type: "module-versions", attributes: { deprecation: { "deprecated-status": "Undeprecated" } } },
    });
    expect(result).toEqual({ moduleVersionId: "1" });
  });

  it("percent-encodes the segments of the path", async () => {
    const server = await startFaultServer(json(200, { data: { type: "module-versions", id: "1" } }));
    await testClient(server.url).moduleVersions.undeprecate({ ...version, name: "vpc@v2", version: "1.0.0+build.5" });
    expect(server.requests[0]!.url).toBe(
      "/api/v2/organizations/acme/registry-modules/private/acme/vpc%40v2/aws/1.0.0%2Bbuild.5",
    );
  });

  it("retries the service's failure-while-deprecating 500", async () => {
    const server = await startFaultServer(sequence(json(500, { errors: [{ status: "500" }] }), json(200, deprecated)));
    const result = await testClient(server.url).moduleVersions.deprecate({ ...version, reason: "CVE-2026-1" });
    expect(result.deprecationId).toBe("7");
    expect(server.requests).toHaveLength(2);
  });
});

describe("registry reads", () => {
  it("getModuleVersion reads plain JSON with fields beyond the spec and a scheme-less link", async () => {
    const server = await startFaultServer(
      json(200, {
        id: "acme/vpc/aws/1.2.0",
        owner: "",
        namespace: "acme",
        name: "vpc",
        version: "1.2.0",
        provider: "aws",
        provider_logo_url: "/images/providers/aws.png",
        description: "A VPC",
        source: "",
        tag: "",
        published_at: "2026-11-01T12:00:00Z",
        downloads: 12,
        verified: false,
        root: { path: "", name: "vpc", readme: "", empty: false, inputs: [], outputs: [], dependencies: [] },
        submodules: [],
        examples: [],
        providers: ["aws"],
        versions: ["1.0.0", "1.2.0"],
        deprecation: { reason: "Use 2.x. Applies will be blocked in 15 days.", link: "www.example.com" },
      }),
    );
    const record = await testClient(server.url).registry.getModuleVersion({
      namespace: "acme",
      name: "vpc",
      provider: "aws",
      version: "1.2.0",
    });
    expect(server.requests[0]).toMatchObject({ method: "GET", url: "/api/registry/v1/modules/acme/vpc/aws/1.2.0" });
    expect(server.requests[0]!.headers.accept).toBe("application/json");
    expect(record).toEqual({
      id: "acme/vpc/aws/1.2.0",
      namespace: "acme",
      name: "vpc",
      provider: "aws",
      version: "1.2.0",
      description: "A VPC",
      publishedAt: "2026-11-01T12:00:00Z",
      deprecation: { reason: "Use 2.x. Applies will be blocked in 15 days.", link: "www.example.com" },
    });
  });

  it("listModuleVersions returns each version with its deprecation or null", async () => {
    const server = await startFaultServer(
      json(200, {
        modules: [
          {
            source: "",
            versions: [
              {
                version: "1.0.0",
                submodules: [],
                root: { dependencies: [], providers: [{ name: "aws", namespace: "", source: "", version: "" }] },
                deprecation: null,
              },
              { version: "1.2.0", deprecation: { reason: "CVE", link: "www.example.com" } },
            ],
          },
        ],
      }),
    );
    const versions = await testClient(server.url).registry.listModuleVersions({
      namespace: "acme",
      name: "vpc",
      provider: "aws",
    });
    expect(server.requests[0]!.url).toBe("/api/registry/v1/modules/acme/vpc/aws/versions");
    expect(versions).toEqual([
      { version: "1.0.0", deprecation: null },
      { version: "1.2.0", deprecation: { reason: "CVE", link: "www.example.com" } },
    ]);
  });

  it("reports the registry's string errors", async () => {
    const server = await startFaultServer(json(404, { errors: ["Not Found"] }));
    const error = await rejection(() =>
      testClient(server.url).registry.getModuleVersion({
        namespace: "acme",
        name: "vpc",
        provider: "aws",
        version: "9.9.9",
      }),
    );
    expect(error).toBeInstanceOf(TfeApiError);
    expect(error).toMatchObject({ status: 404, errors: [{ title: "Not Found" }] });
    // Parsed, and not said twice: "Not Found" repeats what the message says already.
    expect((error as Error).message).toBe(
      "GET /api/registry/v1/modules/acme/vpc/aws/9.9.9: not found, or the token lacks permission for it (404)",
    );
  });
});
