import { version as pulumiVersion } from "@pulumi/pulumi/version";
import {
  type ImportedDeprecation,
  type ImportedPolicySet,
  type ImportSource,
  type LibraryDependency,
  programFile,
  type UsablePolicy,
} from "./model";

export interface DeclaredPolicy extends UsablePolicy {
  identifier: string;
  /** OPA: "v1" where every set of the policy pins an OPA 1.x runtime (the default, v0, is what latest reads). */
  regoVersion?: "v1";
  /** Path of the code file, relative to the project (and so to the program, which sits at its root). */
  codeFile: string;
}

export interface DeclaredDeprecation extends ImportedDeprecation {
  identifier: string;
  resourceName: string;
}

export interface DeclaredPolicySet extends ImportedPolicySet {
  identifier: string;
  /** Program layout, a set of policies: the constants of the member policies the project declares. */
  members: string[];
  /** A set of uploaded versions: the folder the program points it at, which the user fills. */
  directory?: string;
  /** A stack config key per sensitive parameter, whose value the user sets: the service never shows it. */
  secretConfig: { key: string; parameter: string }[];
}

/** Every adopted object is protected, as `pulumi import` protects what it adopts: destroy cannot delete it. */
const protectedOption = "{ protect: true }";

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
  if (policy.regoVersion === "v1") lines.push('  regoVersion: "v1",');
  if (policy.enforcementLevel !== null) lines.push(property("enforcementLevel", literal(policy.enforcementLevel)));
  if (policy.policySetIds.length > 0) {
    lines.push(property("policySetIds", `[${[...policy.policySetIds].sort().map(literal).join(", ")}]`));
  }
  lines.push(property("codeFile", literal(policy.codeFile)), "  adoptExisting: true,", `}, ${protectedOption});`);
  return lines.join("\n");
}

function idList(ids: readonly string[]): string {
  return `[${[...ids].sort().map(literal).join(", ")}]`;
}

function policySetDeclaration(policySet: DeclaredPolicySet): string {
  const lines = [`const ${policySet.identifier} = new PolicySet(${literal(policySet.name)}, {`, "  organization,"];
  lines.push(property("kind", literal(policySet.kind)));
  if (policySet.description !== null) lines.push(property("description", literal(policySet.description)));
  if (policySet.vcs) {
    const { vcsRepo, policiesPath, policyUpdatePatterns } = policySet.vcs;
    const repo = [`identifier: ${literal(vcsRepo.identifier)}`];
    if (vcsRepo.branch) repo.push(`branch: ${literal(vcsRepo.branch)}`);
    if (vcsRepo.ingressSubmodules) repo.push("ingressSubmodules: true");
    if (vcsRepo.oauthTokenId) repo.push(`oauthTokenId: ${literal(vcsRepo.oauthTokenId)}`);
    if (vcsRepo.githubAppInstallationId)
      repo.push(`githubAppInstallationId: ${literal(vcsRepo.githubAppInstallationId)}`);
    lines.push(property("vcsRepo", `{ ${repo.join(", ")} }`));
    if (policiesPath) lines.push(property("policiesPath", literal(policiesPath)));
    if (policyUpdatePatterns.length > 0)
      lines.push(property("policyUpdatePatterns", `[${policyUpdatePatterns.map(literal).join(", ")}]`));
  } else if (policySet.directory !== undefined) {
    lines.push(
      "  // The service offers no download of a version's files: put the set's folder here (as version control holds it).",
      property("directory", literal(policySet.directory)),
    );
  } else if (policySet.members.length > 0) {
    lines.push(property("policyIds", `[${policySet.members.map((member) => `${member}.policyId`).join(", ")}]`));
  }
  if (policySet.global) lines.push("  global: true,");
  const scope = [
    ["workspaceIds", policySet.workspaceIds],
    ["projectIds", policySet.projectIds],
    ["excludedWorkspaceIds", policySet.excludedWorkspaceIds],
    ["excludedProjectIds", policySet.excludedProjectIds],
  ] as const;
  for (const [name, ids] of scope) if (ids.length > 0) lines.push(property(name, idList(ids)));
  if (policySet.parameters.length > 0) {
    lines.push("  parameters: {");
    for (const parameter of policySet.parameters) {
      const secret = policySet.secretConfig.find((entry) => entry.parameter === parameter.key);
      const value = secret ? `config.requireSecret(${literal(secret.key)})` : literal(parameter.value);
      lines.push(`    ${literal(parameter.key)}: ${value},`);
    }
    lines.push("  },");
  }
  if (policySet.kind === "sentinel" && policySet.agentEnabled) lines.push("  agentEnabled: true,");
  if (policySet.overridable === true) lines.push("  overridable: true,");
  // A Terraform policy set has no runtime setting of its own: PolicySet refuses one for it.
  if (
    policySet.kind !== "tfpolicy" &&
    policySet.policyToolVersion !== null &&
    policySet.policyToolVersion !== "latest"
  ) {
    lines.push(property("policyToolVersion", literal(policySet.policyToolVersion)));
  }
  lines.push("  adoptExisting: true,", `}, ${protectedOption});`);
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
  lines.push("  adoptExisting: true,", `}, ${protectedOption});`);
  return lines.join("\n");
}

/** What the folder layout's program declares for one folder. */
export interface DeclaredFolder {
  resourceName: string;
  directory: string;
  policySetIds: string[];
  /** OPA: "v1" where every set of the folder pins an OPA 1.x runtime. */
  regoVersion?: "v1";
  /** The constants of the sets among `policySetIds` that the project declares, by id: referenced, not written as ids. */
  setIdentifiers: Record<string, string>;
  /** Descriptions the folder's file cannot hold, by policy name. */
  descriptions: Record<string, string>;
}

function folderDeclaration(folder: DeclaredFolder): string {
  const lines = [
    `new PolicyFolder(${literal(folder.resourceName)}, {`,
    property("directory", literal(folder.directory)),
  ];
  if (folder.regoVersion === "v1") lines.push('  regoVersion: "v1",');
  lines.push("  organization,");
  if (folder.policySetIds.length > 0) {
    const ids = [...folder.policySetIds].sort().map((id) => {
      const constant = folder.setIdentifiers[id];
      return constant ? `${constant}.policySetId` : literal(id);
    });
    lines.push(property("policySetIds", `[${ids.join(", ")}]`));
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
  lines.push(`}, ${protectedOption});`);
  return lines.join("\n");
}

/**
 * The program: policies one `Policy` each (the program layout), or one `PolicyFolder` per folder (the folder
 * layout), then the deprecations.
 */
export function renderProgram(
  organization: string,
  declared:
    | { policies: readonly DeclaredPolicy[]; policySets: readonly DeclaredPolicySet[] }
    | { folders: readonly DeclaredFolder[]; policySets: readonly DeclaredPolicySet[] },
  deprecations: readonly DeclaredDeprecation[],
): string {
  const sets = declared.policySets.map(policySetDeclaration);
  // A set of policies lists them (program layout), so it comes after them; folders name their sets, so after those.
  const [component, declarations] =
    "policies" in declared
      ? ["Policy", [...declared.policies.map(policyDeclaration), ...sets]]
      : ["PolicyFolder", [...sets, ...declared.folders.map(folderDeclaration)]];
  const imports = [
    ...(deprecations.length > 0 ? ["ModuleVersionDeprecation"] : []),
    component,
    ...(declared.policySets.length > 0 ? ["PolicySet"] : []),
  ];
  const needsConfig = declared.policySets.some((policySet) => policySet.secretConfig.length > 0);
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

export function renderPulumiYaml(source: ImportSource): string {
  const lines = [
    `name: ${source.projectName}`,
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
  declared: Parameters<typeof renderProgram>[1],
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
