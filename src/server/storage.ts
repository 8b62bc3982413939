import { randomInt } from "node:crypto";
import { DatabaseSync, type SQLInputValue, type StatementSync } from "node:sqlite";
import {
  type EnforcementLevel,
  type PolicyKind,
  type PolicySetKind,
  type PolicySortOrder,
  policySetKinds,
} from "../contract/policies";
import {
  type PolicySetVersionStatus,
  type ScopeRelationship,
  scopeRelationshipNames,
  scopeRelationships,
} from "../contract/policy-sets";

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

type Row = Record<string, SQLInputValue>;

const schema = `
CREATE TABLE IF NOT EXISTS organizations (name TEXT PRIMARY KEY, plus INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS tokens (
  token TEXT PRIMARY KEY, manage_policies INTEGER NOT NULL, manage_modules INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS token_organizations (
  token TEXT NOT NULL REFERENCES tokens(token) ON DELETE CASCADE,
  organization TEXT NOT NULL REFERENCES organizations(name),
  PRIMARY KEY (token, organization));
CREATE TABLE IF NOT EXISTS policy_sets (
  id TEXT PRIMARY KEY, organization TEXT NOT NULL REFERENCES organizations(name), name TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS workspaces (
  id TEXT PRIMARY KEY, organization TEXT NOT NULL REFERENCES organizations(name), name TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS projects (
  id TEXT PRIMARY KEY, organization TEXT NOT NULL REFERENCES organizations(name), name TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS policy_set_scope (
  policy_set_id TEXT NOT NULL REFERENCES policy_sets(id) ON DELETE CASCADE,
  relationship TEXT NOT NULL,
  target_id TEXT NOT NULL,
  PRIMARY KEY (policy_set_id, relationship, target_id));
CREATE TABLE IF NOT EXISTS policy_set_versions (
  id TEXT PRIMARY KEY,
  policy_set_id TEXT NOT NULL REFERENCES policy_sets(id) ON DELETE CASCADE,
  status TEXT NOT NULL,
  error_message TEXT,
  archive BLOB,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  status_timestamps TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS vcs_repositories (
  identifier TEXT PRIMARY KEY, path TEXT NOT NULL, service_provider TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS vcs_credentials (
  id TEXT PRIMARY KEY, organization TEXT, service_provider TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS policy_set_parameters (
  id TEXT PRIMARY KEY,
  policy_set_id TEXT NOT NULL REFERENCES policy_sets(id) ON DELETE CASCADE,
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  sensitive INTEGER NOT NULL,
  UNIQUE (policy_set_id, key));
CREATE TABLE IF NOT EXISTS policies (
  id TEXT PRIMARY KEY,
  organization TEXT NOT NULL REFERENCES organizations(name),
  name TEXT NOT NULL,
  description TEXT,
  kind TEXT NOT NULL,
  query TEXT,
  enforcement_level TEXT NOT NULL,
  code BLOB,
  created_at TEXT NOT NULL,
  updated_at TEXT,
  UNIQUE (organization, name));
CREATE TABLE IF NOT EXISTS policy_set_policies (
  policy_set_id TEXT NOT NULL REFERENCES policy_sets(id),
  policy_id TEXT NOT NULL REFERENCES policies(id) ON DELETE CASCADE,
  PRIMARY KEY (policy_set_id, policy_id));
CREATE TABLE IF NOT EXISTS modules (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  organization TEXT NOT NULL REFERENCES organizations(name),
  name TEXT NOT NULL,
  provider TEXT NOT NULL,
  created_at TEXT NOT NULL,
  UNIQUE (organization, name, provider));
CREATE TABLE IF NOT EXISTS deprecations (
  id INTEGER PRIMARY KEY AUTOINCREMENT, module_version_id INTEGER NOT NULL, reason TEXT NOT NULL, link TEXT);
CREATE TABLE IF NOT EXISTS module_versions (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  module_id INTEGER NOT NULL REFERENCES modules(id),
  version TEXT NOT NULL,
  published_at TEXT NOT NULL,
  deprecation_id INTEGER REFERENCES deprecations(id),
  UNIQUE (module_id, version));
`;

const policyColumns = `id, organization, name, description, kind, query, enforcement_level,
  code IS NOT NULL AS has_code, updated_at`;

const sortClauses: Record<NonNullable<PolicyListQuery["sort"]>, string> = {
  name: "name ASC",
  "-name": "name DESC",
  "updated-at": "COALESCE(updated_at, created_at) ASC, rowid ASC",
  "-updated-at": "COALESCE(updated_at, created_at) DESC, rowid DESC",
};

const idAlphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/** `<prefix>-` and 16 random letters and digits, the shape of the service's ids (e.g. `pol-u3S5p2Uwk21keu1s`). */
export function randomId(prefix: string, length = 16): string {
  let id = `${prefix}-`;
  for (let index = 0; index < length; index++) id += idAlphabet[randomInt(idAlphabet.length)];
  return id;
}

/**
 * Everything the server knows, in one SQLite database. Each change runs in one `BEGIN IMMEDIATE` transaction,
 * which takes the write lock up front: a check followed by a write (e.g. "is the name free?") cannot interleave
 * with another writer, even one in another process on the same file.
 */
export class Storage {
  private readonly db: DatabaseSync;
  private readonly statements = new Map<string, StatementSync>();

  constructor(file: string) {
    this.db = new DatabaseSync(file);
    this.db.exec("PRAGMA journal_mode = WAL");
    // FULL syncs the WAL at every commit: what a client was told is saved survives a crash of the machine too.
    this.db.exec("PRAGMA synchronous = FULL");
    this.db.exec("PRAGMA foreign_keys = ON");
    this.db.exec("PRAGMA busy_timeout = 5000");
    this.db.exec(schema);
    this.migratePolicySets();
    this.addMissingColumns("policy_set_versions", addedVersionColumns);
    // Servers before this one left a row behind at every re-deprecation and reinstatement.
    this.db.exec(
      "DELETE FROM deprecations WHERE id NOT IN (SELECT deprecation_id FROM module_versions WHERE deprecation_id IS NOT NULL)",
    );
  }

  private migratePolicySets(): void {
    const present = new Set(this.all("PRAGMA table_info(policy_sets)").map((column) => String(column.name)));
    const missing = Object.entries(addedPolicySetColumns).filter(([column]) => !present.has(column));
    if (missing.length === 0) return;
    this.transaction(() => {
      for (const [column, definition] of missing) {
        this.db.exec(`ALTER TABLE policy_sets ADD COLUMN ${column} ${definition}`);
      }
      const now = new Date().toISOString();
      this.run("UPDATE policy_sets SET created_at = ?, updated_at = ? WHERE created_at = ''", now, now);
    });
  }

  /** Columns later servers added to a table, with their defaults, on a database an earlier server wrote. */
  private addMissingColumns(table: string, columns: Record<string, string>): void {
    const present = new Set(this.all(`PRAGMA table_info(${table})`).map((column) => String(column.name)));
    for (const [column, definition] of Object.entries(columns)) {
      if (!present.has(column)) this.db.exec(`ALTER TABLE ${table} ADD COLUMN ${column} ${definition}`);
    }
  }

  private readonly background = new Set<Promise<void>>();

  /** Work that writes after the answer (a version read after its upload): `settle` waits for it. */
  inBackground(work: () => Promise<void>): void {
    const running = new Promise<void>((done) => setImmediate(done)).then(work);
    this.background.add(running);
    void running.finally(() => this.background.delete(running));
  }

  /** Waits for the work `inBackground` started: a server closing first finishes what it told clients it does. */
  async settle(): Promise<void> {
    while (this.background.size > 0) await Promise.allSettled([...this.background]);
  }

  close(): void {
    this.db.close();
  }

  transaction<T>(work: () => T): T {
    this.db.exec("BEGIN IMMEDIATE");
    try {
      const result = work();
      this.db.exec("COMMIT");
      return result;
    } catch (error) {
      this.db.exec("ROLLBACK");
      throw error;
    }
  }

  // Preparing costs more than running for these small statements, so each SQL text is prepared once.
  private statement(sql: string): StatementSync {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  private run(sql: string, ...params: SQLInputValue[]) {
    return this.statement(sql).run(...params);
  }

  private get(sql: string, ...params: SQLInputValue[]): Row | undefined {
    return this.statement(sql).get(...params) as Row | undefined;
  }

  private all(sql: string, ...params: SQLInputValue[]): Row[] {
    return this.statement(sql).all(...params) as Row[];
  }

  // -- organizations and tokens ---------------------------------------------------------------------------------

  addOrganization(organization: OrganizationRecord): void {
    this.transaction(() =>
      this.run(
        "INSERT INTO organizations (name, plus) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET plus = excluded.plus",
        organization.name,
        organization.plus ? 1 : 0,
      ),
    );
  }

  organization(name: string): OrganizationRecord | undefined {
    const row = this.get("SELECT name, plus FROM organizations WHERE name = ?", name);
    return row && { name: String(row.name), plus: row.plus === 1 };
  }

  organizations(): OrganizationRecord[] {
    return this.all("SELECT name, plus FROM organizations ORDER BY name").map((row) => ({
      name: String(row.name),
      plus: row.plus === 1,
    }));
  }

  addToken(token: TokenRecord): void {
    this.transaction(() => {
      this.run(
        `INSERT INTO tokens (token, manage_policies, manage_modules) VALUES (?, ?, ?) ON CONFLICT (token)
         DO UPDATE SET manage_policies = excluded.manage_policies, manage_modules = excluded.manage_modules`,
        token.token,
        token.managePolicies ? 1 : 0,
        token.manageModules ? 1 : 0,
      );
      this.run("DELETE FROM token_organizations WHERE token = ?", token.token);
      for (const organization of token.organizations) {
        this.run("INSERT INTO token_organizations (token, organization) VALUES (?, ?)", token.token, organization);
      }
    });
  }

  token(value: string): TokenRecord | undefined {
    const row = this.get("SELECT token, manage_policies, manage_modules FROM tokens WHERE token = ?", value);
    return row && this.toToken(row);
  }

  tokens(): TokenRecord[] {
    return this.all("SELECT token, manage_policies, manage_modules FROM tokens ORDER BY rowid").map((row) =>
      this.toToken(row),
    );
  }

  private toToken(row: Row): TokenRecord {
    const token = String(row.token);
    return {
      token,
      organizations: this.all("SELECT organization FROM token_organizations WHERE token = ? ORDER BY 1", token).map(
        (entry) => String(entry.organization),
      ),
      managePolicies: row.manage_policies === 1,
      manageModules: row.manage_modules === 1,
    };
  }

  // -- policy sets ------------------------------------------------------------------------------------------------

  /** A set a seed declares: created with the service's defaults, or renamed when it is there already. */
  addPolicySet(policySet: SeedPolicySet): void {
    const now = new Date().toISOString();
    this.transaction(() =>
      this.run(
        `INSERT INTO policy_sets (id, organization, name, kind, agent_enabled, overridable, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET name = excluded.name`,
        policySet.id,
        policySet.organization,
        policySet.name,
        policySet.kind ?? "sentinel",
        // The service's defaults: an OPA set runs in the agent, and is not overridable.
        policySet.kind === "opa" ? 1 : 0,
        policySet.kind === "opa" ? 0 : null,
        now,
        now,
      ),
    );
  }

  /** Creates the set, or answers `"name-taken"` when the organization has one of that name already. */
  createPolicySet(policySet: NewPolicySet): PolicySetRecord | "name-taken" {
    return this.transaction(() => {
      if (this.policySetNamed(policySet.organization, policySet.name)) return "name-taken";
      const id = randomId("polset");
      const now = new Date().toISOString();
      this.run(
        `INSERT INTO policy_sets (id, organization, kind, name, description, global, overridable, agent_enabled,
         policy_tool_version, vcs_repo, policies_path, policy_update_patterns, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        id,
        policySet.organization,
        policySet.kind,
        ...settingValues(policySet),
        now,
        now,
      );
      this.joinPolicies(id, policySet.policyIds);
      for (const relationship of scopeRelationshipNames) {
        this.writeScope(id, relationship, policySet.scope[relationship], "add");
      }
      return this.policySet(id)!;
    });
  }

  private policySetNamed(organization: string, name: string): Row | undefined {
    return this.get("SELECT id FROM policy_sets WHERE organization = ? AND name = ?", organization, name);
  }

  policySet(id: string): PolicySetRecord | undefined {
    const row = this.get(`SELECT ${policySetColumns} FROM policy_sets WHERE id = ?`, id);
    return row && this.toPolicySet(row);
  }

  policySets(ids: readonly string[]): PolicySetRecord[] {
    return ids.flatMap((id) => {
      const policySet = this.policySet(id);
      return policySet ? [policySet] : [];
    });
  }

  listPolicySets(query: PolicySetListQuery): { items: PolicySetRecord[]; totalCount: number } {
    const { conditions, params } = nameAndKindConditions(query);
    if (query.versioned !== undefined) {
      conditions.push(
        `${query.versioned ? "" : "NOT "}EXISTS (SELECT 1 FROM policy_set_versions v WHERE v.policy_set_id = policy_sets.id)`,
      );
    }
    const where = conditions.join(" AND ");
    const totalCount = Number(this.get(`SELECT COUNT(*) AS total FROM policy_sets WHERE ${where}`, ...params)?.total);
    const rows = this.all(
      `SELECT ${policySetColumns} FROM policy_sets WHERE ${where} ORDER BY rowid LIMIT ? OFFSET ?`,
      ...params,
      query.limit,
      query.offset,
    );
    return { items: rows.map((row) => this.toPolicySet(row)), totalCount };
  }

  /** Changes the settings given; answers `"name-taken"` for a name another set of the organization has. */
  updatePolicySet(id: string, changes: Partial<PolicySetSettings>): PolicySetRecord | "name-taken" | undefined {
    return this.transaction(() => {
      const current = this.policySet(id);
      if (!current) return undefined;
      const next = { ...current, ...definedOnly(changes) };
      const holder = next.name === current.name ? undefined : this.policySetNamed(current.organization, next.name);
      if (holder) return "name-taken";
      this.run(
        `UPDATE policy_sets SET name = ?, description = ?, global = ?, overridable = ?, agent_enabled = ?,
         policy_tool_version = ?, vcs_repo = ?, policies_path = ?, policy_update_patterns = ?, updated_at = ?
         WHERE id = ?`,
        ...settingValues(next),
        new Date().toISOString(),
        id,
      );
      // A set made global applies everywhere: its workspaces and projects no longer say anything.
      if (next.global) {
        this.run(
          "DELETE FROM policy_set_scope WHERE policy_set_id = ? AND relationship IN ('workspaces', 'projects')",
          id,
        );
      }
      return this.policySet(id);
    });
  }

  deletePolicySet(id: string): boolean {
    return this.transaction(() => {
      this.run("DELETE FROM policy_set_policies WHERE policy_set_id = ?", id);
      return Number(this.run("DELETE FROM policy_sets WHERE id = ?", id).changes) > 0;
    });
  }

  /**
   * Policies join or leave a set, as the set's `relationships/policies` asks. Joining twice and leaving a set one is
   * not in change nothing. The policies' own rows (and their `updated-at`) stay as they are.
   */
  changeSetMembership(policySetId: string, policyIds: readonly string[], change: "join" | "leave"): void {
    this.transaction(() => {
      if (change === "join") this.joinPolicies(policySetId, policyIds);
      else {
        for (const policyId of policyIds) {
          this.run("DELETE FROM policy_set_policies WHERE policy_set_id = ? AND policy_id = ?", policySetId, policyId);
        }
      }
    });
  }

  private joinPolicies(policySetId: string, policyIds: readonly string[]): void {
    for (const policyId of policyIds) {
      this.run(
        "INSERT INTO policy_set_policies (policy_set_id, policy_id) VALUES (?, ?) ON CONFLICT DO NOTHING",
        policySetId,
        policyId,
      );
    }
  }

  /** Workspaces or projects join or leave one of a set's scope relationships; repeats change nothing. */
  changeScope(policySetId: string, relationship: ScopeRelationship, ids: readonly string[], change: "add" | "remove") {
    this.transaction(() => this.writeScope(policySetId, relationship, ids, change));
  }

  private writeScope(
    policySetId: string,
    relationship: ScopeRelationship,
    ids: readonly string[],
    change: "add" | "remove",
  ): void {
    const sql =
      change === "add"
        ? "INSERT INTO policy_set_scope (policy_set_id, relationship, target_id) VALUES (?, ?, ?) ON CONFLICT DO NOTHING"
        : "DELETE FROM policy_set_scope WHERE policy_set_id = ? AND relationship = ? AND target_id = ?";
    for (const id of ids) this.run(sql, policySetId, relationship, id);
  }

  private toPolicySet(row: Row): PolicySetRecord {
    const id = String(row.id);
    const scope = Object.fromEntries(scopeRelationshipNames.map((relationship) => [relationship, [] as string[]]));
    for (const entry of this.all(
      "SELECT relationship, target_id FROM policy_set_scope WHERE policy_set_id = ? ORDER BY rowid",
      id,
    )) {
      scope[String(entry.relationship)]?.push(String(entry.target_id));
    }
    const versions = this.get(
      `SELECT (SELECT id FROM policy_set_versions WHERE policy_set_id = ?1 ORDER BY rowid DESC LIMIT 1) AS newest,
       (SELECT id FROM policy_set_versions WHERE policy_set_id = ?1 AND status = 'ready' ORDER BY rowid DESC LIMIT 1)
       AS current`,
      id,
    );
    return {
      id,
      organization: String(row.organization),
      name: String(row.name),
      description: row.description === null ? null : String(row.description),
      kind: policySetKinds.find((kind) => kind === row.kind) ?? "sentinel",
      global: row.global === 1,
      overridable: row.overridable === null ? null : row.overridable === 1,
      agentEnabled: row.agent_enabled === 1,
      policyToolVersion: String(row.policy_tool_version),
      vcsRepo: row.vcs_repo === null ? null : (JSON.parse(String(row.vcs_repo)) as VcsRepoRecord),
      policiesPath: row.policies_path === null ? null : String(row.policies_path),
      policyUpdatePatterns: JSON.parse(String(row.policy_update_patterns)) as string[],
      createdAt: String(row.created_at),
      updatedAt: String(row.updated_at),
      policyIds: this.all("SELECT policy_id FROM policy_set_policies WHERE policy_set_id = ? ORDER BY rowid", id).map(
        (entry) => String(entry.policy_id),
      ),
      scope: scope as Record<ScopeRelationship, string[]>,
      versioned: versions?.newest !== null && versions?.newest !== undefined,
      currentVersionId: versions?.current == null ? null : String(versions.current),
      newestVersionId: versions?.newest == null ? null : String(versions.newest),
    };
  }

  // -- workspaces and projects: what sets are scoped to -----------------------------------------------------------

  addScopeTarget(table: "workspaces" | "projects", target: ScopeTargetRecord): void {
    this.transaction(() =>
      this.run(
        `INSERT INTO ${table} (id, organization, name) VALUES (?, ?, ?) ON CONFLICT (id) DO UPDATE SET name = excluded.name`,
        target.id,
        target.organization,
        target.name,
      ),
    );
  }

  /** One page of an organization's workspaces or projects, by name. */
  listScopeTargets(
    table: "workspaces" | "projects",
    query: { organization: string; limit: number; offset: number },
  ): { items: ScopeTargetRecord[]; totalCount: number } {
    const rows = this.all(
      `SELECT id, organization, name FROM ${table} WHERE organization = ? ORDER BY name, id LIMIT ? OFFSET ?`,
      query.organization,
      query.limit,
      query.offset,
    );
    const count = this.get(`SELECT COUNT(*) AS count FROM ${table} WHERE organization = ?`, query.organization);
    return {
      items: rows.map((row) => ({
        id: String(row.id),
        organization: String(row.organization),
        name: String(row.name),
      })),
      totalCount: Number(count?.count ?? 0),
    };
  }

  scopeTarget(relationship: ScopeRelationship, id: string): ScopeTargetRecord | undefined {
    const row = this.get(`SELECT id, organization, name FROM ${scopeRelationships[relationship]} WHERE id = ?`, id);
    return row && { id: String(row.id), organization: String(row.organization), name: String(row.name) };
  }

  // -- version control: the repositories sets read from, and the credentials they read with -----------------------

  addVcsRepository(repository: VcsRepositoryRecord): void {
    this.run(
      `INSERT INTO vcs_repositories (identifier, path, service_provider) VALUES (?, ?, ?)
       ON CONFLICT (identifier) DO UPDATE SET path = excluded.path, service_provider = excluded.service_provider`,
      repository.identifier,
      repository.path,
      repository.serviceProvider,
    );
  }

  vcsRepository(identifier: string): VcsRepositoryRecord | undefined {
    const row = this.get(
      "SELECT identifier, path, service_provider FROM vcs_repositories WHERE identifier = ?",
      identifier,
    );
    return (
      row && {
        identifier: String(row.identifier),
        path: String(row.path),
        serviceProvider: String(row.service_provider),
      }
    );
  }

  vcsRepositories(): VcsRepositoryRecord[] {
    return this.all("SELECT identifier, path, service_provider FROM vcs_repositories ORDER BY identifier").map(
      (row) => ({
        identifier: String(row.identifier),
        path: String(row.path),
        serviceProvider: String(row.service_provider),
      }),
    );
  }

  vcsCredentials(): VcsCredentialRecord[] {
    return this.all("SELECT id, organization, service_provider FROM vcs_credentials ORDER BY id").map((row) => ({
      id: String(row.id),
      organization: row.organization === null ? null : String(row.organization),
      serviceProvider: String(row.service_provider),
    }));
  }

  addVcsCredential(credential: VcsCredentialRecord): void {
    this.run(
      `INSERT INTO vcs_credentials (id, organization, service_provider) VALUES (?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET organization = excluded.organization, service_provider = excluded.service_provider`,
      credential.id,
      credential.organization,
      credential.serviceProvider,
    );
  }

  vcsCredential(id: string): VcsCredentialRecord | undefined {
    const row = this.get("SELECT id, organization, service_provider FROM vcs_credentials WHERE id = ?", id);
    return (
      row && {
        id: String(row.id),
        organization: row.organization === null ? null : String(row.organization),
        serviceProvider: String(row.service_provider),
      }
    );
  }

  /** The sets that read from `identifier`, for a push to it. */
  policySetsReading(identifier: string): PolicySetRecord[] {
    return this.all(`SELECT ${policySetColumns} FROM policy_sets WHERE vcs_repo IS NOT NULL ORDER BY rowid`)
      .map((row) => this.toPolicySet(row))
      .filter((policySet) => policySet.vcsRepo?.identifier === identifier);
  }

  // -- policy set versions ----------------------------------------------------------------------------------------

  /**
   * A new version: pending its upload, or, read from version control, ingressing from the commit named (the
   * service reads the commit at once).
   */
  createVersion(
    policySetId: string,
    fromVcs?: { source: string; ingressAttributes: NonNullable<PolicySetVersionRecord["ingressAttributes"]> },
  ): PolicySetVersionRecord {
    return this.transaction(() => {
      const id = randomId("polsetver");
      const now = new Date().toISOString();
      this.run(
        `INSERT INTO policy_set_versions (id, policy_set_id, status, source, ingress_attributes, created_at, updated_at,
         status_timestamps) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
        id,
        policySetId,
        fromVcs ? "ingressing" : "pending",
        fromVcs?.source ?? "tfe-api",
        fromVcs ? JSON.stringify(fromVcs.ingressAttributes) : null,
        now,
        now,
        JSON.stringify(fromVcs ? { pending: now, ingressing: now } : { pending: now }),
      );
      return this.version(id)!;
    });
  }

  version(id: string): PolicySetVersionRecord | undefined {
    const row = this.get(
      `SELECT id, policy_set_id, status, source, ingress_attributes, error_message, created_at, updated_at,
       status_timestamps FROM policy_set_versions WHERE id = ?`,
      id,
    );
    return (
      row && {
        id: String(row.id),
        policySetId: String(row.policy_set_id),
        status: String(row.status) as PolicySetVersionStatus,
        source: String(row.source),
        ingressAttributes: row.ingress_attributes === null ? null : JSON.parse(String(row.ingress_attributes)),
        errorMessage: row.error_message === null ? null : String(row.error_message),
        createdAt: String(row.created_at),
        updatedAt: String(row.updated_at),
        statusTimestamps: JSON.parse(String(row.status_timestamps)),
      }
    );
  }

  /** Versions whose archive arrived but was not read to the end: a server killed while ingressing left them. */
  ingressingVersions(): string[] {
    return this.all("SELECT id FROM policy_set_versions WHERE status = 'ingressing' ORDER BY rowid").map((row) =>
      String(row.id),
    );
  }

  /**
   * Stores the archive of a pending version and marks it ingressing, in one transaction: a version is never
   * ingressing without its archive. Answers false when the version is gone or has had its upload.
   */
  storeArchive(id: string, archive: Uint8Array): boolean {
    return this.transaction(() => {
      const now = new Date().toISOString();
      const version = this.version(id);
      if (version?.status !== "pending") return false;
      this.run(
        "UPDATE policy_set_versions SET archive = ?, status = 'ingressing', updated_at = ?, status_timestamps = ? WHERE id = ?",
        archive,
        now,
        JSON.stringify({ ...version.statusTimestamps, ingressing: now }),
        id,
      );
      return true;
    });
  }

  archive(id: string): Uint8Array | undefined {
    const row = this.get("SELECT archive FROM policy_set_versions WHERE id = ?", id);
    return row?.archive instanceof Uint8Array ? row.archive : undefined;
  }

  /** The end of ingress: `ready`, or `errored` with the reason a user reads. */
  /**
   * Settles a version, once: `ready` only from `ingressing`, `errored` from `pending` (an archive that could not be
   * stored) or `ingressing`. A version already settled keeps its status, so a late answer to a second upload
   * cannot turn a ready version errored. Answers whether it moved.
   */
  finishVersion(id: string, outcome: { status: "ready" } | { status: "errored"; errorMessage: string }): boolean {
    return this.transaction(() => {
      const version = this.version(id);
      const from = outcome.status === "ready" ? ["ingressing"] : ["pending", "ingressing"];
      if (!version || !from.includes(version.status)) return false;
      const now = new Date().toISOString();
      this.run(
        "UPDATE policy_set_versions SET status = ?, error_message = ?, updated_at = ?, status_timestamps = ? WHERE id = ?",
        outcome.status,
        outcome.status === "errored" ? outcome.errorMessage : null,
        now,
        JSON.stringify({ ...version.statusTimestamps, [outcome.status]: now }),
        id,
      );
      return true;
    });
  }

  // -- policy set parameters --------------------------------------------------------------------------------------

  /** Creates the parameter, or answers `"key-taken"` when the set has one of that key. */
  createParameter(parameter: Omit<ParameterRecord, "id">): ParameterRecord | "key-taken" {
    return this.transaction(() => {
      if (
        this.get(
          "SELECT 1 FROM policy_set_parameters WHERE policy_set_id = ? AND key = ?",
          parameter.policySetId,
          parameter.key,
        )
      ) {
        return "key-taken";
      }
      const id = randomId("var");
      this.run(
        "INSERT INTO policy_set_parameters (id, policy_set_id, key, value, sensitive) VALUES (?, ?, ?, ?, ?)",
        id,
        parameter.policySetId,
        parameter.key,
        parameter.value,
        parameter.sensitive ? 1 : 0,
      );
      return this.parameter(id)!;
    });
  }

  parameter(id: string): ParameterRecord | undefined {
    const row = this.get("SELECT id, policy_set_id, key, value, sensitive FROM policy_set_parameters WHERE id = ?", id);
    return row && toParameter(row);
  }

  parameters(policySetId: string): ParameterRecord[] {
    return this.all(
      "SELECT id, policy_set_id, key, value, sensitive FROM policy_set_parameters WHERE policy_set_id = ? ORDER BY rowid",
      policySetId,
    ).map(toParameter);
  }

  updateParameter(
    id: string,
    changes: Partial<Pick<ParameterRecord, "key" | "value" | "sensitive">>,
  ): ParameterRecord | "key-taken" | undefined {
    return this.transaction(() => {
      const current = this.parameter(id);
      if (!current) return undefined;
      const next = { ...current, ...definedOnly(changes) };
      if (
        next.key !== current.key &&
        this.get(
          "SELECT 1 FROM policy_set_parameters WHERE policy_set_id = ? AND key = ?",
          current.policySetId,
          next.key,
        )
      ) {
        return "key-taken";
      }
      this.run(
        "UPDATE policy_set_parameters SET key = ?, value = ?, sensitive = ? WHERE id = ?",
        next.key,
        next.value,
        next.sensitive ? 1 : 0,
        id,
      );
      return this.parameter(id);
    });
  }

  deleteParameter(id: string): boolean {
    return this.transaction(() => Number(this.run("DELETE FROM policy_set_parameters WHERE id = ?", id).changes) > 0);
  }

  // -- policies ---------------------------------------------------------------------------------------------------

  /** Creates the policy, or answers `"name-taken"` when the organization already has one of that name. */
  createPolicy(policy: NewPolicy): PolicyRecord | "name-taken" {
    return this.transaction(() => {
      if (this.get("SELECT 1 FROM policies WHERE organization = ? AND name = ?", policy.organization, policy.name)) {
        return "name-taken";
      }
      const id = randomId("pol");
      this.run(
        `INSERT INTO policies (id, organization, name, description, kind, query, enforcement_level, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
        id,
        policy.organization,
        policy.name,
        policy.description,
        policy.kind,
        policy.query,
        policy.enforcementLevel,
        new Date().toISOString(),
      );
      for (const policySetId of policy.policySetIds) {
        this.run("INSERT INTO policy_set_policies (policy_set_id, policy_id) VALUES (?, ?)", policySetId, id);
      }
      return this.policy(id)!;
    });
  }

  policiesById(ids: readonly string[]): PolicyRecord[] {
    return ids.flatMap((id) => {
      const policy = this.policy(id);
      return policy ? [policy] : [];
    });
  }

  policy(id: string): PolicyRecord | undefined {
    const row = this.get(`SELECT ${policyColumns} FROM policies WHERE id = ?`, id);
    return row && this.toPolicy(row);
  }

  updatePolicy(id: string, changes: PolicyChanges): PolicyRecord | undefined {
    return this.transaction(() => {
      const current = this.policy(id);
      if (!current) return undefined;
      this.run(
        `UPDATE policies SET description = ?, query = ?, enforcement_level = ?,
         updated_at = CASE WHEN updated_at IS NULL THEN NULL ELSE ? END WHERE id = ?`,
        changes.description === undefined ? current.description : changes.description,
        changes.query ?? current.query,
        changes.enforcementLevel ?? current.enforcementLevel,
        new Date().toISOString(),
        id,
      );
      return this.policy(id);
    });
  }

  deletePolicy(id: string): boolean {
    return this.transaction(() => Number(this.run("DELETE FROM policies WHERE id = ?", id).changes) > 0);
  }

  /** Replaces the policy's code in one statement, so a reader sees the old bytes or the new, never a mix. */
  storeCode(id: string, code: Uint8Array): boolean {
    return this.transaction(
      () =>
        Number(
          this.run("UPDATE policies SET code = ?, updated_at = ? WHERE id = ?", code, new Date().toISOString(), id)
            .changes,
        ) > 0,
    );
  }

  /** The policy's code; `undefined` when the policy does not exist or has no code yet. */
  code(id: string): Uint8Array | undefined {
    const row = this.get("SELECT code FROM policies WHERE id = ?", id);
    return row?.code instanceof Uint8Array ? row.code : undefined;
  }

  listPolicies(query: PolicyListQuery): { items: PolicyRecord[]; totalCount: number } {
    const { conditions, params } = nameAndKindConditions(query);
    const where = conditions.join(" AND ");
    const order = query.sort ? sortClauses[query.sort] : "rowid ASC";
    const totalCount = Number(this.get(`SELECT COUNT(*) AS total FROM policies WHERE ${where}`, ...params)?.total);
    const rows = this.all(
      `SELECT ${policyColumns} FROM policies WHERE ${where} ORDER BY ${order} LIMIT ? OFFSET ?`,
      ...params,
      query.limit,
      query.offset,
    );
    return { items: rows.map((row) => this.toPolicy(row)), totalCount };
  }

  private toPolicy(row: Row): PolicyRecord {
    const id = String(row.id);
    return {
      id,
      organization: String(row.organization),
      name: String(row.name),
      description: row.description === null ? null : String(row.description),
      kind: row.kind === "opa" ? "opa" : "sentinel",
      query: row.query === null ? null : String(row.query),
      enforcementLevel: String(row.enforcement_level) as EnforcementLevel,
      hasCode: row.has_code === 1,
      updatedAt: row.updated_at === null ? null : String(row.updated_at),
      policySetIds: this.all(
        "SELECT policy_set_id FROM policy_set_policies WHERE policy_id = ? ORDER BY policy_set_id",
        id,
      ).map((entry) => String(entry.policy_set_id)),
    };
  }

  // -- registry modules -------------------------------------------------------------------------------------------

  createModule(organization: string, name: string, provider: string): ModuleRecord | "exists" {
    return this.transaction(() => {
      if (this.module(organization, name, provider)) return "exists";
      this.run(
        "INSERT INTO modules (organization, name, provider, created_at) VALUES (?, ?, ?, ?)",
        organization,
        name,
        provider,
        new Date().toISOString(),
      );
      return this.module(organization, name, provider)!;
    });
  }

  module(organization: string, name: string, provider: string): ModuleRecord | undefined {
    const row = this.get(
      "SELECT id, organization, name, provider, created_at FROM modules WHERE organization = ? AND name = ? AND provider = ?",
      organization,
      name,
      provider,
    );
    return (
      row && {
        id: Number(row.id),
        organization: String(row.organization),
        name: String(row.name),
        provider: String(row.provider),
        createdAt: String(row.created_at),
      }
    );
  }

  createModuleVersion(moduleId: number, version: string): ModuleVersionRecord | "exists" {
    return this.transaction(() => {
      if (this.moduleVersion(moduleId, version)) return "exists";
      this.run(
        "INSERT INTO module_versions (module_id, version, published_at) VALUES (?, ?, ?)",
        moduleId,
        version,
        new Date().toISOString(),
      );
      return this.moduleVersion(moduleId, version)!;
    });
  }

  moduleVersion(moduleId: number, version: string): ModuleVersionRecord | undefined {
    const row = this.get(`${moduleVersionSelect} WHERE v.module_id = ? AND v.version = ?`, moduleId, version);
    return row && toModuleVersion(row);
  }

  moduleVersions(moduleId: number): ModuleVersionRecord[] {
    return this.all(`${moduleVersionSelect} WHERE v.module_id = ? ORDER BY v.id`, moduleId).map(toModuleVersion);
  }

  deprecate(moduleVersionId: number, reason: string, link: string | null): DeprecationRecord {
    return this.transaction(() => {
      const id = Number(
        this.run(
          "INSERT INTO deprecations (module_version_id, reason, link) VALUES (?, ?, ?)",
          moduleVersionId,
          reason,
          link,
        ).lastInsertRowid,
      );
      this.run("UPDATE module_versions SET deprecation_id = ? WHERE id = ?", id, moduleVersionId);
      this.run("DELETE FROM deprecations WHERE module_version_id = ? AND id <> ?", moduleVersionId, id);
      return { id, reason, link };
    });
  }

  undeprecate(moduleVersionId: number): void {
    this.transaction(() => {
      this.run("UPDATE module_versions SET deprecation_id = NULL WHERE id = ?", moduleVersionId);
      this.run("DELETE FROM deprecations WHERE module_version_id = ?", moduleVersionId);
    });
  }
}

const moduleVersionSelect = `SELECT v.id, v.version, v.published_at, d.id AS deprecation_id, d.reason, d.link
  FROM module_versions v LEFT JOIN deprecations d ON d.id = v.deprecation_id`;

function toModuleVersion(row: Row): ModuleVersionRecord {
  return {
    id: Number(row.id),
    version: String(row.version),
    publishedAt: String(row.published_at),
    deprecation:
      row.deprecation_id === null
        ? null
        : {
            id: Number(row.deprecation_id),
            reason: String(row.reason),
            link: row.link === null ? null : String(row.link),
          },
  };
}

const policySetColumns = `id, organization, name, description, kind, global, overridable, agent_enabled,
  policy_tool_version, vcs_repo, policies_path, policy_update_patterns, created_at, updated_at`;

/** The filters policies and sets share: the organization, a part of the name, the kind. */
function nameAndKindConditions(query: {
  organization: string;
  search?: string | undefined;
  kind?: PolicySetKind | undefined;
}) {
  const conditions = ["organization = ?"];
  const params: SQLInputValue[] = [query.organization];
  if (query.search) {
    conditions.push("name LIKE ? ESCAPE '\\'");
    params.push(`%${query.search.replace(/[\\%_]/g, (character) => `\\${character}`)}%`);
  }
  if (query.kind) {
    conditions.push("kind = ?");
    params.push(query.kind);
  }
  return { conditions, params };
}

/** The changes that say something: a member left undefined keeps the stored value. */
function definedOnly<T extends object>(changes: T): Partial<T> {
  return Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined)) as Partial<T>;
}

/** A set's settings as the columns name, description, global, overridable, agent_enabled, policy_tool_version. */
function settingValues(settings: PolicySetSettings): SQLInputValue[] {
  const overridable = settings.overridable === null ? null : settings.overridable ? 1 : 0;
  return [
    settings.name,
    settings.description,
    settings.global ? 1 : 0,
    overridable,
    settings.agentEnabled ? 1 : 0,
    settings.policyToolVersion,
    settings.vcsRepo === null ? null : JSON.stringify(settings.vcsRepo),
    settings.policiesPath,
    JSON.stringify(settings.policyUpdatePatterns),
  ];
}

function toParameter(row: Row): ParameterRecord {
  return {
    id: String(row.id),
    policySetId: String(row.policy_set_id),
    key: String(row.key),
    value: String(row.value),
    sensitive: row.sensitive === 1,
  };
}

/**
 * Columns later servers added to `policy_sets`; a database from an earlier one gets them with the service's
 * defaults, so its sets keep working.
 */
const addedPolicySetColumns: Record<string, string> = {
  description: "TEXT",
  kind: "TEXT NOT NULL DEFAULT 'sentinel'",
  global: "INTEGER NOT NULL DEFAULT 0",
  overridable: "INTEGER",
  agent_enabled: "INTEGER NOT NULL DEFAULT 0",
  policy_tool_version: "TEXT NOT NULL DEFAULT 'latest'",
  created_at: "TEXT NOT NULL DEFAULT ''",
  updated_at: "TEXT NOT NULL DEFAULT ''",
  vcs_repo: "TEXT",
  policies_path: "TEXT",
  policy_update_patterns: "TEXT NOT NULL DEFAULT '[]'",
};

const addedVersionColumns: Record<string, string> = {
  source: "TEXT NOT NULL DEFAULT 'tfe-api'",
  ingress_attributes: "TEXT",
};
