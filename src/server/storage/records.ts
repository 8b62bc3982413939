// The records the local server stores, as its routes read and write them, and the ids it gives them.

import { randomInt } from "node:crypto";
import type { SQLInputValue } from "node:sqlite";
import type { EnforcementLevel, PolicyKind, PolicySetKind, PolicySortOrder } from "../../contract/policies";
import type { PolicySetVersionStatus, ScopeRelationship } from "../../contract/policy-sets";

export interface TokenRecord {
  token: string;
  organizations: string[];
  managePolicies: boolean;
  manageModules: boolean;
}

export interface OrganizationRecord {
  name: string;
  plus: boolean;
}

/** A set as a seed declares it: the rest takes the service's defaults. */
export interface SeedPolicySet {
  id: string;
  organization: string;
  name: string;
  kind?: PolicySetKind;
}

export interface PolicySetSettings {
  name: string;
  description: string | null;
  global: boolean;
  overridable: boolean | null;
  agentEnabled: boolean;
  policyToolVersion: string;
  /** A set read from version control; null for a set that takes uploads or holds policies. */
  vcsRepo: VcsRepoRecord | null;
  policiesPath: string | null;
  policyUpdatePatterns: string[];
}

/** Where a set reads its versions from, and with which credential. */
export interface VcsRepoRecord {
  identifier: string;
  /** Null: the repository's default branch. */
  branch: string | null;
  ingressSubmodules: boolean;
  oauthTokenId: string | null;
  githubAppInstallationId: string | null;
  /** The provider of the credential's VCS connection: `github`, `gitlab`, ... */
  serviceProvider: string;
}

/** A repository the server can read, as the seed maps it: the identifier a VCS provider gives it, a local git repository. */
export interface VcsRepositoryRecord {
  identifier: string;
  path: string;
  serviceProvider: string;
  /** The organizations whose VCS connections (OAuth tokens) reach it; null: every organization. */
  organizations: string[] | null;
}

/** An OAuth token of an organization's VCS connection, or a GitHub App installation (organization null). */
export interface VcsCredentialRecord {
  id: string;
  organization: string | null;
  serviceProvider: string;
}

export interface PolicySetRecord extends PolicySetSettings {
  id: string;
  organization: string;
  kind: PolicySetKind;
  createdAt: string;
  updatedAt: string;
  policyIds: string[];
  scope: Record<ScopeRelationship, string[]>;
  /** Whether the set holds versions (uploaded folders) rather than individual policies. */
  versioned: boolean;
  currentVersionId: string | null;
  newestVersionId: string | null;
}

export type NewPolicySet = Omit<
  PolicySetRecord,
  "id" | "createdAt" | "updatedAt" | "versioned" | "currentVersionId" | "newestVersionId"
>;

/** A workspace or project: seed records a set can be scoped to. */
export interface ScopeTargetRecord {
  id: string;
  organization: string;
  name: string;
  /** A workspace's project: a set scoped to the project reaches it. */
  projectId?: string | null;
}

/**
 * One policy's result in a run, as the seed gives it: its framework, and for Sentinel whether the run recorded it as
 * a policy check (the older way) or in a task stage.
 */
export interface PolicyResultRecord {
  kind: "sentinel" | "opa" | "tfpolicy";
  via: "task-stage" | "policy-check";
  policySet: string;
  policy: string;
  /** As the framework reports it: sentinel `advisory`, `soft-mandatory`, `hard-mandatory`; OPA `advisory`,
   * `mandatory`; Terraform policy `advisory`, `mandatory_overridable`, `mandatory`. */
  level: string;
  status: "passed" | "failed" | "errored" | "unknown";
  /** Terraform policy: the file that holds the policy; `<policy>.policy.hcl` where the seed names none. */
  fileName?: string;
}

export interface RunRecord {
  id: string;
  workspace: string;
  createdAt: string;
  status: string;
  message: string;
  results: PolicyResultRecord[];
  /**
   * A user overrode the run's failures at overridable levels (Sentinel's soft-mandatory, Terraform policy's
   * mandatory_overridable, an overridable OPA set's mandatory): the run went on past them.
   */
  overridden: boolean;
}

export interface PolicySetVersionRecord {
  id: string;
  policySetId: string;
  status: PolicySetVersionStatus;
  /** `tfe-api` for uploads; the VCS provider's name for a version read from version control. */
  source: string;
  /** The commit a version-control version was read from. */
  ingressAttributes: {
    commitSha: string;
    branch: string;
    identifier: string;
    commitUrl: string;
    /** The set's policies path when it was read (this server's own record: the service shows none). */
    policiesPath?: string;
  } | null;
  errorMessage: string | null;
  createdAt: string;
  updatedAt: string;
  statusTimestamps: Partial<Record<PolicySetVersionStatus, string>>;
}

export interface ParameterRecord {
  id: string;
  policySetId: string;
  key: string;
  value: string;
  sensitive: boolean;
}

export interface PolicySetListQuery {
  organization: string;
  search?: string | undefined;
  kind?: PolicySetKind | undefined;
  versioned?: boolean | undefined;
  limit: number;
  offset: number;
}

export interface PolicyRecord {
  id: string;
  organization: string;
  name: string;
  description: string | null;
  kind: PolicyKind;
  query: string | null;
  enforcementLevel: EnforcementLevel;
  hasCode: boolean;
  updatedAt: string | null;
  policySetIds: string[];
}

export type NewPolicy = Omit<PolicyRecord, "id" | "hasCode" | "updatedAt">;

export interface PolicyChanges {
  description?: string | null;
  query?: string;
  enforcementLevel?: EnforcementLevel;
}

export interface PolicyListQuery {
  organization: string;
  search?: string | undefined;
  kind?: PolicyKind | undefined;
  sort: PolicySortOrder | undefined;
  limit: number;
  offset: number;
}

export interface DeprecationRecord {
  id: number;
  reason: string;
  link: string | null;
}

export interface ModuleRecord {
  id: number;
  organization: string;
  name: string;
  provider: string;
  createdAt: string;
}

export interface ModuleVersionRecord {
  id: number;
  version: string;
  publishedAt: string;
  deprecation: DeprecationRecord | null;
}

export type Row = Record<string, SQLInputValue>;

const idAlphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/** `<prefix>-` and 16 random letters and digits, the shape of the service's ids (e.g. `pol-u3S5p2Uwk21keu1s`). */
export function randomId(prefix: string, length = 16): string {
  let id = `${prefix}-`;
  for (let index = 0; index < length; index++) id += idAlphabet[randomInt(idAlphabet.length)];
  return id;
}
