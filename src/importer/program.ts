import { version as pulumiVersion } from "@pulumi/pulumi/version";
import {
  type ImportedDeprecation,
  type ImportSource,
  type LibraryDependency,
  programFile,
  type UsablePolicy,
} from "./model";

export interface DeclaredPolicy extends UsablePolicy {
  identifier: string;
  /** Path of the code file, relative to the project (and so to the program, which sits at its root). */
  codeFile: string;
}

export interface DeclaredDeprecation extends ImportedDeprecation {
  identifier: string;
  resourceName: string;
}

/** A TypeScript (and YAML flow) string literal: JSON's escapes are valid in both. */
function literal(value: string): string {
  return JSON.stringify(value);
}

function property(name: string, value: string): string {
  return `  ${name}: ${value},`;
}

function policyDeclaration(policy: DeclaredPolicy): string {
  const lines = [`const ${policy.identifier} = new Policy(${literal(policy.name)}, {`, "  organization,"];
  lines.push(property("kind", literal(policy.kind)));
  if (policy.description !== null) lines.push(property("description", literal(policy.description)));
  if (policy.kind === "opa" && policy.query !== null) lines.push(property("query", literal(policy.query)));
  if (policy.enforcementLevel !== null) lines.push(property("enforcementLevel", literal(policy.enforcementLevel)));
  if (policy.policySetIds.length > 0) {
    lines.push(property("policySetIds", `[${[...policy.policySetIds].sort().map(literal).join(", ")}]`));
  }
  lines.push(property("codeFile", literal(policy.codeFile)), "  adoptExisting: true,", "});");
  return lines.join("\n");
}

function deprecationDeclaration(deprecation: DeclaredDeprecation): string {
  const lines = [
    `const ${deprecation.identifier} = new ModuleVersionDeprecation(${literal(deprecation.resourceName)}, {`,
    "  organization,",
    property("moduleName", literal(deprecation.moduleName)),
    property("moduleProvider", literal(deprecation.moduleProvider)),
    property("version", literal(deprecation.version)),
    property("reason", literal(deprecation.reason)),
  ];
  if (deprecation.link !== null) lines.push(property("link", literal(deprecation.link)));
  lines.push("  adoptExisting: true,", "});");
  return lines.join("\n");
}

/** What the folder layout's program declares for one folder. */
export interface DeclaredFolder {
  resourceName: string;
  directory: string;
  policySetIds: string[];
  /** Descriptions the folder's file cannot hold, by policy name. */
  descriptions: Record<string, string>;
}

function folderDeclaration(folder: DeclaredFolder): string {
  const lines = [
    `new PolicyFolder(${literal(folder.resourceName)}, {`,
    property("directory", literal(folder.directory)),
  ];
  lines.push("  organization,");
  if (folder.policySetIds.length > 0) {
    lines.push(property("policySetIds", `[${[...folder.policySetIds].sort().map(literal).join(", ")}]`));
  }
  lines.push("  adoptExisting: true,");
  const described = Object.entries(folder.descriptions);
  if (described.length > 0) {
    lines.push("  overrides: {");
    for (const [name, description] of described) {
      lines.push(`    ${literal(name)}: { description: ${literal(description)} },`);
    }
    lines.push("  },");
  }
  lines.push("});");
  return lines.join("\n");
}

/**
 * The program: policies one `Policy` each (the program layout), or one `PolicyFolder` per folder (the folder
 * layout), then the deprecations.
 */
export function renderProgram(
  organization: string,
  declared: { policies: readonly DeclaredPolicy[] } | { folders: readonly DeclaredFolder[] },
  deprecations: readonly DeclaredDeprecation[],
): string {
  const [component, declarations] =
    "policies" in declared
      ? ["Policy", declared.policies.map(policyDeclaration)]
      : ["PolicyFolder", declared.folders.map(folderDeclaration)];
  const imports = [...(deprecations.length > 0 ? ["ModuleVersionDeprecation"] : []), component];
  const sections = [
    [
      `// The policies of organization ${literal(organization)} as the service held them when \`tfe-governance import\``,
      "// wrote this file. adoptExisting: true takes each one over as it is: the first `pulumi up` changes nothing on the",
      "// service where the program and the service agree. Edit freely from here on; this file is yours.",
      `import { ${imports.join(", ")} } from "pulumi-tfe-governance";`,
    ].join("\n"),
    `const organization = ${literal(organization)};`,
    ...declarations,
  ];
  if (deprecations.length > 0) {
    sections.push(
      [
        "// Deprecated module versions. A deprecation exists while its resource does: destroying one reinstates the",
        "// version. The reason leaves out the text the service appends (it appends it again).",
        deprecationDeclaration(deprecations[0]!),
      ].join("\n"),
      ...deprecations.slice(1).map(deprecationDeclaration),
    );
  }
  return `${sections.join("\n\n")}\n`;
}

function projectName(organization: string): string {
  return `tfe-governance-${organization}`.replace(/[^A-Za-z0-9_.-]/g, "-");
}

export function renderPulumiYaml(source: ImportSource): string {
  const lines = [
    `name: ${projectName(source.organization)}`,
    `description: ${literal(`Policies of organization ${source.organization}, imported by tfe-governance import`)}`,
    "runtime:",
    "  name: nodejs",
    "  options:",
    "    typescript: true",
    `main: ${programFile}`,
  ];
  // The address read from, so that the program talks to the same service without another setting. The token
  // is never written here: it stays in stack config (as a secret), the environment or the credentials file.
  if (!source.isDefaultAddress) lines.push("config:", "  tfe:address:", `    value: ${literal(source.address)}`);
  return `${lines.join("\n")}\n`;
}

export function renderPackageJson(organization: string, librarySpec: string): string {
  const manifest = {
    name: projectName(organization).toLowerCase(),
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
  declared: Parameters<typeof renderProgram>[1],
  deprecations: readonly DeclaredDeprecation[],
  library: LibraryDependency,
): Map<string, string> {
  return new Map([
    ["Pulumi.yaml", renderPulumiYaml(source)],
    ["package.json", renderPackageJson(source.organization, library.spec)],
    // A linked directory would bring its own node_modules, and a second @pulumi/pulumi beside the project's.
    ...(library.isDirectory ? [[".npmrc", "install-links=true\n"] as [string, string]] : []),
    ["tsconfig.json", renderTsconfig()],
    [".gitignore", "node_modules/\n"],
    [programFile, renderProgram(source.organization, declared, deprecations)],
  ]);
}
