// The local server's table of workspaces and projects: what sets are scoped to.

import { type ScopeRelationship, scopeRelationships } from "../../contract/policy-sets";

import { Table } from "./database";
import type { Row, ScopeTargetRecord } from "./records";

/** Workspaces and projects: what sets are scoped to. */
export class ScopeTargetsTable extends Table {
  addScopeTarget(table: "workspaces" | "projects", target: ScopeTargetRecord): void {
    this.transaction(() => {
      this.run(
        `INSERT INTO ${table} (id, organization, name) VALUES (?, ?, ?) ON CONFLICT (id) DO UPDATE SET name = excluded.name`,
        target.id,
        target.organization,
        target.name,
      );
      if (table === "workspaces")
        this.run("UPDATE workspaces SET project_id = ? WHERE id = ?", target.projectId ?? null, target.id);
    });
  }

  /** One page of an organization's workspaces or projects, by name. */
  listScopeTargets(
    table: "workspaces" | "projects",
    query: { organization: string; limit: number; offset: number },
  ): { items: ScopeTargetRecord[]; totalCount: number } {
    const rows = this.all(
      `SELECT ${columnsOf(table)} FROM ${table} WHERE organization = ? ORDER BY name, id LIMIT ? OFFSET ?`,
      query.organization,
      query.limit,
      query.offset,
    );
    const count = this.get(`SELECT COUNT(*) AS count FROM ${table} WHERE organization = ?`, query.organization);
    return { items: rows.map(scopeTargetOf), totalCount: Number(count?.count ?? 0) };
  }

  scopeTarget(relationship: ScopeRelationship, id: string): ScopeTargetRecord | undefined {
    const table = scopeRelationships[relationship];
    const row = this.get(`SELECT ${columnsOf(table)} FROM ${table} WHERE id = ?`, id);
    return row && scopeTargetOf(row);
  }
}

const columnsOf = (table: "workspaces" | "projects") =>
  table === "workspaces" ? "id, organization, name, project_id" : "id, organization, name";

function scopeTargetOf(row: Row): ScopeTargetRecord {
  const target: ScopeTargetRecord = {
    id: String(row.id),
    organization: String(row.organization),
    name: String(row.name),
  };
  if (row.project_id !== undefined) target.projectId = row.project_id === null ? null : String(row.project_id);
  return target;
}
