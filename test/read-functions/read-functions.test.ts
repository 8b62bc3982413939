import * as pulumi from "@pulumi/pulumi";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { TfeApiError, TfeClient, TfeConfigError } from "../../src/client/index";
import {
  getModuleVersion,
  getModuleVersionOutput,
  getPolicy,
  getPolicyOutput,
  getPolicySet,
  getPolicySetOutput,
  listModuleVersions,
  listModuleVersionsOutput,
  listPolicies,
  listPoliciesOutput,
  listPolicySets,
  listPolicySetsOutput,
} from "../../src/index";
import { invokeFunction } from "../../src/plugin/functions";
import { ProviderContext } from "../../src/resources/provider-context";
import type { RunningServer } from "../../src/server/index";
import { startSeededServer } from "../seeded-server";

const token = "functions-test-token.atlasv1.c2VjcmV0";
const organization = "acme";
const policySetId = "polset-functionsBaseline1";
const opaPolicySetId = "polset-functionsOpaBase1";
const sentinelCount = 200;
const opaCount = 50;
const versions = Array.from({ length: 150 }, (_, index) => `${Math.floor(index / 10)}.${index % 10}.0`);
const deprecatedVersions = ["0.3.0", "7.1.0", "14.9.0"];
const moduleAddress = { namespace: organization, name: "network", provider: "aws" };

let server: RunningServer;
let client: TfeClient;

const policyName = (index: number) => `policy-${String(index).padStart(3, "0")}`;

/** Resolves an Output outside a Pulumi program, where its apply callbacks run at once. */
function resolvedValue<T>(output: pulumi.Output<T>): Promise<T> {
  return new Promise((resolve) => output.apply(resolve));
}

const listRequests = () =>
  server.requestLog
    .entries()
    .filter((entry) => entry.method === "GET" && entry.route === "/api/v2/organizations/:organization/policies");

beforeAll(async () => {
  server = await startSeededServer({
    organization,
    token,
    policySetId,
    opaPolicySetId,
    modules: [{ name: moduleAddress.name, provider: moduleAddress.provider, versions }],
  });
  client = new TfeClient({ address: server.url, token, rateLimit: false });
  for (let index = 0; index < sentinelCount + opaCount; index++) {
    const opa = index >= sentinelCount;
    await client.policies.create(organization, {
      name: policyName(index),
      kind: opa ? "opa" : "sentinel",
      ...(opa ? { query: "data.terraform.deny" } : {}),
      enforcementLevel: "advisory",
      policySetIds: index % 50 === 0 ? [opa ? opaPolicySetId : policySetId] : [],
    });
  }
  for (const version of deprecatedVersions) {
    await client.moduleVersions.deprecate({
      organization,
      name: moduleAddress.name,
      provider: moduleAddress.provider,
      version,
      reason: `${version} is broken`,
      link: "www.example.com/network",
    });
  }
}, 60_000);

afterAll(async () => {
  await client.close();
  await server.close();
});

beforeEach(() => server.requestLog.clear());

describe("listPolicies", () => {
  it("reads every page: 250 policies in 3 requests of up to 100", async () => {
    const policies = await listPolicies({ organization }, { client });
    expect(policies).toHaveLength(sentinelCount + opaCount);
    expect(new Set(policies.map((policy) => policy.id)).size).toBe(sentinelCount + opaCount);
    expect(policies.map((policy) => policy.name).sort()).toEqual(
      Array.from({ length: sentinelCount + opaCount }, (_, index) => policyName(index)),
    );
    expect(listRequests().map((entry) => entry.path)).toEqual([
      expect.stringMatching(/page%5Bnumber%5D=1\b/),
      expect.stringMatching(/page%5Bnumber%5D=2\b/),
      expect.stringMatching(/page%5Bnumber%5D=3\b/),
    ]);
  });

  it("takes the provider's organization where the call names none, and says how to give one where there is none", async () => {
    const named = await listPolicies({ kind: "opa" }, { client, organization });
    expect(named).toHaveLength(opaCount);
    const saved = process.env.TFE_ORGANIZATION;
    process.env.TFE_ORGANIZATION = organization;
    try {
      expect(await listPolicies({ kind: "opa" }, { client })).toHaveLength(opaCount);
      delete process.env.TFE_ORGANIZATION;
      await expect(listPolicies({ kind: "opa" }, { client })).rejects.toThrow(
        /listPolicies: organization is missing: give it, or set the provider's organization \(pulumi config set tfe:organization/,
      );
    } finally {
      if (saved === undefined) delete process.env.TFE_ORGANIZATION;
      else process.env.TFE_ORGANIZATION = saved;
    }
    // Through the plugin, the provider's own setting (tfegov:organization).
    const context = new ProviderContext();
    context.configureFrom((key) => (key === "organization" ? organization : undefined), "tfegov");
    context.useClient(client);
    const invoked = await invokeFunction("tfegov:index:listPolicySets", {}, context);
    expect(Array.isArray(invoked.items)).toBe(true);
  });

  // Review of issue 52, item 6: a wrong organization names the setting that gave it, as a resource's failure does.
  it("under an organization the service does not show the token, names tfe:organization", async () => {
    await expect(listPolicies({}, { client, organization: "acmee" })).rejects.toThrow(
      'GET /api/v2/organizations/acmee/policies: organization "acmee" does not exist, or this token has no access ' +
        "to it (404). Check the organization's name in tfe:organization (or TFE_ORGANIZATION, or the function's " +
        "organization argument), and that the token belongs to that organization",
    );
  });

  it("narrows by kind and by name across pages", async () => {
    const opa = await listPolicies({ organization, kind: "opa" }, { client });
    expect(opa).toHaveLength(opaCount);
    expect(opa.every((policy) => policy.kind === "opa" && policy.query === "data.terraform.deny")).toBe(true);

    const named = await listPolicies({ organization, search: "policy-01" }, { client });
    expect(named.map((policy) => policy.name).sort()).toEqual(
      Array.from({ length: 10 }, (_, index) => policyName(10 + index)),
    );
  });

  it("fills in policy sets when asked to include them", async () => {
    const policies = await listPolicies({ organization, includePolicySets: true }, { client });
    const inSet = policies.filter((policy) =>
      policy.policySetIds?.some((id) => id === policySetId || id === opaPolicySetId),
    );
    expect(inSet.map((policy) => policy.name).sort()).toEqual([
      "policy-000",
      "policy-050",
      "policy-100",
      "policy-150",
      "policy-200",
    ]);
    expect(listRequests().every((entry) => entry.path.includes("include=policy_sets"))).toBe(true);
  });

  it("has an Output form whose arguments may be outputs", async () => {
    const policies = await resolvedValue(
      listPoliciesOutput({ organization: pulumi.output(Promise.resolve(organization)), kind: "opa" }, { client }),
    );
    expect(policies).toHaveLength(opaCount);
  });
});

describe("getPolicy", () => {
  it("reads one policy by id, also in its Output form", async () => {
    const [listed] = await listPolicies({ organization, search: policyName(7) }, { client });
    const policy = await getPolicy({ id: listed?.id ?? "" }, { client });
    expect(policy).toMatchObject({
      id: listed?.id,
      name: "policy-007",
      kind: "sentinel",
      enforcementLevel: "advisory",
    });
    expect(await resolvedValue(getPolicyOutput({ id: pulumi.output(policy.id) }, { client }))).toEqual(policy);
  });

  it("passes on the service's 404 for an unknown id", async () => {
    await expect(getPolicy({ id: "pol-doesNotExist0001" }, { client })).rejects.toSatisfy(
      (error) => error instanceof TfeApiError && error.status === 404,
    );
  });
});

describe("policy set functions", () => {
  it("read one set by id with its policies, also in its Output form", async () => {
    const set = await getPolicySet({ id: policySetId }, { client });
    expect(set).toMatchObject({ id: policySetId, name: "baseline", kind: "sentinel" });
    // Every 50th Sentinel policy joined the set: policy-000, -050, -100, -150.
    expect(set.policyIds).toHaveLength(sentinelCount / 50);
    expect(await resolvedValue(getPolicySetOutput({ id: pulumi.output(policySetId) }, { client }))).toEqual(set);
  });

  it("list the sets of an organization that match, by kind and by name", async () => {
    expect((await listPolicySets({ organization }, { client })).map((set) => set.id).sort()).toEqual(
      [opaPolicySetId, policySetId].sort(),
    );
    expect((await listPolicySets({ organization, kind: "opa" }, { client })).map((set) => set.id)).toEqual([
      opaPolicySetId,
    ]);
    const searched = await resolvedValue(listPolicySetsOutput({ organization, search: "opa-" }, { client }));
    expect(searched.map((set) => set.name)).toEqual(["opa-baseline"]);
  });

  it("name a misspelled argument", async () => {
    await expect(listPolicySets({ organization, kinds: "opa" } as never, { client })).rejects.toThrow(/kinds/);
  });
});

describe("module version functions", () => {
  it("lists all 150 versions, each with its deprecation", async () => {
    const listed = await listModuleVersions(moduleAddress, { client });
    expect(listed.map((entry) => entry.version)).toEqual(versions);
    const deprecated = listed.filter((entry) => entry.deprecation !== null);
    expect(deprecated).toEqual(
      deprecatedVersions.map((version) => ({
        version,
        deprecation: {
          reason: expect.stringMatching(new RegExp(`^${version} is broken`)),
          link: "www.example.com/network",
        },
      })),
    );
    expect(
      await resolvedValue(listModuleVersionsOutput({ ...moduleAddress, name: pulumi.output("network") }, { client })),
    ).toEqual(listed);
  });

  it("reads one version with its deprecation, or null when it is not deprecated", async () => {
    const deprecated = await getModuleVersion({ ...moduleAddress, version: "7.1.0" }, { client });
    expect(deprecated).toMatchObject({
      id: "acme/network/aws/7.1.0",
      version: "7.1.0",
      deprecation: { reason: expect.stringMatching(/^7\.1\.0 is broken/), link: "www.example.com/network" },
    });
    const current = await resolvedValue(
      getModuleVersionOutput({ ...moduleAddress, version: pulumi.output("14.8.0") }, { client }),
    );
    expect(current).toMatchObject({ id: "acme/network/aws/14.8.0", deprecation: null });
  });
});

describe("credentials of the read functions", () => {
  const savedEnv = { ...process.env };

  afterEach(() => {
    process.env = { ...savedEnv };
    pulumi.runtime.setAllConfig({});
  });

  const readOne = () => getModuleVersion({ ...moduleAddress, version: "0.3.0" });

  it("take an explicit address and token", async () => {
    const version = await getModuleVersion({ ...moduleAddress, version: "0.3.0" }, { address: server.url, token });
    expect(version.version).toBe("0.3.0");
  });

  it("fall back to TFE_ADDRESS and TFE_TOKEN outside a Pulumi program", async () => {
    process.env.TFE_ADDRESS = server.url;
    process.env.TFE_TOKEN = token;
    expect((await readOne()).version).toBe("0.3.0");
  });

  it("prefer the stack config tfe:address and tfe:token inside a Pulumi program", async () => {
    process.env.TFE_ADDRESS = "http://127.0.0.1:9";
    process.env.TFE_TOKEN = "not-the-token.atlasv1.wrong";
    pulumi.runtime.setAllConfig({ "tfe:address": server.url, "tfe:token": token }, ["tfe:token"]);
    expect((await readOne()).version).toBe("0.3.0");
  });

  it("say where a token can come from when there is none, without sending anything", async () => {
    process.env.TFE_ADDRESS = server.url;
    delete process.env.TFE_TOKEN;
    process.env.TF_CLI_CONFIG_FILE = "/nonexistent/credentials.tfrc.json";
    const error = await readOne().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TfeConfigError);
    expect((error as Error).message).toContain("TFE_TOKEN");
    expect(server.requestLog.entries()).toEqual([]);
  });
});
