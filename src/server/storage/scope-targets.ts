// The local server's table of workspaces and projects: what sets are scoped to.

import { type ScopeRelationship, scopeRelationships } from "../../contract/policy-sets";

import { Table } from "./database";
import type { ScopeTargetRecord } from "./records";

/** Workspaces and projects: what sets are scoped to. */
export class ScopeTargetsTable extends Table {
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
}
