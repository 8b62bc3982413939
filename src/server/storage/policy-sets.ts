// The local server's table of policy sets: their settings, the policies they hold and what they are scoped to.

import { policySetKinds } from "../../contract/policies";
import { type ScopeRelationship, scopeRelationshipNames } from "../../contract/policy-sets";

import { Table } from "./database";
import {
  type NewPolicySet,
  type PolicySetListQuery,
  type PolicySetRecord,
  type PolicySetSettings,
  type Row,
  randomId,
  type SeedPolicySet,
  type VcsRepoRecord,
} from "./records";
import { definedOnly, nameAndKindConditions, policySetColumns, settingValues } from "./rows";

/** Policy sets: their settings, the policies they hold and what they are scoped to. */
export class PolicySetsTable extends Table {
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

  /** The sets that read from `identifier`, for a push to it. */
  policySetsReading(identifier: string): PolicySetRecord[] {
    return this.all(`SELECT ${policySetColumns} FROM policy_sets WHERE vcs_repo IS NOT NULL ORDER BY rowid`)
      .map((row) => this.toPolicySet(row))
      .filter((policySet) => policySet.vcsRepo?.identifier === identifier);
  }
}
