import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { TfeClient } from "../../src/client/index";
import {
  type ModuleVersionDeprecationInputs,
  type ModuleVersionDeprecationOutputs,
  ModuleVersionDeprecationProvider,
} from "../../src/resources/module-version-deprecation";
import { unknownValue } from "../../src/resources/provider-context";
import { type RunningServer, startServer } from "../../src/server/index";

const token = "mvd-test-token.atlasv1.c2VjcmV0dmFsdWU";
const plusOrganization = "acme";
const basicOrganization = "basic-co";
const appendedNotice = " Applies will be blocked in 15 days.";
const patchRoute =
  "PATCH /api/v2/organizations/:organization/registry-modules/private/:namespace/:name/:provider/:version";

const running: { server: RunningServer; clients: TfeClient[] }[] = [];

afterEach(async () => {
  for (const { server, clients } of running.splice(0)) {
    await Promise.all(clients.map((client) => client.close()));
    await server.close();
  }
});

function clientFor(server: RunningServer, clients: TfeClient[]): TfeClient {
  const client = new TfeClient({
    address: server.url,
    token,
    rateLimit: false,
    retry: { baseDelayMs: 5, maxDelayMs: 20 },
  });
  clients.push(client);
  return client;
}

/** A fresh server, a provider talking to it, and a second client standing for changes made outside Pulumi. */
async function setup() {
  const server = await startServer({
    seed: {
      organizations: [
        { name: plusOrganization, plus: true },
        { name: basicOrganization, plus: false },
      ],
      tokens: [
        { token, organizations: [plusOrganization, basicOrganization], managePolicies: true, manageModules: true },
      ],
      modules: [
        { organization: plusOrganization, name: "vpc", provider: "aws", versions: ["1.0.0", "1.1.0", "2.0.0-rc.1"] },
        { organization: basicOrganization, name: "vpc", provider: "aws", versions: ["1.0.0"] },
      ],
    },
  });
  const clients: TfeClient[] = [];
  running.push({ server, clients });
  const provider = new ModuleVersionDeprecationProvider();
  provider.context.useClient(clientFor(server, clients));
  return { server, provider, outside: clientFor(server, clients) };
}

/** Checked inputs, also usable as the raw property bag that check() receives. */
function inputs(
  overrides: Partial<ModuleVersionDeprecationInputs> = {},
): ModuleVersionDeprecationInputs & Record<string, unknown> {
  return {
    organization: plusOrganization,
    moduleName: "vpc",
    moduleProvider: "aws",
    version: "1.0.0",
    reason: "Superseded by 1.1.0, which fixes the NAT routes.",
    link: "https://example.com/vpc/upgrade",
    adoptExisting: false,
    ...overrides,
  };
}

async function registryDeprecation(client: TfeClient, version: string, organization = plusOrganization) {
  const record = await client.registry.getModuleVersion({
    namespace: organization,
    name: "vpc",
    provider: "aws",
    version,
  });
  return record.deprecation;
}

async function failureOf(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected the operation to fail");
}

describe("ModuleVersionDeprecationProvider.check", () => {
  // Check reads the module's versions at preview: a server that holds every version these inputs name.
  const provider = new ModuleVersionDeprecationProvider();
  let server: RunningServer;
  const clients: TfeClient[] = [];
  beforeAll(async () => {
    server = await startServer({
      seed: {
        organizations: [{ name: plusOrganization, plus: true }],
        tokens: [{ token, organizations: [plusOrganization], managePolicies: true, manageModules: true }],
        modules: [
          {
            organization: plusOrganization,
            name: "vpc",
            provider: "aws",
            versions: ["1.0.0", "1.2.3", "1.2.3-rc.1", "10.20.30+build.7"],
          },
        ],
      },
    });
    provider.context.useClient(clientFor(server, clients));
  });
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close()));
    await server.close();
  });
  const failedProperties = async (news: Record<string, unknown>) =>
    (await provider.check({}, news)).failures?.map((failure) => failure.property) ?? [];

  it("accepts complete inputs and fills in a missing link as null", async () => {
    const { link: _link, ...withoutLink } = inputs();
    const result = await provider.check({}, withoutLink);
    expect(result.failures).toEqual([]);
    expect(result.inputs).toEqual({ ...withoutLink, link: null });
  });

  it.each([["1.2.3"], ["1.2.3-rc.1"], ["10.20.30+build.7"]])("accepts the version string %s", async (version) => {
    expect(await failedProperties(inputs({ version }))).toEqual([]);
  });

  it.each([["latest"], ["1.2"], ["v1.2.3"], ["1.2.3/../x"], [""]])("rejects the version %j", async (version) => {
    const result = await provider.check({}, inputs({ version }));
    expect(result.failures).toEqual([
      { property: "version", reason: expect.stringContaining('is not a version string: use e.g. "1.2.3"') },
    ]);
  });

  it.each([[""], ["   "]])("rejects the empty reason %j", async (reason) => {
    const result = await provider.check({}, inputs({ reason }));
    expect(result.failures).toEqual([
      { property: "reason", reason: "reason is required: say why the version is deprecated" },
    ]);
  });

  it.each([
    ["https://example.com/x"],
    ["http://localhost:8080/notes"],
    ["www.example.com"],
    ["docs.example.com/vpc#2"],
  ])("accepts the link %s, with or without a scheme", async (link) => {
    expect(await failedProperties(inputs({ link }))).toEqual([]);
  });

  it.each([
    ["not a url"],
    ["https://exa mple.com"],
    ["ftp://example.com/file"],
    ["javascript:alert(1)"],
    ["example"],
    [""],
  ])("rejects the link %j", async (link) => {
    const result = await provider.check({}, inputs({ link }));
    expect(result.failures).toEqual([
      { property: "link", reason: expect.stringContaining('is not a web address: use e.g. "https://') },
    ]);
  });

  it.each([
    ["organization", { organization: "acme/other" }],
    ["organization", { organization: undefined }],
    ["moduleName", { moduleName: "vpc/private" }],
    ["moduleName", { moduleName: "my vpc" }],
    ["moduleProvider", { moduleProvider: "aws\t" }],
  ])("names %s when it cannot be part of the request path", async (property, override) => {
    const result = await provider.check({}, { ...inputs(), ...override });
    expect(result.failures?.map((failure) => failure.property)).toEqual([property]);
    expect(result.failures?.[0]?.reason).toMatch(new RegExp(`^${property} .+: .+`));
  });

  it.each([["AWS"], ["Aws"], ["aws-east"]])(
    "rejects the provider %j, which the registry never holds",
    async (moduleProvider) => {
      const result = await provider.check({}, inputs({ moduleProvider }));
      expect(result.failures).toEqual([
        {
          property: "moduleProvider",
          reason: expect.stringMatching(/lowercase letters and digits: use "(aws|awseast)"/),
        },
      ]);
    },
  );

  it("reports every failure at once", async () => {
    const result = await provider.check({}, { moduleName: "a b", version: "x", reason: "", link: "no way" });
    expect(result.failures?.map((failure) => failure.property).sort()).toEqual(
      ["link", "moduleName", "moduleProvider", "organization", "reason", "version"].sort(),
    );
  });

  it("fails preview for a version the module does not have, listing the ones it has", async () => {
    const result = await provider.check({}, inputs({ version: "1.3.0" }));
    expect(result.failures).toEqual([
      {
        property: "version",
        reason:
          "version 1.3.0 of module acme/vpc/aws does not exist: it has 1.0.0, 1.2.3, 1.2.3-rc.1, 10.20.30+build.7",
      },
    ]);
  });

  it("fails preview for a module the registry does not hold, naming moduleName and moduleProvider", async () => {
    const result = await provider.check({}, inputs({ moduleName: "vcp" }));
    expect(result.failures).toEqual([
      { property: "moduleName", reason: expect.stringContaining("module acme/vcp/aws is not in the private registry") },
    ]);
  });

  it("fails preview for a version deprecated by someone else, unless adopted; reads nothing for a held version", async () => {
    const outside = clientFor(server, clients);
    await outside.moduleVersions.deprecate({
      organization: plusOrganization,
      name: "vpc",
      provider: "aws",
      version: "1.2.3",
      reason: "Deprecated by the network team",
    });
    const fresh = new ModuleVersionDeprecationProvider();
    fresh.context.useClient(clientFor(server, clients));
    const refused = await fresh.check({}, inputs({ version: "1.2.3" }));
    expect(refused.failures).toEqual([
      { property: "", reason: expect.stringContaining("module version acme/vpc/aws/1.2.3 is already deprecated") },
    ]);
    expect((await fresh.check({}, inputs({ version: "1.2.3", adoptExisting: true }))).failures).toEqual([]);
    // The resource holds the version already: its own deprecation is no reason to fail, and nothing is read.
    server.requestLog.clear();
    expect((await fresh.check(inputs({ version: "1.2.3" }), inputs({ version: "1.2.3" }))).failures).toEqual([]);
    expect(server.requestLog.entries()).toEqual([]);
  });

  it("lets values unknown during preview pass", async () => {
    const unknowns = Object.fromEntries(Object.keys(inputs()).map((key) => [key, unknownValue]));
    expect((await provider.check({}, unknowns)).failures).toEqual([]);
  });
});

describe("ModuleVersionDeprecationProvider.diff", () => {
  const provider = new ModuleVersionDeprecationProvider();
  const olds: ModuleVersionDeprecationOutputs = {
    ...inputs(),
    deprecationId: "1",
    effectiveReason: `${inputs().reason}${appendedNotice}`,
  };

  it("finds no change when the inputs equal the outputs", async () => {
    expect(await provider.diff("id", olds, inputs())).toEqual({
      changes: false,
      changed: [],
      replaces: [],
      deleteBeforeReplace: false,
    });
  });

  it.each([
    ["version", { version: "1.1.0" }],
    ["organization", { organization: "other" }],
    ["moduleName", { moduleName: "subnet" }],
    ["moduleProvider", { moduleProvider: "azurerm" }],
    ["version", { version: unknownValue }],
  ])("replaces when %s changes", async (property, override) => {
    const result = await provider.diff("id", olds, inputs(override));
    expect(result).toEqual({ changes: true, changed: [[property]], replaces: [property], deleteBeforeReplace: false });
  });

  it.each([
    ["moduleName", { moduleName: "VPC" }],
    ["moduleProvider", { moduleProvider: "AWS" }],
  ])(
    "reinstates before deprecating when only the case of %s changes: both name one version",
    async (property, override) => {
      const result = await provider.diff("id", olds, inputs(override));
      expect(result).toEqual({ changes: true, changed: [[property]], replaces: [property], deleteBeforeReplace: true });
    },
  );

  it.each([[{ reason: "Another reason." }], [{ link: "https://example.com/other" }], [{ link: null }]])(
    "updates in place for %j",
    async (override) => {
      expect(await provider.diff("id", olds, inputs(override))).toEqual({
        changes: true,
        changed: [Object.keys(override)],
        replaces: [],
        deleteBeforeReplace: false,
      });
    },
  );
});

describe("ModuleVersionDeprecationProvider against the local server", () => {
  it("deprecates the version, keeping the reason as sent and the service's text in effectiveReason", async () => {
    const { provider, outside } = await setup();
    const created = await provider.create(inputs());
    expect(created.id).toBe("acme/vpc/aws/1.0.0");
    expect(created.outs).toEqual({
      ...inputs(),
      deprecationId: expect.stringMatching(/^\d+$/),
      effectiveReason: `${inputs().reason}${appendedNotice}`,
    });
    expect(await registryDeprecation(outside, "1.0.0")).toEqual({
      reason: `${inputs().reason}${appendedNotice}`,
      link: inputs().link,
    });
    expect(await registryDeprecation(outside, "1.1.0")).toBeNull();
  });

  it("deprecates without a link", async () => {
    const { provider, outside } = await setup();
    await provider.create(inputs({ link: null }));
    expect(await registryDeprecation(outside, "1.0.0")).toEqual({ reason: expect.any(String), link: null });
  });

  it("deprecates again with a changed reason", async () => {
    const { provider, outside } = await setup();
    const created = await provider.create(inputs());
    const news = inputs({ reason: "Use 2.x: 1.x is out of support." });
    const updated = await provider.update(created.id, created.outs as ModuleVersionDeprecationOutputs, news);
    expect(updated.outs).toMatchObject({ reason: news.reason, effectiveReason: `${news.reason}${appendedNotice}` });
    expect((await registryDeprecation(outside, "1.0.0"))?.reason).toBe(`${news.reason}${appendedNotice}`);
  });

  it("deprecates again with a changed link", async () => {
    const { provider, outside } = await setup();
    const created = await provider.create(inputs());
    const news = inputs({ link: "www.example.com/vpc/2" });
    const updated = await provider.update(created.id, created.outs as ModuleVersionDeprecationOutputs, news);
    expect(updated.outs).toMatchObject({ link: "www.example.com/vpc/2" });
    expect((await registryDeprecation(outside, "1.0.0"))?.link).toBe("www.example.com/vpc/2");
  });

  it("reinstates the version on delete, and a second delete succeeds", async () => {
    const { provider, outside } = await setup();
    const created = await provider.create(inputs());
    await provider.delete(created.id);
    expect(await registryDeprecation(outside, "1.0.0")).toBeNull();
    await provider.delete(created.id);
    expect(await registryDeprecation(outside, "1.0.0")).toBeNull();
  });

  it("reads back what it created as no drift", async () => {
    const { provider } = await setup();
    const created = await provider.create(inputs());
    const read = await provider.read(created.id, created.outs);
    expect(read).toEqual({ id: created.id, props: created.outs, inputs: inputs() });
  });

  it("does not take the service's appended reason text for drift", async () => {
    const { provider, outside } = await setup();
    const created = await provider.create(inputs());
    expect((await registryDeprecation(outside, "1.0.0"))?.reason).not.toBe(inputs().reason);
    const read = await provider.read(created.id, created.outs);
    expect(read.props?.reason).toBe(inputs().reason);
    expect(read.props?.effectiveReason).toBe(`${inputs().reason}${appendedNotice}`);
    expect(await provider.diff(created.id, read.props as ModuleVersionDeprecationOutputs, inputs())).toMatchObject({
      changes: false,
    });
  });

  it("reads a reason with surrounding whitespace (a YAML block, a template literal) back as no drift", async () => {
    const { provider } = await setup();
    const reason = `\n  ${inputs().reason}\n`;
    const checked = (await provider.check({}, inputs({ reason }))).inputs as ModuleVersionDeprecationInputs;
    const created = await provider.create(checked);
    const read = await provider.read(created.id, created.outs);
    expect(read).toEqual({ id: created.id, props: created.outs, inputs: checked });
    expect(await provider.diff(created.id, read.props as ModuleVersionDeprecationOutputs, checked)).toMatchObject({
      changes: false,
    });
  });

  it("shows a reason and link changed outside Pulumi as drift", async () => {
    const { provider, outside } = await setup();
    const created = await provider.create(inputs());
    await outside.moduleVersions.deprecate({
      organization: plusOrganization,
      name: "vpc",
      provider: "aws",
      version: "1.0.0",
      reason: "Changed in the UI.",
      link: "https://example.com/elsewhere",
    });
    const read = await provider.read(created.id, created.outs);
    expect(read.props).toMatchObject({
      reason: `Changed in the UI.${appendedNotice}`,
      effectiveReason: `Changed in the UI.${appendedNotice}`,
      link: "https://example.com/elsewhere",
    });
    expect(read.inputs).toMatchObject({ reason: `Changed in the UI.${appendedNotice}` });
    const diff = await provider.diff(created.id, read.props as ModuleVersionDeprecationOutputs, inputs());
    expect(diff).toEqual({ changes: true, changed: [["reason"], ["link"]], replaces: [], deleteBeforeReplace: false });
    await provider.update(created.id, read.props as ModuleVersionDeprecationOutputs, inputs());
    expect(await registryDeprecation(outside, "1.0.0")).toEqual({
      reason: `${inputs().reason}${appendedNotice}`,
      link: inputs().link,
    });
  });

  it("shows as drift a reason that only starts with the declared one: another team's longer text", async () => {
    const { provider, outside } = await setup();
    const created = await provider.create(inputs());
    const theirs = `${inputs().reason} Also: the platform team retires it in May.`;
    await outside.moduleVersions.deprecate({
      organization: plusOrganization,
      name: "vpc",
      provider: "aws",
      version: "1.0.0",
      reason: theirs,
      link: inputs().link as string,
    });
    const read = await provider.read(created.id, created.outs);
    expect(read.props).toMatchObject({ reason: `${theirs}${appendedNotice}` });
    const diff = await provider.diff(created.id, read.props as ModuleVersionDeprecationOutputs, inputs());
    expect(diff).toMatchObject({ changes: true });
  });

  it("drops a version reinstated outside Pulumi from state at read, without an error", async () => {
    const { provider, outside } = await setup();
    const created = await provider.create(inputs());
    await outside.moduleVersions.undeprecate({
      organization: plusOrganization,
      name: "vpc",
      provider: "aws",
      version: "1.0.0",
    });
    expect(await provider.read(created.id, created.outs)).toEqual({});
  });

  it("reads an existing deprecation by id alone, as Resource.get does", async () => {
    const { provider, outside } = await setup();
    await outside.moduleVersions.deprecate({
      organization: plusOrganization,
      name: "vpc",
      provider: "aws",
      version: "1.1.0",
      reason: "Deprecated by hand.",
    });
    const read = await provider.read("acme/vpc/aws/1.1.0", {});
    expect(read.props).toEqual({
      organization: plusOrganization,
      moduleName: "vpc",
      moduleProvider: "aws",
      version: "1.1.0",
      reason: `Deprecated by hand.${appendedNotice}`,
      link: null,
      adoptExisting: false,
      deprecationId: null,
      effectiveReason: `Deprecated by hand.${appendedNotice}`,
    });
    await expect(provider.read("acme/vpc/1.1.0", {})).rejects.toThrow(
      '"acme/vpc/1.1.0" is not a module version deprecation id: use <organization>/<moduleName>/<moduleProvider>/<version>',
    );
  });

  it("replaces on a version change: the new version is deprecated, the old one reinstated", async () => {
    const { provider, outside } = await setup();
    const created = await provider.create(inputs());
    const news = inputs({ version: "2.0.0-rc.1" });
    const diff = await provider.diff(created.id, created.outs as ModuleVersionDeprecationOutputs, news);
    expect(diff).toEqual({ changes: true, changed: [["version"]], replaces: ["version"], deleteBeforeReplace: false });
    const replacement = await provider.create(news);
    await provider.delete(created.id);
    expect(replacement.id).toBe("acme/vpc/aws/2.0.0-rc.1");
    expect(await registryDeprecation(outside, "2.0.0-rc.1")).not.toBeNull();
    expect(await registryDeprecation(outside, "1.0.0")).toBeNull();
  });

  it("refuses a version deprecated already, whatever the reason, and changes nothing", async () => {
    const { provider, outside } = await setup();
    await outside.moduleVersions.deprecate({
      organization: plusOrganization,
      name: "vpc",
      provider: "aws",
      version: "1.0.0",
      reason: inputs().reason,
      link: inputs().link as string,
    });
    await expect(provider.create(inputs())).rejects.toThrow(/already deprecated .*did not deprecate it.*aliases/);
    expect(await registryDeprecation(outside, "1.0.0")).toEqual({
      reason: `${inputs().reason}${appendedNotice}`,
      link: inputs().link,
    });
  });

  it("refuses a second resource of the stack declaring the same version, even with adoptExisting", async () => {
    const { provider } = await setup();
    const both = await Promise.allSettled([
      provider.create(inputs({ adoptExisting: true })),
      provider.create(inputs({ adoptExisting: true })),
    ]);
    expect(both.map((result) => result.status).sort()).toEqual(["fulfilled", "rejected"]);
    const refusal = both.find((result) => result.status === "rejected") as PromiseRejectedResult;
    expect(refusal.reason.message).toMatch(/declared by another resource of this stack too: declare it once/);
  });

  it("renamed with adoptExisting: the new resource takes over, the old one's delete leaves the version deprecated", async () => {
    const { provider, outside } = await setup();
    const old = await provider.create(inputs());
    // The next operation runs in a provider process of its own.
    const next = new ModuleVersionDeprecationProvider();
    next.context.useClient(outside);
    const renamed = await next.create(inputs({ adoptExisting: true }));
    await next.delete(old.id);
    expect(renamed.id).toBe(old.id);
    expect(await registryDeprecation(outside, "1.0.0")).not.toBeNull();
  });

  const threeCauses = [
    "the service answered 404, which means one of",
    "the version does not exist",
    "the token is not authorized",
    "lacks the Plus edition",
  ];

  it("explains a 404 for an organization without the Plus edition, on create and on delete", async () => {
    const { provider, outside } = await setup();
    const error = await failureOf(provider.create(inputs({ organization: basicOrganization })));
    expect(error.message).toContain("deprecating module version basic-co/vpc/aws/1.0.0 failed");
    for (const cause of threeCauses) expect(error.message).toContain(cause);
    expect(error.message).not.toContain(token);

    // The version exists, so a 404 on delete cannot mean "already gone": destroying must not pretend it worked.
    const deleteError = await failureOf(provider.delete("basic-co/vpc/aws/1.0.0"));
    expect(deleteError.message).toContain("reinstating module version basic-co/vpc/aws/1.0.0 failed");
    for (const cause of threeCauses) expect(deleteError.message).toContain(cause);
    expect(await registryDeprecation(outside, "1.0.0", basicOrganization)).toBeNull();
  });

  it("explains a 404 for an unknown version", async () => {
    const { provider } = await setup();
    const error = await failureOf(provider.create(inputs({ version: "9.9.9" })));
    expect(error.message).toContain("deprecating module version acme/vpc/aws/9.9.9 failed");
    for (const cause of threeCauses) expect(error.message).toContain(cause);
  });

  it("treats a version missing from its module as reinstated: delete succeeds and read drops it", async () => {
    const { provider } = await setup();
    await provider.delete("acme/vpc/aws/9.9.9");
    expect(await provider.read("acme/vpc/aws/9.9.9", inputs({ version: "9.9.9" }))).toEqual({});
  });

  it("fails delete and read when the module cannot be read at all, since 404 may mean no access", async () => {
    const { provider } = await setup();
    const deleteError = await failureOf(provider.delete("acme/missing/aws/1.0.0"));
    for (const cause of threeCauses) expect(deleteError.message).toContain(cause);
    const readError = await failureOf(provider.read("acme/missing/aws/1.0.0", {}));
    expect(readError.message).toContain("reading module version acme/missing/aws/1.0.0 failed");
  });

  it("retries 500 and 503 from the deprecate and reinstate requests", async () => {
    const { server, provider, outside } = await setup();
    server.setFaults([
      { route: patchRoute, status: 503, times: 2 },
      { route: patchRoute, status: 500, times: 1 },
    ]);
    const created = await provider.create(inputs());
    expect(created.outs).toMatchObject({ effectiveReason: `${inputs().reason}${appendedNotice}` });
    const patches = () =>
      server.requestLog
        .entries()
        .filter((entry) => entry.method === "PATCH")
        .map((entry) => entry.status);
    expect(patches()).toEqual([503, 503, 500, 200]);

    server.setFaults([{ route: patchRoute, status: 503, times: 1 }]);
    await provider.delete(created.id);
    expect(patches()).toEqual([503, 503, 500, 200, 503, 200]);
    expect(await registryDeprecation(outside, "1.0.0")).toBeNull();
  });

  it("reports a service that keeps failing clearly, with the number of attempts", async () => {
    const { server, provider } = await setup();
    server.setFaults([{ route: patchRoute, status: 503 }]);
    const error = await failureOf(provider.create(inputs()));
    expect(error.message).toMatch(
      /^deprecating module version acme\/vpc\/aws\/1\.0\.0 failed: the service kept failing \(503 after 7 attempts\); the change is not known to be saved/,
    );
  });
});
