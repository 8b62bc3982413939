import type { TfeClient } from "../client";
import type { PolicySet } from "../client/policy-sets";
import type { PolicyResult, Run } from "../client/runs";
import { enforcementStrength, type PolicySetKind } from "../contract/policies";

// Whom a stricter policy would block, judged against the service's own recent results: for each workspace a change
// reaches, the runs of the window in which the policy failed at a level that did not stop them (advisory). The rules
// (which result counts, how the answer reads) are pure; `readImpact` does the reads, within a request budget, and
// never throws: a read that fails is said as such.

/** What a change makes stricter: one policy, at a new level, in these sets. */
export interface StricterChange {
  organization: string;
  /** The policy's name, as the runs' results name it. */
  policy: string;
  kind: PolicySetKind;
  /** The level the change sets; nothing is read where it does not block (advisory). */
  level: string;
  /** The sets that hold the policy: their scope is the workspaces the change reaches. */
  policySetIds: string[];
}

export interface ImpactSettings {
  /** Days back from `now`; default 30. */
  windowDays: number;
  /** Requests the reads may send (every attempt counted); default 300. */
  requestBudget: number;
  now?: Date;
}

export const defaultImpactSettings: ImpactSettings = { windowDays: 30, requestBudget: 300 };

export interface BlockedRun {
  workspaceId: string;
  workspaceName: string;
  runId: string;
  createdAt: Date;
  /** The level the run evaluated the policy at: one that let the run go on. */
  recordedLevel: string;
}

export interface Impact {
  windowDays: number;
  /** Workspaces in the scope of the policy's sets (projects' workspaces aside: see `notRead`). */
  reached: number;
  /** Of those, the workspaces whose runs of the window were read whole. */
  read: number;
  blocked: BlockedRun[];
  /** Runs of the window that evaluated the policy at all, passed or failed: none means its results there are not known. */
  evaluated: number;
  /** What was not read, and why: the budget, a project in the scope, a read that failed. */
  notRead: string[];
  requests: number;
}

/** Whether a run's result of the policy is one the stricter level would have stopped: it failed at a level that let it go on. */
export function wouldBlock(
  result: Pick<PolicyResult, "level" | "status">,
  kind: PolicySetKind,
  level: string,
): boolean {
  if (result.status !== "failed") return false;
  const now = enforcementStrength(kind, level);
  // A result names Sentinel's soft and hard levels alike as "mandatory": it blocked already.
  return result.level === "advisory" && now !== undefined && now > 1;
}

/** Whether `level` blocks at all: nothing is read for a change to advisory. */
export function blocks(kind: PolicySetKind, level: string): boolean {
  return (enforcementStrength(kind, level) ?? 0) > 1;
}

/** The one message said under the resource. */
export function describeImpact(subject: string, level: string, impact: Impact): string {
  const window = `in the last ${impact.windowDays} days`;
  const notRead = impact.notRead.length > 0 ? `; not read: ${impact.notRead.join("; ")}` : "";
  if (impact.reached === 0) return `${subject} at ${level} reaches no workspace${notRead}`;
  const read = `${impact.read} of ${impact.reached} workspaces read`;
  if (impact.blocked.length === 0 && impact.evaluated === 0) {
    return `${subject} at ${level}: no run ${window} evaluated it there, so whom it would block is not known (${read})${notRead}`;
  }
  if (impact.blocked.length === 0) return `${subject} at ${level}: no run ${window} failed it (${read})${notRead}`;
  const byWorkspace = new Map<string, BlockedRun[]>();
  for (const run of impact.blocked)
    byWorkspace.set(run.workspaceName, [...(byWorkspace.get(run.workspaceName) ?? []), run]);
  const shown = [...byWorkspace]
    .sort(([, a], [, b]) => b.length - a.length)
    .slice(0, 5)
    .map(([name, runs]) => {
      const listed = runs.slice(0, 3).map((run) => `${run.runId}, ${run.createdAt.toISOString().slice(0, 10)}`);
      return `${name} (${listed.join("; ")}${runs.length > 3 ? `; ${runs.length - 3} more` : ""})`;
    });
  const more = byWorkspace.size > 5 ? `, and ${byWorkspace.size - 5} more workspaces` : "";
  return (
    `${subject} at ${level} would have blocked ${impact.blocked.length} run${impact.blocked.length === 1 ? "" : "s"} ` +
    `in ${byWorkspace.size} of ${impact.reached} workspaces ${window}: ${shown.join(", ")}${more}` +
    ` (${impact.read} of ${impact.reached} workspaces read)${notRead}`
  );
}

/**
 * Reads whom `change` would block: the sets' scope, then each workspace's runs of the window and their results, in
 * the order the sets name the workspaces, until the budget is spent. Never throws.
 */
export async function readImpact(
  client: TfeClient,
  change: StricterChange,
  settings: ImpactSettings = defaultImpactSettings,
  /** How a set is read: a provider passes its per-operation cache, which the guard's reads share. */
  readSet: (id: string) => Promise<PolicySet | undefined> = (id) => client.policySets.read(id),
): Promise<Impact> {
  const start = client.requestsSent;
  const spent = () => client.requestsSent - start;
  const since = new Date((settings.now ?? new Date()).getTime() - settings.windowDays * 24 * 3600 * 1000);
  const impact: Impact = {
    windowDays: settings.windowDays,
    reached: 0,
    read: 0,
    blocked: [],
    evaluated: 0,
    notRead: [],
    requests: 0,
  };
  const workspaces = new Map<string, string>();
  try {
    const excluded = new Set<string>();
    let projects = 0;
    for (const id of change.policySetIds) {
      const set = await readSet(id);
      if (!set) {
        impact.notRead.push(`policy set ${id} (not found)`);
        continue;
      }
      for (const excludedId of set.excludedWorkspaceIds) excluded.add(excludedId);
      projects += set.projectIds.length;
      if (set.global) {
        for await (const workspace of client.workspaces.listAll(change.organization)) {
          workspaces.set(workspace.id, workspace.name);
        }
      }
      for (const workspaceId of set.workspaceIds) if (!workspaces.has(workspaceId)) workspaces.set(workspaceId, "");
    }
    for (const id of excluded) workspaces.delete(id);
    if (projects > 0)
      impact.notRead.push(`the workspaces of ${projects} project${projects === 1 ? "" : "s"} in the scope`);
  } catch (error) {
    impact.notRead.push(`the policy sets' scope (${(error as Error).message})`);
    impact.requests = spent();
    return impact;
  }
  impact.reached = workspaces.size;
  let unread = 0;
  for (const [workspaceId, knownName] of workspaces) {
    if (spent() >= settings.requestBudget) {
      unread++;
      continue;
    }
    try {
      const name = knownName || (await client.workspaces.read(workspaceId)).name;
      const runs: Run[] = [];
      for await (const run of client.runs.since(workspaceId, since)) runs.push(run);
      const found: BlockedRun[] = [];
      let complete = true;
      for (const run of runs) {
        if (spent() >= settings.requestBudget) {
          complete = false;
          break;
        }
        const results = (await client.runs.policyResults(run)).filter((result) => result.policy === change.policy);
        if (results.length > 0) impact.evaluated++;
        for (const result of results) {
          if (!wouldBlock(result, change.kind, change.level)) continue;
          found.push({
            workspaceId,
            workspaceName: name,
            runId: run.id,
            createdAt: run.createdAt,
            recordedLevel: result.level,
          });
        }
      }
      impact.blocked.push(...found);
      if (complete) impact.read++;
      else unread++;
    } catch (error) {
      impact.notRead.push(`workspace ${workspaceId} (${(error as Error).message})`);
    }
  }
  if (unread > 0) {
    impact.notRead.push(
      `${unread} workspace${unread === 1 ? "" : "s"} past the budget of ${settings.requestBudget} requests; ` +
        "run tfe-governance impact for the whole answer",
    );
  }
  impact.requests = spent();
  return impact;
}

/** One workspace's runs of the window and the results each recorded: a row of the organization's matrix. */
export interface WorkspaceResults {
  workspaceId: string;
  workspaceName: string;
  runs: { id: string; createdAt: Date; status: string; results: PolicyResult[] }[];
}

/**
 * Every workspace of `organization` (or those named), each with its runs of the window and their results: what
 * `tfe-governance impact` shows. Reads until the budget is spent; what it did not read is said.
 */
export async function readResults(
  client: TfeClient,
  query: { organization: string; workspaceIds?: string[] },
  settings: ImpactSettings,
): Promise<{ workspaces: WorkspaceResults[]; notRead: string[]; requests: number }> {
  const start = client.requestsSent;
  const spent = () => client.requestsSent - start;
  const since = new Date((settings.now ?? new Date()).getTime() - settings.windowDays * 24 * 3600 * 1000);
  const targets: { id: string; name: string }[] = [];
  if (query.workspaceIds && query.workspaceIds.length > 0) {
    for (const id of query.workspaceIds) targets.push(await client.workspaces.read(id));
  } else {
    for await (const workspace of client.workspaces.listAll(query.organization)) targets.push(workspace);
  }
  const workspaces: WorkspaceResults[] = [];
  const notRead: string[] = [];
  let unread = 0;
  for (const target of targets) {
    if (spent() >= settings.requestBudget) {
      unread++;
      continue;
    }
    try {
      const row: WorkspaceResults = { workspaceId: target.id, workspaceName: target.name, runs: [] };
      for await (const run of client.runs.since(target.id, since)) {
        row.runs.push({
          id: run.id,
          createdAt: run.createdAt,
          status: run.status,
          results: await client.runs.policyResults(run),
        });
      }
      workspaces.push(row);
    } catch (error) {
      notRead.push(`workspace ${target.name} (${(error as Error).message})`);
    }
  }
  if (unread > 0) notRead.push(`${unread} workspaces past the budget of ${settings.requestBudget} requests (--budget)`);
  return { workspaces, notRead, requests: spent() };
}
