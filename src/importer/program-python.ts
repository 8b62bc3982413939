import {
  type Declaration,
  type DeclaredDeprecation,
  deprecationSections,
  type ProgramDeclared,
  programDeclarations,
  secretConfigKeys,
  type Value,
} from "./declarations";
import type { ImportSource } from "./model";

// The program as Python, on the SDK `pulumi_tfegov` the plugin `pulumi-resource-tfegov` ships with: `__main__.py`.
// Arguments are the SDK's snake_case names; objects of the schema's types are their `...Args` classes.

/** A Python string literal: JSON's escapes (\", \\, \n, \uXXXX) are Python's too. */
function literal(value: string): string {
  return JSON.stringify(value);
}

/** `policySetIds` → `policy_set_ids`, as Pulumi's Python generator names an argument. */
export function snakeCase(name: string): string {
  return name.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toLowerCase();
}

const pythonKeywords = new Set(
  (
    "False None True and as assert async await break class continue def del elif else except finally for from " +
    "global if import in is lambda nonlocal not or pass raise return try while with yield"
  ).split(" "),
);

/** An argument's name in the SDK: snake case, and `_` after a Python keyword (`global` → `global_`), as Pulumi's
 * Python generator writes it. */
function argumentName(name: string): string {
  const snake = snakeCase(name);
  return pythonKeywords.has(snake) ? `${snake}_` : snake;
}

function pythonValue(value: Value, indent: string): string {
  switch (value.kind) {
    case "string":
      return literal(value.value);
    case "boolean":
      return value.value ? "True" : "False";
    case "list":
      return `[${value.items.map((item) => pythonValue(item, indent)).join(", ")}]`;
    case "object":
      return `tfegov.${value.type}Args(${value.fields.map(([name, field]) => `${argumentName(name)}=${pythonValue(field, indent)}`).join(", ")})`;
    case "map":
      return [
        "{",
        ...value.entries.map(([key, entry]) => `${indent}    ${literal(key)}: ${pythonValue(entry, `${indent}    `)},`),
        `${indent}}`,
      ].join("\n");
    case "output":
      return `${value.resource}.${snakeCase(value.property)}`;
    case "secretConfig":
      return `config.require_secret(${literal(value.key)})`;
    case "organization":
      return "organization";
  }
}

function pythonDeclaration(declaration: Declaration): string {
  const call = `tfegov.${declaration.type}(`;
  const lines = [declaration.identifier ? `${declaration.identifier} = ${call}` : call];
  lines.push(`    ${literal(declaration.resourceName)},`);
  for (const argument of declaration.arguments) {
    if (argument.comment) lines.push(`    # ${argument.comment}`);
    lines.push(`    ${argumentName(argument.name)}=${pythonValue(argument.value, "    ")},`);
  }
  lines.push("    opts=pulumi.ResourceOptions(protect=True),", ")");
  return lines.join("\n");
}

/** The program as Python: `__main__.py`. */
export function renderPythonProgram(
  source: ImportSource,
  declared: ProgramDeclared,
  deprecations: readonly DeclaredDeprecation[],
): string {
  const { resources, deprecations: deprecated } = programDeclarations(declared, deprecations);
  const needsConfig = secretConfigKeys(resources).length > 0;
  const sections = [
    [
      `"""The policies of organization ${literal(source.organization)} as the service held them when \`tfe-governance import\``,
      "wrote this file. adopt_existing=True takes each one over as it is: the first `pulumi up` changes nothing on the",
      "service where the program and the service agree. Each is protected (protect=True), as `pulumi import` protects",
      "what it adopts: `pulumi destroy` cannot delete what existed before this project (README.md says how to release",
      'one). Edit freely from here on; this file is yours."""',
      "",
      "import pulumi",
      "import pulumi_tfegov as tfegov",
    ].join("\n"),
    [
      `organization = ${literal(source.organization)}`,
      ...(needsConfig
        ? ["# Sensitive parameters, whose values the service never shows: see README.md.", "config = pulumi.Config()"]
        : []),
    ].join("\n"),
    ...resources.map(pythonDeclaration),
    ...deprecationSections(deprecated, pythonDeclaration, "#"),
  ];
  return `${sections.join("\n\n")}\n`;
}

/** The version of the `pulumi` package the SDK asks for. */
const pulumiPython = "pulumi>=3.165.0,<4.0.0";

/** Every file of a Python project except the policies' code, the folders and the README. */
export function renderPythonProject(
  source: ImportSource,
  declared: ProgramDeclared,
  deprecations: readonly DeclaredDeprecation[],
  sdkVersion: string,
): Map<string, string> {
  const pulumiYaml = [
    `name: ${source.projectName}`,
    `description: ${literal(`Policies of organization ${source.organization}, imported by tfe-governance import`)}`,
    "runtime: python",
    // The address read from; the token is never written here (stack config as a secret, the environment, or the
    // credentials file).
    ...(source.isDefaultAddress ? [] : ["config:", "  tfegov:address:", `    value: ${literal(source.address)}`]),
  ];
  return new Map([
    ["Pulumi.yaml", `${pulumiYaml.join("\n")}\n`],
    // The SDK is on no package index: README.md installs its wheel first, then these.
    ["requirements.txt", `${pulumiPython}\npulumi_tfegov==${sdkVersion}\n`],
    [".gitignore", "venv/\n__pycache__/\n"],
    ["__main__.py", renderPythonProgram(source, declared, deprecations)],
  ]);
}
