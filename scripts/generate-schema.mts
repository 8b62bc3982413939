// Writes src/plugin/schema.json, the Pulumi package schema of the plugin `pulumi-resource-tfegov`, from the
// resources' property tables (which properties a program passes, which are outputs) and their TypeScript
// declarations (each property's type and its doc comment). Nothing of it is written by hand:
// test/plugin/schema.test.ts fails when a table and the committed schema disagree. Run after a build:
//   npm run generate:schema
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(import.meta.url);
const dist = (path: string) => require(join(root, "dist", path));

const packageName = "tfegov";
const version: string = require(join(root, "package.json")).version;
const token = (name: string) => `${packageName}:index:${name}`;

type Schema = Record<string, unknown>;
interface Property {
  type?: string;
  items?: Schema;
  additionalProperties?: Schema;
  $ref?: string;
  description?: string;
  secret?: boolean;
  deprecationMessage?: string;
}

const program = ts.createProgram([join(root, "src", "index.ts"), join(root, "src", "plugin", "functions.ts")], {
  strict: true,
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  skipLibCheck: true,
});
const checker = program.getTypeChecker();

/** The interface (or class) of that name in that source file. */
function declaration(file: string, name: string): ts.InterfaceDeclaration | ts.ClassDeclaration {
  const source = program.getSourceFile(join(root, "src", file));
  if (!source) throw new Error(`no source ${file}`);
  let found: ts.InterfaceDeclaration | ts.ClassDeclaration | undefined;
  source.forEachChild((node) => {
    if ((ts.isInterfaceDeclaration(node) || ts.isClassDeclaration(node)) && node.name?.text === name) found = node;
  });
  if (!found) throw new Error(`no ${name} in ${file}`);
  return found;
}

/** Each property of an interface (its own and inherited) with its type and doc comment. */
interface Member {
  type: ts.Type;
  doc: string;
  optional: boolean;
  /** The `@deprecated` tag's text, where the declaration has one. */
  deprecated?: string;
}

function members(file: string, name: string): Map<string, Member> {
  const node = declaration(file, name);
  const type = checker.getTypeAtLocation(node);
  const result = new Map<string, Member>();
  for (const symbol of checker.getPropertiesOfType(type)) {
    const doc = ts.displayPartsToString(symbol.getDocumentationComment(checker)).replace(/\s+/g, " ").trim();
    const location = symbol.valueDeclaration ?? symbol.declarations?.[0];
    if (!location) continue;
    const deprecated = symbol.getJsDocTags(checker).find((tag) => tag.name === "deprecated");
    result.set(symbol.name, {
      type: checker.getTypeOfSymbolAtLocation(symbol, location),
      doc: doc || (deprecated ? ts.displayPartsToString(deprecated.text) : ""),
      optional: (symbol.flags & ts.SymbolFlags.Optional) !== 0,
      deprecated: deprecated ? ts.displayPartsToString(deprecated.text) || "Deprecated." : undefined,
    });
  }
  return result;
}

/** Named object types the schema declares, by the TypeScript name they come from. */
const namedTypes: Record<string, string> = {
  VcsRepoArgs: "VcsRepo",
  VcsRepoShape: "VcsRepo",
  PolicyOverride: "PolicyOverride",
  PolicyBlockShape: "PolicyBlock",
  ParameterState: "Parameter",
  Deprecation: "Deprecation",
  Policy: "PolicyInfo",
  PolicySet: "PolicySetInfo",
  RegistryModuleVersion: "ModuleVersionInfo",
  RegistryModuleVersionSummary: "ModuleVersionSummary",
  PolicySetVcs: "PolicySetVcs",
  PolicyRunResult: "PolicyRunResult",
};
/**
 * Each named type with every TypeScript type it stands for: one schema type serves inputs and outputs alike
 * (`VcsRepoArgs` and `VcsRepoShape` are both `VcsRepo`), so a property is required only where each of them requires
 * it: a program may leave out what the provider fills in.
 */
const typesToDeclare = new Map<string, ts.Type[]>();
const declareType = (name: string, type: ts.Type) => {
  const known = typesToDeclare.get(name) ?? [];
  if (!known.includes(type)) typesToDeclare.set(name, [...known, type]);
};
/** Names of object types written inline, by the property that holds them. */
const inlineTypeNames: Record<string, string> = { enforce: "EnforceEntry", vcsRepo: "PolicySetVcsRepo" };

/** A TypeScript type as a schema type: Pulumi's Input and Output and null dropped, named objects by reference. */
function schemaType(type: ts.Type, name: string): Property {
  const text = checker.typeToString(type);
  if (type.isUnion()) {
    const kept = type.types.filter(
      (member) => !(member.flags & (ts.TypeFlags.Null | ts.TypeFlags.Undefined)) && !isAsset(member),
    );
    if (kept.every((member) => member.flags & (ts.TypeFlags.StringLiteral | ts.TypeFlags.String))) {
      return { type: "string" };
    }
    if (kept.every((member) => member.flags & ts.TypeFlags.BooleanLike)) return { type: "boolean" };
    const wrapped = kept.find((member) => /^(Input|Output|Promise|OutputInstance)</.test(checker.typeToString(member)));
    const plain = kept.filter((member) => !/^(Promise|OutputInstance|Output)</.test(checker.typeToString(member)));
    if (plain.length === 1) return schemaType(plain[0] as ts.Type, name);
    if (wrapped) return schemaType(unwrapInput(wrapped), name);
    throw new Error(`${name}: cannot map ${text}`);
  }
  if (type.flags & (ts.TypeFlags.String | ts.TypeFlags.StringLiteral)) return { type: "string" };
  if (type.flags & (ts.TypeFlags.Boolean | ts.TypeFlags.BooleanLiteral)) return { type: "boolean" };
  if (type.flags & ts.TypeFlags.Number) return { type: /Count|Size$/.test(name) ? "integer" : "number" };
  if (type.flags & (ts.TypeFlags.Any | ts.TypeFlags.Unknown)) return { $ref: "pulumi.json#/Any" };
  // An array before the wrappers: `Input<string>[]` is an array of inputs, not an input.
  if (checker.isArrayType(type)) {
    const [element] = checker.getTypeArguments(type as ts.TypeReference);
    return { type: "array", items: schemaType(element as ts.Type, name) };
  }
  if (/^(Input|Output|Promise|OutputInstance)</.test(text)) return schemaType(unwrapInput(type), name);
  const indexed = checker.getIndexInfoOfType(type, ts.IndexKind.String);
  if (indexed && checker.getPropertiesOfType(type).length === 0) {
    return { type: "object", additionalProperties: schemaType(indexed.type, name) };
  }
  const symbolName = (type.aliasSymbol ?? type.getSymbol())?.getName() ?? "";
  const named = namedTypes[symbolName];
  if (named) {
    declareType(named, type);
    return { $ref: `#/types/${token(named)}` };
  }
  if (symbolName === "__type" || symbolName === "__object" || type.isIntersection()) {
    // An inline object type, named after the property that holds it.
    const inline = inlineTypeNames[name] ?? `${name[0]?.toUpperCase()}${name.slice(1)}Entry`;
    declareType(inline, type);
    return { $ref: `#/types/${token(inline)}` };
  }
  throw new Error(`${name}: cannot map ${text}`);
}

function isAsset(type: ts.Type): boolean {
  return /Asset|Archive/.test(checker.typeToString(type));
}

/** The T of `Input<T>`, `Output<T>`, `Promise<T>`. */
function unwrapInput(type: ts.Type): ts.Type {
  const args = (type as ts.TypeReference).aliasTypeArguments ?? checker.getTypeArguments(type as ts.TypeReference);
  if (args?.[0]) return args[0];
  // An alias that resolved into a union: take its non-wrapper member.
  if (type.isUnion()) return type.types.find((member) => !/Promise|Output/.test(checker.typeToString(member))) ?? type;
  return type;
}

function described(property: Property, doc: string | undefined): Property {
  return doc ? { ...property, description: doc } : property;
}

interface ResourceSpec {
  name: string;
  file: string;
  args: string;
  outputs: string;
  /** The class whose `declare readonly` fields document the outputs. */
  className: string;
  /** Where the resource's class is: its members' docs describe the outputs. */
  classFile: string;
  table: Record<string, { argument?: string; output?: boolean }>;
  description: string;
  /** Properties a program gives as secrets where it has them. */
  secret?: string[];
}

const resources: ResourceSpec[] = [
  {
    name: "Policy",
    file: "resources/policy/properties.ts",
    args: "PolicyArgs",
    outputs: "PolicyOutputs",
    className: "Policy",
    classFile: "resources/policy/index.ts",
    table: dist("resources/policy/index.js").policyProperties,
    description:
      "A policy of HCP Terraform / Terraform Enterprise with its code (Sentinel or OPA), its enforcement level and " +
      "the policy sets that hold it. A lowered level, or a set left, fails preview unless allowWeakening.",
  },
  {
    name: "PolicySet",
    file: "resources/policy-set/properties.ts",
    args: "PolicySetArgs",
    outputs: "PolicySetOutputs",
    className: "PolicySet",
    classFile: "resources/policy-set/index.ts",
    table: dist("resources/policy-set/properties.js").policySetProperties,
    description:
      "A policy set: a folder uploaded as a version when its content changes, a repository read from version " +
      "control (vcsRepo), or a set of individual policies, with its scope and parameters. A parameter given as a " +
      "secret is sent as sensitive. A change that weakens what the set enforces fails preview unless allowWeakening.",
  },
  {
    name: "ModuleVersionDeprecation",
    file: "resources/module-version-deprecation/index.ts",
    args: "ModuleVersionDeprecationArgs",
    outputs: "ModuleVersionDeprecationOutputs",
    className: "ModuleVersionDeprecation",
    classFile: "resources/module-version-deprecation/index.ts",
    table: dist("resources/module-version-deprecation/index.js").deprecationProperties,
    description:
      "Deprecates one version of a private-registry module, with a reason and a link; destroying it reinstates " +
      "the version. Needs the Plus edition.",
  },
];

function classDocs(spec: ResourceSpec): Map<string, string> {
  const source = program.getSourceFile(join(root, "src", spec.classFile));
  const docs = new Map<string, string>();
  source?.forEachChild((node) => {
    if (!ts.isClassDeclaration(node) || node.name?.text !== spec.className) return;
    for (const member of node.members) {
      const symbol = member.name && checker.getSymbolAtLocation(member.name);
      if (!symbol) continue;
      const doc = ts.displayPartsToString(symbol.getDocumentationComment(checker)).replace(/\s+/g, " ").trim();
      if (doc) docs.set(symbol.getName(), doc);
    }
  });
  return docs;
}

function resourceSchema(spec: ResourceSpec): Schema {
  const args = members(spec.file, spec.args);
  const outputs = members(spec.file, spec.outputs);
  const docs = classDocs(spec);
  const inputProperties: Record<string, Property> = {};
  const properties: Record<string, Property> = {};
  const requiredInputs: string[] = [];
  for (const [key, entry] of Object.entries(spec.table)) {
    const arg = args.get(key);
    if (entry.argument !== undefined) {
      if (!arg) throw new Error(`${spec.name}.${key}: in the table, not in ${spec.args}`);
      const property = described(schemaType(arg.type, key), arg.doc);
      if (arg.deprecated) property.deprecationMessage = arg.deprecated;
      inputProperties[key] = property;
      if (!arg.optional) requiredInputs.push(key);
    }
    if (entry.output) {
      const output = outputs.get(key);
      if (!output) throw new Error(`${spec.name}.${key}: an output in the table, not in ${spec.outputs}`);
      properties[key] = described(schemaType(output.type, key), docs.get(key) ?? arg?.doc ?? output.doc);
    }
  }
  return {
    description: spec.description,
    inputProperties,
    properties,
    requiredInputs: requiredInputs.sort(),
    required: Object.keys(properties)
      .filter((key) => !outputs.get(key)?.optional)
      .sort(),
  };
}

function componentSchema(): Schema {
  const args = members("resources/policy-folder/index.ts", "PolicyFolderArgs");
  const table = dist("resources/policy-folder/index.js").folderArguments as Record<string, unknown>;
  const inputProperties: Record<string, Property> = {};
  for (const key of Object.keys(table)) {
    const arg = args.get(key);
    if (!arg) throw new Error(`PolicyFolder.${key}: in the table, not in PolicyFolderArgs`);
    inputProperties[key] = described(schemaType(arg.type, key), arg.doc);
  }
  return {
    isComponent: true,
    description:
      "A whole policy-set folder (sentinel.hcl or policies.hcl beside the code) as policies: one Policy per policy " +
      "block, checked at preview. A removed block or a lowered level fails preview unless allowWeakening.",
    inputProperties,
    requiredInputs: ["directory"],
    properties: {
      policyIds: {
        type: "object",
        additionalProperties: { type: "string" },
        description: "Each policy's id on the service, keyed by the block's label.",
      },
    },
    required: ["policyIds"],
  };
}

interface FunctionSpec {
  name: string;
  args: string;
  table: Record<string, unknown>;
  result: string;
  list: boolean;
  description: string;
}

const readFunctions = dist("read-functions/index.js");
const functions: FunctionSpec[] = [
  {
    name: "getPolicy",
    args: "GetPolicyArgs",
    table: readFunctions.getPolicyArguments,
    result: "Policy",
    list: false,
    description: "One policy by id.",
  },
  {
    name: "listPolicies",
    args: "ListPoliciesArgs",
    table: readFunctions.listPoliciesArguments,
    result: "Policy",
    list: true,
    description: "Every policy of an organization that matches, across all pages.",
  },
  {
    name: "getPolicySet",
    args: "GetPolicySetArgs",
    table: readFunctions.getPolicySetArguments,
    result: "PolicySet",
    list: false,
    description: "One policy set by id, with its scope, policies and version control.",
  },
  {
    name: "listPolicySets",
    args: "ListPolicySetsArgs",
    table: readFunctions.listPolicySetsArguments,
    result: "PolicySet",
    list: true,
    description: "Every policy set of an organization that matches, across all pages.",
  },
  {
    name: "getModuleVersion",
    args: "ModuleVersionArgs",
    table: readFunctions.moduleVersionArguments,
    result: "RegistryModuleVersion",
    list: false,
    description: "One version of a private-registry module, with its deprecation.",
  },
  {
    name: "listModuleVersions",
    args: "ModuleArgs",
    table: readFunctions.moduleArguments,
    result: "RegistryModuleVersionSummary",
    list: true,
    description: "Every version of a private-registry module, each with its deprecation.",
  },
  {
    name: "listPolicyResults",
    args: "ListPolicyResultsArgs",
    table: readFunctions.listPolicyResultsArguments,
    result: "PolicyRunResult",
    list: true,
    description:
      "Every policy result the runs of the window recorded, in every workspace of the organization (or those named).",
  },
];

const resultFiles: Record<string, string> = {
  Policy: "client/policies.ts",
  PolicySet: "client/policy-sets.ts",
  RegistryModuleVersion: "client/registry.ts",
  RegistryModuleVersionSummary: "client/registry.ts",
  PolicyRunResult: "read-functions/index.ts",
};

function objectProperties(type: ts.Type, owner: string): { properties: Record<string, Property>; required: string[] } {
  const properties: Record<string, Property> = {};
  const required: string[] = [];
  for (const symbol of checker.getPropertiesOfType(type)) {
    const location = symbol.valueDeclaration ?? symbol.declarations?.[0];
    if (!location) continue;
    const doc = ts.displayPartsToString(symbol.getDocumentationComment(checker)).replace(/\s+/g, " ").trim();
    properties[symbol.name] = described(
      schemaType(checker.getTypeOfSymbolAtLocation(symbol, location), symbol.name),
      doc,
    );
    const optional = (symbol.flags & ts.SymbolFlags.Optional) !== 0;
    const nullable = checker.typeToString(checker.getTypeOfSymbolAtLocation(symbol, location)).includes("null");
    if (!optional && !nullable) required.push(symbol.name);
  }
  void owner;
  return { properties, required: required.sort() };
}

function functionSchema(spec: FunctionSpec): Schema {
  const args = members("read-functions/index.ts", spec.args);
  const inputs: Record<string, Property> = {};
  const required: string[] = [];
  for (const key of Object.keys(spec.table)) {
    const arg = args.get(key);
    if (!arg) throw new Error(`${spec.name}.${key}: in the table, not in ${spec.args}`);
    inputs[key] = described(schemaType(arg.type, key), arg.doc);
    if (!arg.optional) required.push(key);
  }
  const result = checker.getTypeAtLocation(declaration(resultFiles[spec.result] as string, spec.result));
  const outputs = spec.list
    ? {
        properties: { items: { type: "array", items: schemaType(result, "items"), description: "What matched." } },
        required: ["items"],
      }
    : objectProperties(result, spec.result);
  return { description: spec.description, inputs: { properties: inputs, required: required.sort() }, outputs };
}

// The provider's settings, from the one table the providers read them by (src/resources/provider-settings.ts).
const configVariables: Record<string, Property> = dist("resources/provider-settings.js").providerSettings;

const schema: Schema = {
  name: packageName,
  displayName: "HCP Terraform governance",
  version,
  description:
    "HCP Terraform / Terraform Enterprise policies, policy sets and private-registry module version deprecations, " +
    "checked at preview, guarded against weakening, with drift found by refresh.",
  keywords: ["pulumi", "terraform", "tfe", "hcp", "sentinel", "opa", "policy", "governance"],
  homepage: "https://github.com/pulumi-tfe-governance/pulumi-tfe-governance",
  license: "MPL-2.0",
  publisher: "pulumi-tfe-governance",
  repository: "https://github.com/pulumi-tfe-governance/pulumi-tfe-governance",
  config: { variables: configVariables },
  provider: {
    description:
      "The provider of the tfegov package: its settings, as the stack's tfegov:* config gives them by default.",
    inputProperties: configVariables,
  },
  resources: {
    ...Object.fromEntries(resources.map((spec) => [token(spec.name), resourceSchema(spec)])),
    [token("PolicyFolder")]: componentSchema(),
  },
  functions: Object.fromEntries(functions.map((spec) => [token(spec.name), functionSchema(spec)])),
  language: {
    nodejs: { packageName: "@pulumi-tfe-governance/tfegov", respectSchemaVersion: true },
    python: { packageName: "pulumi_tfegov", respectSchemaVersion: true, pyproject: { enabled: true } },
    go: {
      importBasePath: "github.com/pulumi-tfe-governance/pulumi-tfe-governance/sdk/go/tfegov",
      respectSchemaVersion: true,
      generateResourceContainerTypes: false,
    },
    csharp: { rootNamespace: "PulumiTfeGovernance", respectSchemaVersion: true, packageReferences: { Pulumi: "3.*" } },
  },
};

// The named object types the properties refer to, declared once each (in a stable order).
const types: Record<string, Schema> = {};
for (
  let pending = [...typesToDeclare];
  pending.length > 0;
  pending = [...typesToDeclare].filter(([name]) => !types[token(name)])
) {
  for (const [name, [first, ...others]] of pending) {
    const { properties, required } = objectProperties(first as ts.Type, name);
    const requiredByAll = required.filter((key) =>
      others.every((other) => objectProperties(other, name).required.includes(key)),
    );
    types[token(name)] = { type: "object", properties, required: requiredByAll };
  }
}
schema.types = Object.fromEntries(Object.entries(types).sort(([a], [b]) => (a < b ? -1 : 1)));

const target = join(root, "src", "plugin", "schema.json");
// The docs come from the Node.js resources, which name their settings `tfe:<key>`; the plugin's are `tfegov:<key>`.
const { inNamespace } = dist("resources/provider-settings.js");
const text = inNamespace(`${JSON.stringify(schema, null, 2)}\n`, packageName);
if (process.argv.includes("--check")) {
  // CI: the committed schema is what the tables give now.
  if (readFileSync(target, "utf8") !== text) {
    console.error("src/plugin/schema.json differs from what the property tables give: run npm run generate:schema");
    process.exit(1);
  }
  console.log("src/plugin/schema.json is current");
} else {
  writeFileSync(target, text);
  console.log(
    `wrote src/plugin/schema.json: ${Object.keys(schema.resources as object).length} resources, ${functions.length} functions, ${Object.keys(types).length} types`,
  );
}
