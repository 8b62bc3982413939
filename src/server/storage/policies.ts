// The local server's table of policies and their code.

import type { EnforcementLevel } from "../../contract/policies";

import { Table } from "./database";
import {
  type NewPolicy,
  type PolicyChanges,
  type PolicyListQuery,
  type PolicyRecord,
  type Row,
  randomId,
} from "./records";
import { nameAndKindConditions, policyColumns, sortClauses } from "./rows";

/** Policies and their code. */
export class PoliciesTable extends Table {
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
}
