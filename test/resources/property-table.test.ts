import { writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { TfeClient } from "../../src/client";
import {
  getModuleVersion,
  getPolicy,
  getPolicyOutput,
  listModuleVersions,
  listPolicies,
} from "../../src/read-functions";
import { ModuleVersionDeprecationProvider } from "../../src/resources/module-version-deprecation";
import { PolicyProvider } from "../../src/resources/policy";
import { PolicyFolder, type PolicyFolderArgs } from "../../src/resources/policy-folder";
import { closestName } from "../../src/resources/property-table";
import { unknownValue } from "../../src/resources/provider-context";
import type { RunningServer } from "../../src/server";
import { startSeededServer } from "../seeded-server";
import { temporaryDirectory } from "../temporary-directory";

// A program in JavaScript has no type checker: a misspelt or mistyped argument must fail before any request, naming
// the property (and what was meant), instead of being ignored or failing at apply in zod's words. Each case runs
// the real provider's check, the real component or the real function, next to the local server over HTTP, which
// must see no request at all.

const organization = "acme";
const token = "bad-arguments-token";
const files = temporaryDirectory("bad-arguments-");
const sentinelFile = join(files, "main.sentinel");
writeFileSync(sentinelFile, "main = rule { true }\n");
const folder = relative(process.cwd(), join(__dirname, "..", "fixtures", "policy-folders", "sentinel-defaults"));

let server: RunningServer;
let client: TfeClient;

beforeAll(async () => {
  server = await startSeededServer({ organization, token });
  client = new TfeClient({ address: server.url, token, rateLimit: false });
  pulumi.runtime.setMocks(
    {
      newResource: async (args) => {
        if (args.type.startsWith("pulumi-nodejs:dynamic")) throw new Error(`${args.name} was declared`);
        return { id: `${args.name}-component`, state: {} };
      },
      call: () => ({}),
    },
    "project",
    "stack",
    false,
  );
});

afterAll(async () => {
  await client.close();
  await server.close();
});

beforeEach(() => server.requestLog.clear());

interface BadArgument {
  /** What the program wrote, over a valid declaration. */
  args: Record<string, unknown>;
  /** The property the failure names. */
  property: string;
  /** Words the message holds: the suggestion or what the value must be. */
  says: string;
}

const validPolicy = { organization, name: "require-tags", enforcementLevel: "advisory", codeFile: sentinelFile };
const policyCases: BadArgument[] = [
  {
    args: { enforcementlevel: "hard-mandatory" },
    property: "enforcementlevel",
    says: "did you mean enforcementLevel?",
  },
  { args: { EnforcementLevel: "advisory" }, property: "EnforcementLevel", says: "did you mean enforcementLevel?" },
  { args: { enforcement_level: "advisory" }, property: "enforcement_level", says: "did you mean enforcementLevel?" },
  { args: { descripton: "Tags" }, property: "descripton", says: "did you mean description?" },
  { args: { polcySetIds: ["polset-x"] }, property: "polcySetIds", says: "did you mean policySetIds?" },
  { args: { policySetId: "polset-x" }, property: "policySetId", says: "did you mean policySetIds?" },
  { args: { codefile: "x.sentinel" }, property: "codefile", says: "did you mean codeFile?" },
  { args: { adoptexisting: true }, property: "adoptexisting", says: "did you mean adoptExisting?" },
  { args: { querry: "data.x.deny" }, property: "querry", says: "did you mean query?" },
  { args: { knd: "opa" }, property: "knd", says: "did you mean kind?" },
  { args: { organisation: "acme" }, property: "organisation", says: "did you mean organization?" },
  { args: { desc: "Tags" }, property: "desc", says: "is not a property of Policy; its properties are organization," },
  { args: { level: "advisory" }, property: "level", says: "its properties are" },
  { args: { description: 42 }, property: "description", says: "description must be a string, not the number 42" },
  { args: { kind: "opa", query: 123 }, property: "query", says: "query must be a string, not the number 123" },
  { args: { name: 7 }, property: "name", says: "name must be a string" },
  { args: { kind: true }, property: "kind", says: "kind must be a string, not the boolean true" },
  { args: { enforcementLevel: ["advisory"] }, property: "enforcementLevel", says: "must be a string, not a list" },
  { args: { adoptExisting: "yes" }, property: "adoptExisting", says: 'must be true or false, not the string "yes"' },
  { args: { adoptExisting: 1 }, property: "adoptExisting", says: "must be true or false, not the number 1" },
  { args: { policySetIds: "polset-x" }, property: "policySetIds", says: "must be a list of strings" },
  { args: { policySetIds: [1] }, property: "policySetIds", says: "must be a list of strings" },
  {
    args: { codeFile: undefined, code: { text: "x" } },
    property: "code",
    says: "code must be a string, not an object",
  },
  { args: { codeFile: 5 }, property: "codeFile", says: "codeFile must be a string" },
  { args: { organization: { name: "acme" } }, property: "organization", says: "must be a string, not an object" },
  { args: { enforce: "advisory" }, property: "enforce", says: "enforce must be a list" },
  { args: { enforcementLevel: "mandatory" }, property: "enforcementLevel", says: "enforcementLevel" },
  { args: { kind: "rego" }, property: "kind", says: 'use "sentinel" or "opa"' },
];

const validDeprecation = { organization, moduleName: "vpc", moduleProvider: "aws", version: "1.0.0", reason: "Old" };
const deprecationCases: BadArgument[] = [
  { args: { linkk: "https://example.com" }, property: "linkk", says: "did you mean link?" },
  { args: { reasn: "Old" }, property: "reasn", says: "did you mean reason?" },
  { args: { module_name: "vpc" }, property: "module_name", says: "did you mean moduleName?" },
  { args: { Version: "1.0.0" }, property: "Version", says: "did you mean version?" },
  { args: { provider: "aws" }, property: "provider", says: "is not a property of ModuleVersionDeprecation" },
  { args: { link: 5 }, property: "link", says: "link must be a string, not the number 5" },
  { args: { reason: 42 }, property: "reason", says: "reason must be a string" },
  { args: { version: 1.2 }, property: "version", says: "version must be a string, not the number 1.2" },
  { args: { moduleName: ["vpc"] }, property: "moduleName", says: "moduleName must be a string, not a list" },
  { args: { link: "javascript:alert(1)" }, property: "link", says: "is not a web address" },
];

const functionCases: { call: () => unknown; says: string }[] = [
  { call: () => getPolicy({ policyId: "pol-x" } as never, options()), says: "policyId is not a property of getPolicy" },
  { call: () => getPolicy({ id: 42 } as never, options()), says: "id must be a string, not the number 42" },
  {
    call: () => listPolicies({ organization, kinds: "opa" } as never, options()),
    says: "kinds is not a property of listPolicies's arguments: did you mean kind?",
  },
  {
    call: () => listPolicies({ organization, includePolicySets: "yes" } as never, options()),
    says: "includePolicySets must be true or false",
  },
  {
    call: () => listModuleVersions({ namespace: organization, name: "vpc", providr: "aws" } as never, options()),
    says: "did you mean provider?",
  },
  {
    call: () =>
      getModuleVersion({ namespace: organization, name: "vpc", provider: "aws", versoin: "1.0.0" } as never, options()),
    says: "did you mean version?",
  },
  {
    call: () => getPolicy({ id: "pol-x" }, { adress: server.url, token } as never),
    says: "adress is not a property of getPolicy's options: did you mean address?",
  },
  { call: () => getPolicyOutput({ idd: "pol-x" } as never, options()), says: "did you mean id?" },
];

const folderCases: { args: Record<string, unknown>; says: string }[] = [
  { args: { overides: {} }, says: "overides is not a property of PolicyFolder: did you mean overrides?" },
  { args: { adoptExisting: "yes" }, says: 'adoptExisting must be true or false, not the string "yes"' },
  {
    args: { overrides: { "require-owner-tag": { enforcementlevel: "advisory" } } },
    says: 'overrides["require-owner-tag"]: enforcementlevel is not a property of an override: did you mean enforcementLevel?',
  },
  { args: { skipBlocks: 'module "x"' }, says: "skipBlocks must be a list of strings" },
  { args: { regoversion: "v0" }, says: "did you mean regoVersion?" },
];

function options() {
  return { address: server.url, token };
}

describe("misspelt and mistyped arguments fail before any request, naming the property", () => {
  it.each(policyCases)("Policy $args: $property", async ({ args, property, says }) => {
    const provider = new PolicyProvider();
    provider.context.useClient(client);
    const { failures = [] } = await provider.check({}, { ...validPolicy, ...args });
    expect(failures.map((failure) => failure.property)).toContain(property);
    expect(failures.map((failure) => failure.reason).join("\n")).toContain(says);
    expect(server.requestLog.entries()).toEqual([]);
  });

  it.each(deprecationCases)("ModuleVersionDeprecation $args: $property", async ({ args, property, says }) => {
    const provider = new ModuleVersionDeprecationProvider();
    provider.context.useClient(client);
    const { failures = [] } = await provider.check({}, { ...validDeprecation, ...args });
    expect(failures.map((failure) => failure.property)).toContain(property);
    expect(failures.map((failure) => failure.reason).join("\n")).toContain(says);
    expect(server.requestLog.entries()).toEqual([]);
  });

  it.each(functionCases)("a read function: $says", async ({ call, says }) => {
    await expect((async () => call())()).rejects.toThrow(says);
    expect(server.requestLog.entries()).toEqual([]);
  });

  it.each(folderCases)("PolicyFolder $args", async ({ args, says }) => {
    const declared = new (class extends PolicyFolder {
      outcome() {
        return this.getData();
      }
    })("folder", { directory: folder, organization, ...args } as PolicyFolderArgs);
    await expect(declared.outcome()).rejects.toThrow(says);
    expect(server.requestLog.entries()).toEqual([]);
  });
});

describe("what the argument check lets through", () => {
  it("passes values not known yet, absent values and Pulumi's own members", async () => {
    const provider = new PolicyProvider();
    provider.context.useClient(client);
    const { failures } = await provider.check(
      {},
      { ...validPolicy, description: unknownValue, adoptExisting: unknownValue, query: null, __provider: "x" },
    );
    expect(failures).toEqual([]);
  });

  it("suggests only close names", () => {
    expect(closestName("linkk", ["reason", "link"])).toBe("link");
    expect(closestName("LINK", ["reason", "link"])).toBe("link");
    expect(closestName("desc", ["description", "name", "kind"])).toBeUndefined();
  });
});
