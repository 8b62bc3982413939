import type { Policy } from "../client/policies";
import type { PolicyKind } from "../contract/policies";
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

/** Everything read from the service, before anything is generated. */
export interface ImportSource {
  organization: string;
  address: string;
  /** Whether `address` is the default one, so that the project need not name it. */
  isDefaultAddress: boolean;
  policies: ImportedPolicy[];
  deprecations: ImportedDeprecation[];
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

/** The program file; Pulumi.yaml's `main` names it. */
export const programFile = "index.ts";

export const layouts = ["program", "folder"] as const;
export type Layout = (typeof layouts)[number];

/** What the generated project holds and what had to be adjusted, for the summary and the project's README. */
export interface ImportReport {
  layout: Layout;
  /** With the service's id, which a Terraform configuration that referenced the policy needs instead. */
  policies: { name: string; id: string; kind: PolicyKind; file: string }[];
  deprecations: { resourceName: string; moduleVersion: string }[];
  /** The folder layout's folders, each one policy set's worth: one kind, the same policy sets. */
  folders: {
    path: string;
    kind: PolicyKind;
    policySetIds: string[];
    policyCount: number;
    /** Descriptions the folder's file cannot hold, by policy name: the program gives them as overrides. */
    descriptions: Record<string, string>;
  }[];
  /** Policies left out of the project, each with the reason and what to do. */
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
