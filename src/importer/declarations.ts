import type { ImportedDeprecation, ImportedPolicySet, UsablePolicy } from "./model";

// What the generated program declares, in no language: each resource with its arguments in the order they are
// written, and the comments a reader needs. Which arguments a policy, a set, a deprecation or a folder gets is decided
// here, once; program.ts writes it as TypeScript, program-yaml.ts as Pulumi YAML, program-python.ts as Python.

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

/** An argument's value, as every language writes one. */
export type Value =
  | { kind: "string"; value: string }
  | { kind: "boolean"; value: boolean }
  | { kind: "list"; items: Value[] }
  /** A map of the program's own keys (parameters by key, overrides by policy name). */
  | { kind: "map"; entries: [string, Value][] }
  /** An object of a type the schema declares (`vcsRepo`, a folder's override), its fields by their own names. */
  | { kind: "object"; type: string; fields: [string, Value][] }
  /** An output of another resource of the program: `<identifier>.policyId`. */
  | { kind: "output"; resource: string; property: "policyId" | "policySetId" }
  /** A secret the user puts in the stack's config. */
  | { kind: "secretConfig"; key: string }
  /** The organization the program was imported from, declared once. */
  | { kind: "organization" };

export interface Argument {
  name: string;
  value: Value;
  /** A line a reader needs above the argument. */
  comment?: string;
}

export type ResourceType = "Policy" | "PolicySet" | "ModuleVersionDeprecation" | "PolicyFolder";

export interface Declaration {
  type: ResourceType;
  /** The resource's name: the policy's or set's name on the service (its default `name`), a deprecation's module version. */
  resourceName: string;
  /** The constant that other declarations reference; undefined where none does. */
  identifier?: string;
  arguments: Argument[];
}

export const text = (value: string): Value => ({ kind: "string", value });
const flag = (value: boolean): Value => ({ kind: "boolean", value });
const texts = (values: readonly string[]): Value => ({ kind: "list", items: values.map(text) });
const organization: Argument = { name: "organization", value: { kind: "organization" } };
const adopted: Argument = { name: "adoptExisting", value: flag(true) };

export function policyDeclaration(policy: DeclaredPolicy): Declaration {
  const args: Argument[] = [organization, { name: "kind", value: text(policy.kind) }];
  if (policy.description !== null) args.push({ name: "description", value: text(policy.description) });
  if (policy.kind === "opa" && policy.query !== null) args.push({ name: "query", value: text(policy.query) });
  if (policy.regoVersion === "v1") args.push({ name: "regoVersion", value: text("v1") });
  if (policy.enforcementLevel !== null) {
    args.push({ name: "enforcementLevel", value: text(policy.enforcementLevel) });
  }
  if (policy.policySetIds.length > 0) {
    args.push({ name: "policySetIds", value: texts([...policy.policySetIds].sort()) });
  }
  args.push({ name: "codeFile", value: text(policy.codeFile) }, adopted);
  return { type: "Policy", resourceName: policy.name, identifier: policy.identifier, arguments: args };
}

export function policySetDeclaration(policySet: DeclaredPolicySet): Declaration {
  const args: Argument[] = [organization, { name: "kind", value: text(policySet.kind) }];
  if (policySet.description !== null) args.push({ name: "description", value: text(policySet.description) });
  if (policySet.vcs) {
    const { vcsRepo, policiesPath, policyUpdatePatterns } = policySet.vcs;
    const fields: [string, Value][] = [["identifier", text(vcsRepo.identifier)]];
    if (vcsRepo.branch) fields.push(["branch", text(vcsRepo.branch)]);
    if (vcsRepo.ingressSubmodules) fields.push(["ingressSubmodules", flag(true)]);
    if (vcsRepo.oauthTokenId) fields.push(["oauthTokenId", text(vcsRepo.oauthTokenId)]);
    if (vcsRepo.githubAppInstallationId)
      fields.push(["githubAppInstallationId", text(vcsRepo.githubAppInstallationId)]);
    args.push({
      name: "vcsRepo",
      value: { kind: "object", type: "VcsRepo", fields },
      comment: "Give vcsCheckout a local clone of this repository so that changes are compared (README.md).",
    });
    if (policiesPath) args.push({ name: "policiesPath", value: text(policiesPath) });
    if (policyUpdatePatterns.length > 0) {
      args.push({ name: "policyUpdatePatterns", value: texts(policyUpdatePatterns) });
    }
  } else if (policySet.directory !== undefined) {
    args.push({
      name: "directory",
      value: text(policySet.directory),
      comment:
        "The service offers no download of a version's files: put the set's folder here (as version control holds it).",
    });
  } else if (policySet.members.length > 0) {
    const members = policySet.members.map(
      (member): Value => ({ kind: "output", resource: member, property: "policyId" }),
    );
    args.push({ name: "policyIds", value: { kind: "list", items: members } });
  }
  if (policySet.global) args.push({ name: "global", value: flag(true) });
  const scope = [
    ["workspaceIds", policySet.workspaceIds],
    ["projectIds", policySet.projectIds],
    ["excludedWorkspaceIds", policySet.excludedWorkspaceIds],
    ["excludedProjectIds", policySet.excludedProjectIds],
  ] as const;
  for (const [name, ids] of scope) if (ids.length > 0) args.push({ name, value: texts([...ids].sort()) });
  if (policySet.parameters.length > 0) {
    const entries = policySet.parameters.map((parameter): [string, Value] => {
      const secret = policySet.secretConfig.find((entry) => entry.parameter === parameter.key);
      return [parameter.key, secret ? { kind: "secretConfig", key: secret.key } : text(parameter.value)];
    });
    args.push({ name: "parameters", value: { kind: "map", entries } });
  }
  if (policySet.kind === "sentinel" && policySet.agentEnabled) args.push({ name: "agentEnabled", value: flag(true) });
  if (policySet.overridable === true) args.push({ name: "overridable", value: flag(true) });
  // A Terraform policy set has no runtime setting of its own: PolicySet refuses one for it.
  if (
    policySet.kind !== "tfpolicy" &&
    policySet.policyToolVersion !== null &&
    policySet.policyToolVersion !== "latest"
  ) {
    args.push({ name: "policyToolVersion", value: text(policySet.policyToolVersion) });
  }
  args.push(adopted);
  return { type: "PolicySet", resourceName: policySet.name, identifier: policySet.identifier, arguments: args };
}

export function deprecationDeclaration(deprecation: DeclaredDeprecation): Declaration {
  const args: Argument[] = [
    organization,
    { name: "moduleName", value: text(deprecation.moduleName) },
    { name: "moduleProvider", value: text(deprecation.moduleProvider) },
    { name: "version", value: text(deprecation.version) },
    { name: "reason", value: text(deprecation.reason) },
  ];
  if (deprecation.link !== null) args.push({ name: "link", value: text(deprecation.link) });
  args.push(adopted);
  return {
    type: "ModuleVersionDeprecation",
    resourceName: deprecation.resourceName,
    identifier: deprecation.identifier,
    arguments: args,
  };
}

export function folderDeclaration(folder: DeclaredFolder): Declaration {
  const args: Argument[] = [{ name: "directory", value: text(folder.directory) }];
  if (folder.regoVersion === "v1") args.push({ name: "regoVersion", value: text("v1") });
  args.push(organization);
  if (folder.policySetIds.length > 0) {
    const ids = [...folder.policySetIds].sort().map((id): Value => {
      const constant = folder.setIdentifiers[id];
      return constant ? { kind: "output", resource: constant, property: "policySetId" } : text(id);
    });
    args.push({ name: "policySetIds", value: { kind: "list", items: ids } });
  }
  args.push(adopted);
  const described = Object.entries(folder.descriptions);
  if (described.length > 0) {
    const entries = described.map(([name, description]): [string, Value] => [
      name,
      { kind: "object", type: "PolicyOverride", fields: [["description", text(description)]] },
    ]);
    args.push({ name: "overrides", value: { kind: "map", entries } });
  }
  return { type: "PolicyFolder", resourceName: folder.resourceName, arguments: args };
}

/** What the program declares besides the deprecations: policies (program layout) or folders, and the sets. */
/** The comment above a program's deprecations, in each language's comment syntax (`prefix`). */
export function deprecationsComment(prefix: string): string[] {
  return [
    `${prefix} Deprecated module versions. A deprecation exists while its resource does: destroying one reinstates the`,
    `${prefix} version. The reason leaves out the text the service appends (it appends it again).`,
  ];
}

/** A program's deprecations as sections of code, the first under the comment that explains them. */
export function deprecationSections(
  deprecated: readonly Declaration[],
  render: (declaration: Declaration) => string,
  commentPrefix: string,
): string[] {
  const [first, ...rest] = deprecated;
  if (!first) return [];
  return [[...deprecationsComment(commentPrefix), render(first)].join("\n"), ...rest.map(render)];
}

export type ProgramDeclared =
  | { policies: readonly DeclaredPolicy[]; policySets: readonly DeclaredPolicySet[] }
  | { folders: readonly DeclaredFolder[]; policySets: readonly DeclaredPolicySet[] };

/**
 * Every declaration of the program, in the order it is written: policies one `Policy` each (the program layout) or
 * one `PolicyFolder` per folder (the folder layout), then the deprecations. A set of policies lists its policies
 * (program layout), so it comes after them; folders name their sets, so after those.
 */
export function programDeclarations(
  declared: ProgramDeclared,
  deprecations: readonly DeclaredDeprecation[],
): { resources: Declaration[]; deprecations: Declaration[] } {
  const sets = declared.policySets.map(policySetDeclaration);
  const resources =
    "policies" in declared
      ? [...declared.policies.map(policyDeclaration), ...sets]
      : [...sets, ...declared.folders.map(folderDeclaration)];
  return { resources, deprecations: deprecations.map(deprecationDeclaration) };
}

/** The stack config keys of the program's secrets, in the order declared. */
export function secretConfigKeys(declarations: readonly Declaration[]): string[] {
  const keys: string[] = [];
  const visit = (value: Value) => {
    if (value.kind === "secretConfig") keys.push(value.key);
    else if (value.kind === "list") value.items.forEach(visit);
    else if (value.kind === "map") for (const [, entry] of value.entries) visit(entry);
    else if (value.kind === "object") for (const [, field] of value.fields) visit(field);
  };
  for (const declaration of declarations) for (const argument of declaration.arguments) visit(argument.value);
  return keys;
}
