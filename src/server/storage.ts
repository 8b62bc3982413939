import { randomInt } from "node:crypto";
import { DatabaseSync, type SQLInputValue, type StatementSync } from "node:sqlite";
import type { EnforcementLevel, PolicyKind, PolicySortOrder } from "../contract/policies";

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

export interface PolicySetRecord {
  id: string;
  organization: string;
  name: string;
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
    // Servers before this one left a row behind at every re-deprecation and reinstatement.
    this.db.exec(
      "DELETE FROM deprecations WHERE id NOT IN (SELECT deprecation_id FROM module_versions WHERE deprecation_id IS NOT NULL)",
    );
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

  addPolicySet(policySet: PolicySetRecord): void {
    this.transaction(() =>
      this.run(
        "INSERT INTO policy_sets (id, organization, name) VALUES (?, ?, ?) ON CONFLICT (id) DO UPDATE SET name = excluded.name",
        policySet.id,
        policySet.organization,
        policySet.name,
      ),
    );
  }

  policySets(ids: readonly string[]): PolicySetRecord[] {
    return ids.flatMap((id) => {
      const row = this.get("SELECT id, organization, name FROM policy_sets WHERE id = ?", id);
      return row ? [{ id: String(row.id), organization: String(row.organization), name: String(row.name) }] : [];
    });
  }

  /**
   * Policies join or leave a set, as the set's `relationships/policies` asks. Joining twice and leaving a set one is
   * not in change nothing. The policies' own rows (and their `updated-at`) stay as they are.
   */
  changeSetMembership(policySetId: string, policyIds: readonly string[], change: "join" | "leave"): void {
    this.transaction(() => {
      for (const policyId of policyIds) {
        if (change === "join") {
          this.run(
            "INSERT INTO policy_set_policies (policy_set_id, policy_id) VALUES (?, ?) ON CONFLICT DO NOTHING",
            policySetId,
            policyId,
          );
        } else {
          this.run("DELETE FROM policy_set_policies WHERE policy_set_id = ? AND policy_id = ?", policySetId, policyId);
        }
      }
    });
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
