// The local server's SQLite database: the connection, its schema and migrations, prepared statements, transactions,
// and the work that writes after an answer. The tables (one module each, beside this one) run their statements here.

import { DatabaseSync, type SQLInputValue, type StatementSync } from "node:sqlite";
import { errorText } from "../../process/error-text";
import type { Row } from "./records";

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
  identifier TEXT PRIMARY KEY, path TEXT NOT NULL, service_provider TEXT NOT NULL, organizations TEXT);
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
CREATE TABLE IF NOT EXISTS runs (
  id TEXT PRIMARY KEY,
  workspace TEXT NOT NULL REFERENCES workspaces(id),
  created_at TEXT NOT NULL,
  status TEXT NOT NULL,
  message TEXT NOT NULL,
  results TEXT NOT NULL,
  overridden INTEGER NOT NULL DEFAULT 0);
`;

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

/**
 * The database everything the server knows is in. Each change runs in one `BEGIN IMMEDIATE` transaction,
 * which takes the write lock up front: a check followed by a write (e.g. "is the name free?") cannot interleave
 * with another writer, even one in another process on the same file.
 */
export class Database {
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
    // NULL: every organization's VCS connections reach the repository (what servers before this one did).
    this.addMissingColumns("vcs_repositories", { organizations: "TEXT" });
    // NULL: a workspace in no project (every workspace a server before this one seeded).
    this.addMissingColumns("workspaces", { project_id: "TEXT" });
    // 0: a run nobody overrode (every run a server before this one seeded).
    this.addMissingColumns("runs", { overridden: "INTEGER NOT NULL DEFAULT 0" });
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
    // Nothing awaits this work: a failure it does not settle itself is said here, not left to end the process.
    const running = new Promise<void>((done) => setImmediate(done)).then(work).catch((error: unknown) => {
      process.stderr.write(`tfe-governance-server: background work failed: ${errorText(error)}\n`);
    });
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

  run(sql: string, ...params: SQLInputValue[]) {
    return this.statement(sql).run(...params);
  }

  get(sql: string, ...params: SQLInputValue[]): Row | undefined {
    return this.statement(sql).get(...params) as Row | undefined;
  }

  all(sql: string, ...params: SQLInputValue[]): Row[] {
    return this.statement(sql).all(...params) as Row[];
  }
}

/** What each table starts from: the database its statements run in. */
export abstract class Table {
  constructor(protected readonly database: Database) {}

  protected run(sql: string, ...params: SQLInputValue[]) {
    return this.database.run(sql, ...params);
  }

  protected get(sql: string, ...params: SQLInputValue[]): Row | undefined {
    return this.database.get(sql, ...params);
  }

  protected all(sql: string, ...params: SQLInputValue[]): Row[] {
    return this.database.all(sql, ...params);
  }

  protected transaction<T>(work: () => T): T {
    return this.database.transaction(work);
  }
}
