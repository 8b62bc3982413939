// SQL fragments and the mappings between rows and records that more than one table uses: no statement runs here.

import type { SQLInputValue } from "node:sqlite";
import type { PolicySetKind } from "../../contract/policies";
import type { ModuleVersionRecord, ParameterRecord, PolicyListQuery, PolicySetSettings, Row } from "./records";

export const policyColumns = `id, organization, name, description, kind, query, enforcement_level,
  code IS NOT NULL AS has_code, updated_at`;

export const sortClauses: Record<NonNullable<PolicyListQuery["sort"]>, string> = {
  name: "name ASC",
  "-name": "name DESC",
  "updated-at": "COALESCE(updated_at, created_at) ASC, rowid ASC",
  "-updated-at": "COALESCE(updated_at, created_at) DESC, rowid DESC",
};

export const moduleVersionSelect = `SELECT v.id, v.version, v.published_at, d.id AS deprecation_id, d.reason, d.link
  FROM module_versions v LEFT JOIN deprecations d ON d.id = v.deprecation_id`;

export function toModuleVersion(row: Row): ModuleVersionRecord {
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

export const policySetColumns = `id, organization, name, description, kind, global, overridable, agent_enabled,
  policy_tool_version, vcs_repo, policies_path, policy_update_patterns, created_at, updated_at`;

/** The filters policies and sets share: the organization, a part of the name, the kind. */
export function nameAndKindConditions(query: {
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
export function definedOnly<T extends object>(changes: T): Partial<T> {
  return Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined)) as Partial<T>;
}

/** A set's settings as the columns name, description, global, overridable, agent_enabled, policy_tool_version. */
export function settingValues(settings: PolicySetSettings): SQLInputValue[] {
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

export function toParameter(row: Row): ParameterRecord {
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
