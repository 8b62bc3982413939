import type { Policy } from "../client/policies";
import type { PolicySet, PolicySetParameter } from "../client/policy-sets";
import type { PolicyKind, PolicySetKind } from "../contract/policies";
import type { ModuleVersionDeprecationInputs } from "../resources/module-version-deprecation";

/** One policy as the service holds it, with its sets and code (`null` when the service holds none). */
export interface ImportedPolicy
  extends Pick<Policy, "id" | "name" | "description" | "kind" | "query" | "enforcementLevel"> {
  policySetIds: string[];
  code: Buffer | null;
}

/**
 * One deprecated version of a private-registry module, in the resource's terms; `reason` as the service holds it,
 * with any text the service appended.
 */
export type ImportedDeprecation = Omit<ModuleVersionDeprecationInputs, "adoptExisting">;

/** One policy set as the service holds it, with its parameters (a sensitive one's value is never sent back). */
export interface ImportedPolicySet
  extends Pick<
    PolicySet,
    | "id"
    | "name"
    | "description"
    | "kind"
    | "global"
    | "overridable"
    | "agentEnabled"
    | "policyToolVersion"
    | "versioned"
    | "policyIds"
    | "workspaceIds"
    | "projectIds"
    | "excludedWorkspaceIds"
    | "excludedProjectIds"
    | "vcs"
  > {
  parameters: Pick<PolicySetParameter, "key" | "value" | "sensitive">[];
}

/** Everything read from the service, before anything is generated. */
export interface ImportSource {
  organization: string;
  address: string;
  /** Whether `address` is the default one, so that the project need not name it. */
  isDefaultAddress: boolean;
  policies: ImportedPolicy[];
  policySets: ImportedPolicySet[];
  deprecations: ImportedDeprecation[];
  /** What the command was asked to leave out, each with what it matched. */
  excluded: { name: string; reason: string }[];
  /** The Pulumi project's name: unique per organization and layout unless the command names it. */
  projectName: string;
}

/** A policy that the generated project can hold: it has code and a name the `Policy` resource accepts. */
export interface UsablePolicy extends ImportedPolicy {
  code: Buffer;
}

/** Where the generated project installs this library from (see `installedLibrarySpec`). */
export interface LibraryDependency {
  spec: string;
  isDirectory: boolean;
}

/** The program file of a TypeScript project; Pulumi.yaml's `main` names it. */
export const programFile = "index.ts";

export const layouts = ["program", "folder"] as const;
export type Layout = (typeof layouts)[number];

/**
 * The language of the generated program: TypeScript on this library, or YAML and Python on the plugin for other
 * languages (`pulumi-resource-tfegov` and its SDK).
 */
export const languages = ["typescript", "yaml", "python"] as const;
export type Language = (typeof languages)[number];

/** The file that holds the program in a project of `language`. */
export function programFileOf(language: Language): string {
  return { typescript: programFile, yaml: "Pulumi.yaml", python: "__main__.py" }[language];
}

/** The namespace of the provider's settings in stack config: the library's, or the plugin's. */
export function settingsNamespaceOf(language: Language): "tfe" | "tfegov" {
  return language === "typescript" ? "tfe" : "tfegov";
}

/** What the generated project holds and what had to be adjusted, for the summary and the project's README. */
export interface ImportReport {
  layout: Layout;
  language: Language;
  /** With the service's id, which a Terraform configuration that referenced the policy needs instead. */
  policies: { name: string; id: string; kind: PolicyKind; file: string }[];
  deprecations: { resourceName: string; moduleVersion: string }[];
  /** Policy sets, with how each is declared and what its first up still sends. */
  policySets: {
    name: string;
    id: string;
    kind: PolicySetKind;
    /** `policies`, `folder` (its directory), or `version control`. */
    holds: string;
    /** Config keys the user sets with `pulumi config set --secret`, one per sensitive parameter. */
    /**
     * Parameters given as secret stack config: sensitive ones (the service never shows them), and credential-named
     * ones it holds in plain text (`plainOnService`), whose values are never written into the project.
     */
    secretConfig: { key: string; parameter: string; plainOnService?: true }[];
    directory?: string;
  }[];
  /** The folder layout's folders, each one policy set's worth: one kind, the same policy sets. */
  folders: {
    path: string;
    kind: PolicyKind;
    policySetIds: string[];
    policyCount: number;
    /** Descriptions the folder's file cannot hold, by policy name: the program gives them as overrides. */
    descriptions: Record<string, string>;
  }[];
  /** Objects left out of the project, each with the reason and what to do. */
  skipped: { name: string; reason: string }[];
  /** Adjustments a reader should know of: renamed identifiers and files, defaults filled in. */
  notes: { name: string; note: string }[];
}

export interface GeneratedProject {
  /** Relative path → content, in the order they are listed to the user. */
  files: Map<string, Buffer>;
  report: ImportReport;
}

export function codeExtension(kind: PolicyKind): string {
  return kind === "opa" ? "rego" : "sentinel";
}

export function plural(count: number, singular: string, pluralForm = `${singular}s`): string {
  return `${count} ${count === 1 ? singular : pluralForm}`;
}

/** What an import declares, counted, as the command's summary and the project's README both say it. */
export function importedCounts(report: ImportReport): string[] {
  const sentinel = report.policies.filter((policy) => policy.kind === "sentinel").length;
  return [
    `${plural(report.policies.length, "policy", "policies")} (${sentinel} Sentinel, ${report.policies.length - sentinel} OPA)`,
    plural(report.policySets.length, "policy set"),
    plural(report.deprecations.length, "module version deprecation"),
  ];
}
