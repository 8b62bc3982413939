import { version as pulumiVersion } from "@pulumi/pulumi/version";
import {
  type Declaration,
  type DeclaredDeprecation,
  deprecationSections,
  type ProgramDeclared,
  programDeclarations,
  secretConfigKeys,
  type Value,
} from "./declarations";
import { type ImportSource, type LibraryDependency, programFile } from "./model";
import { yamlScalar } from "./program-yaml";

// The program as TypeScript on this library: index.ts, with the project's Pulumi.yaml, package.json and tsconfig.

/** Every adopted object is protected, as `pulumi import` protects what it adopts: destroy cannot delete it. */
const protectedOption = "{ protect: true }";

/** A TypeScript (and YAML flow) string literal: JSON's escapes are valid in both. */
function literal(value: string): string {
  return JSON.stringify(value);
}

/** A value as TypeScript: a map one entry a line at `indent`, everything else on one line. */
function typescriptValue(value: Value, indent: string): string {
  switch (value.kind) {
    case "string":
      return literal(value.value);
    case "boolean":
      return String(value.value);
    case "list":
      return `[${value.items.map((item) => typescriptValue(item, indent)).join(", ")}]`;
    case "object":
      return `{ ${value.fields.map(([name, field]) => `${name}: ${typescriptValue(field, indent)}`).join(", ")} }`;
    case "map":
      return [
        "{",
        ...value.entries.map(([key, entry]) => `${indent}  ${literal(key)}: ${typescriptValue(entry, `${indent}  `)},`),
        `${indent}}`,
      ].join("\n");
    case "output":
      return `${value.resource}.${value.property}`;
    case "secretConfig":
      return `config.requireSecret(${literal(value.key)})`;
    case "organization":
      return "organization";
  }
}

function typescriptDeclaration(declaration: Declaration): string {
  const head = `new ${declaration.type}(${literal(declaration.resourceName)}, {`;
  const lines = [
    declaration.identifier && declaration.type !== "PolicyFolder" ? `const ${declaration.identifier} = ${head}` : head,
  ];
  for (const argument of declaration.arguments) {
    if (argument.comment) lines.push(`  // ${argument.comment}`);
    lines.push(
      argument.value.kind === "organization" && argument.name === "organization"
        ? "  organization,"
        : `  ${argument.name}: ${typescriptValue(argument.value, "  ")},`,
    );
  }
  lines.push(`}, ${protectedOption});`);
  return lines.join("\n");
}

/** The program as TypeScript: `index.ts`. */
export function renderProgram(
  organization: string,
  declared: ProgramDeclared,
  deprecations: readonly DeclaredDeprecation[],
): string {
  const { resources, deprecations: deprecated } = programDeclarations(declared, deprecations);
  const types = new Set([...resources, ...deprecated].map((declaration) => declaration.type));
  const imports = (["ModuleVersionDeprecation", "Policy", "PolicyFolder", "PolicySet"] as const).filter((type) =>
    types.has(type),
  );
  const needsConfig = secretConfigKeys(resources).length > 0;
  const sections = [
    [
      `// The policies of organization ${literal(organization)} as the service held them when \`tfe-governance import\``,
      "// wrote this file. adoptExisting: true takes each one over as it is: the first `pulumi up` changes nothing on the",
      "// service where the program and the service agree. Each is protected ({ protect: true }), as `pulumi import`",
      "// protects what it adopts: `pulumi destroy` cannot delete what existed before this project (README.md says how to",
      "// release one). Edit freely from here on; this file is yours.",
      ...(needsConfig ? ['import * as pulumi from "@pulumi/pulumi";'] : []),
      `import { ${imports.join(", ")} } from "pulumi-tfe-governance";`,
    ].join("\n"),
    [
      `const organization = ${literal(organization)};`,
      ...(needsConfig
        ? [
            "// Sensitive parameters, whose values the service never shows: see README.md.",
            "const config = new pulumi.Config();",
          ]
        : []),
    ].join("\n"),
    ...resources.map(typescriptDeclaration),
    ...deprecationSections(deprecated, typescriptDeclaration, "//"),
  ];
  return `${sections.join("\n\n")}\n`;
}

export function renderPulumiYaml(source: ImportSource): string {
  const lines = [
    `name: ${source.projectName}`,
    `description: ${yamlScalar(`Policies of organization ${source.organization}, imported by tfe-governance import`)}`,
    "runtime:",
    "  name: nodejs",
    "  options:",
    "    typescript: true",
    `main: ${programFile}`,
  ];
  // The address read from, so that the program talks to the same service without another setting. The token
  // is never written here: it stays in stack config (as a secret), the environment or the credentials file.
  if (!source.isDefaultAddress) lines.push("config:", "  tfe:address:", `    value: ${yamlScalar(source.address)}`);
  return `${lines.join("\n")}\n`;
}

export function renderPackageJson(organization: string, projectName: string, librarySpec: string): string {
  const manifest = {
    name: projectName.toLowerCase(),
    private: true,
    description: `Policies of organization ${organization} as a Pulumi program`,
    dependencies: {
      "@pulumi/pulumi": `^${pulumiVersion}`,
      "pulumi-tfe-governance": librarySpec,
    },
    // Pulumi type-checks the program with the project's TypeScript; without one it falls back to a far older one.
    devDependencies: { "@types/node": "^22.13.0", typescript: "^5.9.0" },
  };
  return `${JSON.stringify(manifest, null, 2)}\n`;
}

export function renderTsconfig(): string {
  const tsconfig = {
    compilerOptions: {
      strict: true,
      target: "es2022",
      module: "commonjs",
      moduleResolution: "node",
      skipLibCheck: true,
      forceConsistentCasingInFileNames: true,
    },
    files: [programFile],
  };
  return `${JSON.stringify(tsconfig, null, 2)}\n`;
}

/** Every file of the project except the policies' code, the folders and the README. */
export function renderProgramProject(
  source: ImportSource,
  declared: ProgramDeclared,
  deprecations: readonly DeclaredDeprecation[],
  library: LibraryDependency,
): Map<string, string> {
  return new Map([
    ["Pulumi.yaml", renderPulumiYaml(source)],
    ["package.json", renderPackageJson(source.organization, source.projectName, library.spec)],
    // A linked directory would bring its own node_modules, and a second @pulumi/pulumi beside the project's.
    ...(library.isDirectory ? [[".npmrc", "install-links=true\n"] as [string, string]] : []),
    ["tsconfig.json", renderTsconfig()],
    [".gitignore", "node_modules/\n"],
    [programFile, renderProgram(source.organization, declared, deprecations)],
  ]);
}
