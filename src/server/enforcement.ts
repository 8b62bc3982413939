import { enforcementStrength, type PolicySetKind } from "../contract/policies";
import { unpackArchive } from "../policy-code/archive";
import type { FolderFiles } from "../policy-code/folder-files";
import { folderLevels } from "../policy-code/folder-levels";
import type { PolicySetRecord, Storage } from "./storage";
import { gitArchive } from "./vcs-ingress";

/**
 * What an organization enforces, as this server knows it: for each workspace and each project, every policy that
 * applies there with how hard it stops a run (1 advisory, 2 may be overridden, 3 stops it), from a set of policies
 * (the policy's id) or from a versioned set's current version (the label of its block, levels resolved with the
 * set's parameters). The real service cannot say this (it offers no download of a version's files); the local
 * server can, so that a test can tell whether a change left governance weaker. Served at
 * `GET /_local/enforcement?organization=<name>`; see docs/local-server.md.
 */
export interface EnforcedPolicy {
  /** `workspace ws-...` or `project prj-...`. */
  target: string;
  setId: string;
  kind: PolicySetKind;
  /** A policy of a set of policies. */
  policyId?: string;
  /** A policy block of a versioned set's current version. */
  label?: string;
  strength: number;
}

export async function enforcementOf(storage: Storage, organization: string): Promise<{ enforced: EnforcedPolicy[] }> {
  const enforced: EnforcedPolicy[] = [];
  const all = (table: "workspaces" | "projects") =>
    storage.listScopeTargets(table, { organization, limit: 10_000, offset: 0 }).items.map((target) => target.id);
  const [workspaces, projects] = [all("workspaces"), all("projects")];
  for (const set of storage.listPolicySets({ organization, limit: 10_000, offset: 0 }).items) {
    const policies = await policiesOf(storage, set);
    const applies = (target: string, included: readonly string[], excluded: readonly string[]) =>
      !excluded.includes(target) && (set.global || included.includes(target));
    const reach = [
      ...workspaces
        .filter((id) => applies(id, set.scope.workspaces, set.scope["workspace-exclusions"]))
        .map((id) => `workspace ${id}`),
      ...projects
        .filter((id) => applies(id, set.scope.projects, set.scope["project-exclusions"]))
        .map((id) => `project ${id}`),
    ];
    for (const target of reach) {
      for (const policy of policies) {
        // An overridable set lets any failure be overridden: nothing of it stops a run outright.
        const strength = set.overridable === true ? Math.min(policy.strength, 2) : policy.strength;
        enforced.push({ target, setId: set.id, kind: set.kind, ...policy, strength });
      }
    }
  }
  return { enforced };
}

/** Each policy a set enforces; nothing for a set without a ready version or policies. */
async function policiesOf(
  storage: Storage,
  set: PolicySetRecord,
): Promise<{ policyId?: string; label?: string; strength: number }[]> {
  if (!set.versioned) {
    return storage.policiesById(set.policyIds).map((policy) => ({
      policyId: policy.id,
      strength: enforcementStrength(policy.kind, policy.enforcementLevel) ?? 0,
    }));
  }
  const files = await currentFiles(storage, set);
  if (!files) return [];
  return Object.entries(await levelsOf(storage, set, files)).map(([label, level]) => ({
    label,
    strength: enforcementStrength(set.kind, level) ?? 0,
  }));
}

/** The current version's files, and the path of the set's folder among them (a repository's policies path). */
async function currentFiles(
  storage: Storage,
  set: PolicySetRecord,
): Promise<{ files: FolderFiles; path: string } | undefined> {
  const version = set.currentVersionId ? storage.version(set.currentVersionId) : undefined;
  if (!version) return undefined;
  const archive = storage.archive(version.id);
  if (archive) return { files: await unpackArchive(archive), path: "" };
  const commit = version.ingressAttributes;
  const repository = commit && storage.vcsRepository(commit.identifier);
  if (!commit || !repository) return undefined;
  return {
    files: await unpackArchive(await gitArchive(repository.path, commit.commitSha)),
    path: commit.policiesPath ?? set.policiesPath ?? "",
  };
}

async function levelsOf(
  storage: Storage,
  set: PolicySetRecord,
  { files, path }: { files: FolderFiles; path: string },
): Promise<Record<string, string>> {
  const parameters = Object.fromEntries(
    storage.parameters(set.id).map((parameter) => [parameter.key, parameter.value]),
  );
  return (await folderLevels(files, set.kind, { policiesPath: path, parameters })).policies;
}
