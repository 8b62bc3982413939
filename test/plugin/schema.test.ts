import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import * as readFunctions from "../../src/read-functions";
import { deprecationProperties } from "../../src/resources/module-version-deprecation";
import { policyProperties } from "../../src/resources/policy";
import { folderArguments } from "../../src/resources/policy-folder";
import { policySetProperties } from "../../src/resources/policy-set/properties";
import { providerSettings } from "../../src/resources/provider-settings";

// The plugin's schema is generated from the resources' property tables (npm run generate:schema), and the SDKs from
// the schema (npm run generate:sdks): the committed ones must be what generation gives now, and every property a
// table declares must be in the schema, as an input where a program passes it and as an output where state keeps it.

const repoRoot = resolve(__dirname, "..", "..");
const run = promisify(execFile);
const schema = JSON.parse(readFileSync(join(repoRoot, "src", "plugin", "schema.json"), "utf8"));

type Table = Record<string, { argument?: unknown; output?: boolean }>;
const argumentsOf = (table: Table) => Object.keys(table).filter((key) => table[key]?.argument !== undefined);
const outputsOf = (table: Table) => Object.keys(table).filter((key) => table[key]?.output);
const sorted = (keys: Iterable<string>) => [...keys].sort();

describe("the plugin's schema", () => {
  it.each([
    ["Policy", policyProperties],
    ["PolicySet", policySetProperties],
    ["ModuleVersionDeprecation", deprecationProperties],
  ] as const)("declares %s's inputs and outputs as its property table does", (name, table) => {
    const resource = schema.resources[`tfegov:index:${name}`];
    expect(sorted(Object.keys(resource.inputProperties))).toEqual(sorted(argumentsOf(table as Table)));
    expect(sorted(Object.keys(resource.properties))).toEqual(sorted(outputsOf(table as Table)));
    for (const [key, property] of Object.entries<{ description?: string }>({
      ...resource.inputProperties,
      ...resource.properties,
    })) {
      expect(property.description, `${name}.${key} has no description`).toBeTruthy();
    }
  });

  it("declares PolicyFolder as a component with the arguments its table lists", () => {
    const folder = schema.resources["tfegov:index:PolicyFolder"];
    expect(folder.isComponent).toBe(true);
    expect(sorted(Object.keys(folder.inputProperties))).toEqual(sorted(Object.keys(folderArguments)));
  });

  it.each([
    ["getPolicy", readFunctions.getPolicyArguments],
    ["listPolicies", readFunctions.listPoliciesArguments],
    ["getPolicySet", readFunctions.getPolicySetArguments],
    ["listPolicySets", readFunctions.listPolicySetsArguments],
    ["getModuleVersion", readFunctions.moduleVersionArguments],
    ["listModuleVersions", readFunctions.moduleArguments],
  ])("declares the function %s with its table's arguments", (name, table) => {
    const declared = schema.functions[`tfegov:index:${name}`];
    expect(sorted(Object.keys(declared.inputs.properties))).toEqual(sorted(Object.keys(table)));
    for (const [key, property] of Object.entries<{ description?: string }>(declared.inputs.properties)) {
      expect(property.description, `${name}(${key}) has no description`).toBeTruthy();
    }
  });

  it("declares the provider's settings as config and as the explicit provider's inputs, the token secret", () => {
    expect(sorted(Object.keys(schema.config.variables))).toEqual(sorted(Object.keys(providerSettings)));
    expect(schema.provider.inputProperties).toEqual(schema.config.variables);
    expect(schema.config.variables.token.secret).toBe(true);
    // Descriptions name the plugin's settings, never the Node.js providers' `tfe:` namespace.
    expect(JSON.stringify(schema)).not.toMatch(/\btfe:[a-zA-Z]/);
  });

  it("declares lists as lists: a YAML or Python program passes policySetIds as a list", () => {
    const policy = schema.resources["tfegov:index:Policy"].inputProperties;
    expect(policy.policySetIds).toMatchObject({ type: "array", items: { type: "string" } });
    expect(schema.resources["tfegov:index:PolicySet"].inputProperties.workspaceIds.type).toBe("array");
  });

  it("is what the property tables give now, and so are the committed SDKs", async () => {
    await run(process.execPath, [join(repoRoot, "scripts", "generate-schema.mts"), "--check"], { cwd: repoRoot });
    await run("bash", [join(repoRoot, "scripts", "generate-sdks.sh"), "--check"], { cwd: repoRoot });
  }, 180_000);
});
