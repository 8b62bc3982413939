import {
  type Declaration,
  type DeclaredDeprecation,
  deprecationsComment,
  type ProgramDeclared,
  programDeclarations,
  secretConfigKeys,
  type Value,
} from "./declarations";
import type { ImportSource } from "./model";

// The program as Pulumi YAML, for the plugin `pulumi-resource-tfegov`: one Pulumi.yaml that is the project and the
// program. Each resource's logical name is its name on the service (a policy, a set) or its module version, as the
// TypeScript program's resource names; where two resources of different types share one, the second gets its type
// appended and says its service name in `name`.

/**
 * A YAML double-quoted scalar: JSON's escapes are valid in it. JSON leaves DEL, the C1 controls and U+FFFE/U+FFFF as
 * they are, and YAML allows none of them in a document (a reader refuses the whole file): each is escaped as \uXXXX,
 * as are the line and paragraph separators and the byte-order mark, which readers treat apart. `${` starts an
 * interpolation in Pulumi YAML: `$${`.
 */
export function yamlScalar(value: string): string {
  return (
    JSON.stringify(value)
      .replace(
        /[\u007f-\u009f\u2028\u2029\ufeff\ufffe\uffff]/g,
        (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`,
      )
      // A function, because in a replacement string `$$` itself means one `$`.
      .replaceAll("${", () => "$${")
  );
}

/** A key as YAML writes it: plain where it is a plain word, quoted otherwise. */
function key(name: string): string {
  return /^[A-Za-z_][A-Za-z0-9_.-]*$/.test(name) ? name : yamlScalar(name);
}

function yamlValue(value: Value, organization: string, logicalNames: ReadonlyMap<string, string>): string {
  switch (value.kind) {
    case "string":
      return yamlScalar(value.value);
    case "boolean":
      return String(value.value);
    case "list":
      return `[${value.items.map((item) => yamlValue(item, organization, logicalNames)).join(", ")}]`;
    case "object":
    case "map": {
      const entries = value.kind === "object" ? value.fields : value.entries;
      return `{ ${entries.map(([name, entry]) => `${key(name)}: ${yamlValue(entry, organization, logicalNames)}`).join(", ")} }`;
    }
    case "output":
      return `"\${${logicalNames.get(value.resource) ?? value.resource}.${value.property}}"`;
    case "secretConfig":
      return `"\${${value.key}}"`;
    case "organization":
      return yamlScalar(organization);
  }
}

/** Each declaration's logical name: its resource name, unless another type took it first. */
function logicalNamesOf(declarations: readonly Declaration[]): Map<Declaration, string> {
  const taken = new Set<string>();
  const names = new Map<Declaration, string>();
  for (const declaration of declarations) {
    let name = declaration.resourceName;
    if (taken.has(name)) name = `${name}-${declaration.type.toLowerCase()}`;
    for (let suffix = 2; taken.has(name); suffix++) name = `${declaration.resourceName}-${suffix}`;
    taken.add(name);
    names.set(declaration, name);
  }
  return names;
}

function yamlResource(
  declaration: Declaration,
  logicalName: string,
  organization: string,
  references: ReadonlyMap<string, string>,
): string[] {
  const lines = [`  ${key(logicalName)}:`, `    type: tfegov:index:${declaration.type}`, "    properties:"];
  // The service name, where the logical name is not it (Policy and PolicySet default to the logical name).
  if (logicalName !== declaration.resourceName && (declaration.type === "Policy" || declaration.type === "PolicySet")) {
    lines.push(`      name: ${yamlScalar(declaration.resourceName)}`);
  }
  for (const argument of declaration.arguments) {
    if (argument.comment) lines.push(`      # ${argument.comment}`);
    lines.push(`      ${argument.name}: ${yamlValue(argument.value, organization, references)}`);
  }
  lines.push("    options:", "      protect: true");
  return lines;
}

/** The project as YAML: Pulumi.yaml, which holds the program. */
export function renderYamlProgram(
  source: ImportSource,
  declared: ProgramDeclared,
  deprecations: readonly DeclaredDeprecation[],
): string {
  const { resources, deprecations: deprecated } = programDeclarations(declared, deprecations);
  const all = [...resources, ...deprecated];
  const logicalNames = logicalNamesOf(all);
  const references = new Map(
    all.flatMap((declaration) =>
      declaration.identifier ? [[declaration.identifier, logicalNames.get(declaration) as string] as const] : [],
    ),
  );
  const secrets = secretConfigKeys(resources);
  const config: string[] = [];
  // The address read from, so that the program talks to the same service without another setting. The token is
  // never written here: it stays in stack config (as a secret), the environment or the credentials file.
  if (!source.isDefaultAddress) config.push("  tfegov:address:", `    value: ${yamlScalar(source.address)}`);
  for (const secret of secrets) config.push(`  ${key(secret)}:`, "    type: string", "    secret: true");
  const lines = [
    `# The policies of organization ${yamlScalar(source.organization)} as the service held them when \`tfe-governance import\``,
    "# wrote this file. adoptExisting: true takes each one over as it is: the first `pulumi up` changes nothing on the",
    "# service where the program and the service agree. Each is protected (protect: true), as `pulumi import` protects",
    "# what it adopts: `pulumi destroy` cannot delete what existed before this project (README.md says how to release",
    "# one). Edit freely from here on; this file is yours.",
    `name: ${source.projectName}`,
    `description: ${yamlScalar(`Policies of organization ${source.organization}, imported by tfe-governance import`)}`,
    "runtime: yaml",
    ...(config.length > 0
      ? [
          ...(secrets.length > 0
            ? ["# Sensitive parameters, whose values the service never shows, are secret config: see README.md."]
            : []),
          "config:",
          ...config,
        ]
      : []),
    "resources:",
  ];
  for (const declaration of resources) {
    lines.push(...yamlResource(declaration, logicalNames.get(declaration) as string, source.organization, references));
  }
  if (deprecated.length > 0) {
    lines.push(...deprecationsComment("  #"));
    for (const declaration of deprecated) {
      lines.push(
        ...yamlResource(declaration, logicalNames.get(declaration) as string, source.organization, references),
      );
    }
  }
  return `${lines.join("\n")}\n`;
}

/** Every file of a YAML project except the policies' code, the folders and the README: Pulumi.yaml alone. */
export function renderYamlProject(
  source: ImportSource,
  declared: ProgramDeclared,
  deprecations: readonly DeclaredDeprecation[],
): Map<string, string> {
  return new Map([["Pulumi.yaml", renderYamlProgram(source, declared, deprecations)]]);
}
