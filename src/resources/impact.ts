import type { TfeClient } from "../client";
import type { PolicyResult, Run } from "../client/runs";
import type { ScopeTarget as Workspace } from "../client/workspaces";
import { enforcementStrength, type PolicySetKind } from "../contract/policies";

// Whom a stricter policy would block, judged against the service's own recent results: for each workspace a change
// reaches, the runs of the window in which the policy failed at a level that did not stop them (advisory). The rules
// (which result counts, how the answer reads) are pure; `readImpact` does the reads, within a request budget, and
// never throws: a read that fails is said as such.

/** The workspaces a set reaches: as the service holds it, or as the program declares it. */
export interface Reach {
  global: boolean;
  workspaceIds: readonly unknown[];
  projectIds: readonly unknown[];
  excludedWorkspaceIds: readonly unknown[];
  excludedProjectIds: readonly unknown[];
}

/** A scope that reaches nothing: what a declared scope spreads its own lists over. */
export const noReach: Reach = {
  global: false,
  workspaceIds: [],
  projectIds: [],
  excludedWorkspaceIds: [],
  excludedProjectIds: [],
};

/** What a change makes stricter: policies made to block, in the workspaces some scopes reach. */
export interface StricterChange {
  organization: string;
  kind: PolicySetKind;
  /** Each policy, by the name runs' results give it, at the blocking level the change sets. */
  policies: { name: string; level: string }[];
  /** Where they will block: every workspace one of these reaches... */
  reach: Reach[];
  /** ...and none of these already did (a widened scope reads only what it newly reaches). */
  reachedBefore?: Reach[];
}

export interface ImpactSettings {
  /** Days back from `now`; default 30. */
  windowDays: number;
  /**
   * Requests the reads may send (every attempt counted); default 300. No read starts past it; those under way finish
   * (a few requests each).
   */
  requestBudget: number;
  /** Workspaces read at a time; default 4. */
  concurrency?: number;
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
  /** How many policies the change makes block. */
  policies: number;
  /** Workspaces the change newly reaches: those its scopes reach, less those they reached before. */
  reached: number;
  /** Of those, the workspaces whose runs of the window were read whole. */
  read: number;
  blocked: BlockedRun[];
  /**
   * Runs of the window seen evaluating one of the policies, passed or failed (after the first of a workspace, a run
   * with no advisory failure is not opened): none means its results there are not known.
   */
  evaluated: number;
  /** What was not read, and why: the budget, a set or workspace whose read failed. */
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

/** The answer where nothing could be read: `why` is what a refusal under requireNoBlockedRuns names. */
export function unjudged(windowDays: number, why: string): Impact {
  return { windowDays, policies: 0, reached: 0, read: 0, blocked: [], evaluated: 0, notRead: [why], requests: 0 };
}

/** Whether `level` blocks at all: nothing is read for a change to advisory. */
export function blocks(kind: PolicySetKind, level: string): boolean {
  return (enforcementStrength(kind, level) ?? 0) > 1;
}

/** The one message said under the resource, of `subject` (what is made stricter, its level included). */
export function describeImpact(subject: string, impact: Impact): string {
  const window = `in the last ${impact.windowDays} days`;
  const notRead = impact.notRead.length > 0 ? `; not read: ${impact.notRead.join("; ")}` : "";
  if (impact.reached === 0) return `${subject} reaches no workspace${notRead}`;
  const read = `${impact.read} of ${impact.reached} workspaces read`;
  const them = impact.policies === 1 ? "it" : "them";
  if (impact.blocked.length === 0 && impact.evaluated === 0) {
    return `${subject}: no run ${window} evaluated ${them} there, so whom it would block is not known (${read})${notRead}`;
  }
  if (impact.blocked.length === 0) return `${subject}: no run ${window} failed ${them} (${read})${notRead}`;
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
    `${subject} would have blocked ${impact.blocked.length} run${impact.blocked.length === 1 ? "" : "s"} ` +
    `in ${byWorkspace.size} of ${impact.reached} workspaces ${window}: ${shown.join(", ")}${more}` +
    ` (${read})${notRead}`
  );
}

/** The scopes of these sets, as the service holds them, and what could not be read of them. */
export async function reachOfSets(
  setIds: readonly string[],
  readSet: (id: string) => Promise<Reach | undefined>,
): Promise<{ reach: Reach[]; notRead: string[] }> {
  const reach: Reach[] = [];
  const notRead: string[] = [];
  for (const id of setIds) {
    try {
      const set = await readSet(id);
      if (set) reach.push(set);
      else notRead.push(`policy set ${id} (not found)`);
    } catch (error) {
      notRead.push(`policy set ${id} (${(error as Error).message})`);
    }
  }
  return { reach, notRead };
}

const ids = (values: readonly unknown[]) => values.filter((value): value is string => typeof value === "string");

/** Whether `reach` reaches a workspace of `projectId` (undefined: in no project, or the project is not known). */
function reaches(reach: Reach, workspaceId: string, projectId: string | undefined): boolean {
  if (ids(reach.excludedWorkspaceIds).includes(workspaceId)) return false;
  if (projectId !== undefined && ids(reach.excludedProjectIds).includes(projectId)) return false;
  return (
    reach.global ||
    ids(reach.workspaceIds).includes(workspaceId) ||
    (projectId !== undefined && ids(reach.projectIds).includes(projectId))
  );
}

/**
 * The workspaces `change` reaches and had not before. A set that is global, or names projects, needs the
 * organization's workspaces (with their projects): they are listed once; otherwise the ids are the answer, their
 * names read later, only for a workspace with something to say.
 */
async function workspacesReached(client: TfeClient, change: StricterChange): Promise<Workspace[]> {
  const before = change.reachedBefore ?? [];
  const needsListing = [...change.reach, ...before].some(
    (reach) => reach.global || ids(reach.projectIds).length > 0 || ids(reach.excludedProjectIds).length > 0,
  );
  const candidates: Workspace[] = [];
  if (needsListing) {
    for await (const workspace of client.workspaces.listAll(change.organization)) candidates.push(workspace);
  } else {
    for (const id of new Set(change.reach.flatMap((reach) => ids(reach.workspaceIds))))
      candidates.push({ id, name: "" });
  }
  return candidates.filter(
    (workspace) =>
      change.reach.some((reach) => reaches(reach, workspace.id, workspace.projectId)) &&
      !before.some((reach) => reaches(reach, workspace.id, workspace.projectId)),
  );
}

/**
 * Reads whom `change` would block: the workspaces it newly reaches, each one's runs of the window and their results
 * (`readResults`), kept where one of its policies failed at a level that let the run go on. Within the budget;
 * never throws: what it could not read is said.
 */
export async function readImpact(
  client: TfeClient,
  change: StricterChange,
  settings: ImpactSettings = defaultImpactSettings,
  shared: { cache?: ResultsCache; budgetSaid?: string } = {},
): Promise<Impact> {
  const start = client.requestsSent;
  const impact: Impact = {
    windowDays: settings.windowDays,
    policies: change.policies.length,
    reached: 0,
    read: 0,
    blocked: [],
    evaluated: 0,
    notRead: [],
    requests: 0,
  };
  let targets: Workspace[];
  try {
    targets = await workspacesReached(client, change);
  } catch (error) {
    impact.notRead.push(`the workspaces the policy sets reach (${(error as Error).message})`);
    impact.requests = client.requestsSent - start;
    return impact;
  }
  impact.reached = targets.length;
  const levelOf = new Map(change.policies.map((policy) => [policy.name, policy.level]));
  const cache = shared.cache ?? new ResultsCache();
  const read = await readResults(
    client,
    targets,
    // The listing of the scope came out of the same budget.
    { ...settings, requestBudget: Math.max(0, settings.requestBudget - (client.requestsSent - start)) },
    "run tfe-governance impact for the whole answer",
    {
      ...shared,
      cache,
      // Once a workspace's runs show the policy ran there, a later run matters only where an advisory result failed.
      failuresSuffice: (results) => results.some((result) => levelOf.has(result.policy)),
      // Each workspace is judged as soon as it is read, so that the read of its name counts in the budget.
      onWorkspace: async (workspace) => {
        if (workspace.complete) impact.read++;
        for (const run of workspace.runs) {
          const results = run.results.filter((result) => levelOf.has(result.policy));
          if (results.length > 0) impact.evaluated++;
          const [blocking] = results.filter((result) =>
            wouldBlock(result, change.kind, levelOf.get(result.policy) as string),
          );
          if (!blocking) continue;
          // A workspace named by id alone is named once it has something to say.
          if (!workspace.workspaceName) workspace.workspaceName = await cache.nameOf(client, workspace.workspaceId);
          impact.blocked.push({
            workspaceId: workspace.workspaceId,
            workspaceName: workspace.workspaceName,
            runId: run.id,
            createdAt: run.createdAt,
            recordedLevel: blocking.level,
          });
        }
      },
    },
  );
  // Workspaces are read a few at a time: the runs are told in the order of the scope, whichever answered first.
  const order = new Map(targets.map((target, index) => [target.id, index]));
  impact.blocked.sort((a, b) => (order.get(a.workspaceId) ?? 0) - (order.get(b.workspaceId) ?? 0));
  impact.notRead.push(...read.notRead);
  impact.requests = client.requestsSent - start;
  return impact;
}

/** One workspace's runs of the window and the results each recorded: a row of the organization's matrix. */
export interface WorkspaceResults {
  workspaceId: string;
  /** Empty where the workspace was named by id alone. */
  workspaceName: string;
  runs: { id: string; createdAt: Date; status: string; results: PolicyResult[] }[];
  /** Whether every run of the window was read: false where the budget ran out within the workspace. */
  complete: boolean;
}

/**
 * The runs of a window and their results, read once for every reader of one operation (a preview's resources): a
 * second policy of the same set costs no request. Reads under way are shared; a failed one is not kept.
 */
export class ResultsCache {
  private readonly runs = new Map<string, Promise<Run[]>>();
  private readonly names = new Map<string, Promise<string>>();
  private readonly results = new Map<string, { advisoryFailuresOnly: boolean; read: Promise<PolicyResult[]> }>();

  /** A workspace's name, where it was named by id alone; its id where the read fails. */
  nameOf(client: TfeClient, workspaceId: string): Promise<string> {
    return this.kept(this.names, `${client.address} ${workspaceId}`, () =>
      client.workspaces.read(workspaceId).then(
        (found) => found.name,
        () => workspaceId,
      ),
    );
  }

  /** Whether the runs are read or being read: awaiting them sends nothing more. */
  holdsRuns(client: TfeClient, workspaceId: string, since: Date): boolean {
    return this.runs.has(runsKey(client, workspaceId, since));
  }

  /** Whether a run's results are read, or being read, in a way that serves this reader. */
  holdsResults(client: TfeClient, run: Run, advisoryFailuresOnly: boolean): boolean {
    return this.servingResults(client, run, advisoryFailuresOnly) !== undefined;
  }

  runsOf(client: TfeClient, workspaceId: string, since: Date): Promise<Run[]> {
    return this.kept(this.runs, runsKey(client, workspaceId, since), async () => {
      const runs: Run[] = [];
      for await (const run of client.runs.since(workspaceId, since)) runs.push(run);
      return runs;
    });
  }

  /** A run's results, read once where a read held serves this reader. */
  resultsOf(client: TfeClient, run: Run, advisoryFailuresOnly: boolean): Promise<PolicyResult[]> {
    const serving = this.servingResults(client, run, advisoryFailuresOnly);
    if (serving) return serving;
    const key = `${client.address} ${run.id}`;
    const read = client.runs.policyResults(run, { advisoryFailuresOnly });
    this.results.set(key, { advisoryFailuresOnly, read });
    read.catch(() => {
      if (this.results.get(key)?.read === read) this.results.delete(key);
    });
    return read;
  }

  /** A whole read serves a reader of advisory failures only, not the other way round. */
  private servingResults(client: TfeClient, run: Run, advisoryFailuresOnly: boolean) {
    const held = this.results.get(`${client.address} ${run.id}`);
    return held && (advisoryFailuresOnly || !held.advisoryFailuresOnly) ? held.read : undefined;
  }

  private kept<T>(map: Map<string, Promise<T>>, key: string, read: () => Promise<T>): Promise<T> {
    const held = map.get(key);
    if (held) return held;
    const reading = read();
    map.set(key, reading);
    reading.catch(() => map.delete(key));
    return reading;
  }
}

const runsKey = (client: TfeClient, workspaceId: string, since: Date) =>
  `${client.address} ${workspaceId} ${since.toISOString()}`;

/** The workspaces `tfe-governance impact` reads: those named, else every one of the organization. */
export async function workspacesToRead(
  client: TfeClient,
  query: { organization: string; workspaceIds?: string[] },
): Promise<Workspace[]> {
  const targets: Workspace[] = [];
  if (query.workspaceIds && query.workspaceIds.length > 0) {
    for (const id of query.workspaceIds) targets.push(await client.workspaces.read(id));
  } else {
    for await (const workspace of client.workspaces.listAll(query.organization)) targets.push(workspace);
  }
  return targets;
}

/**
 * Each workspace's runs of the window and their results, in order, until the budget is spent (every attempt
 * counted): the one walk behind preview's message, `tfe-governance impact` and `listPolicyResults`. What it did not
 * read is said, with `pastBudget` (how to read further) where the budget stopped it; a failed read never throws.
 */
export async function readResults(
  client: TfeClient,
  targets: readonly Workspace[],
  settings: ImpactSettings,
  pastBudget: string,
  options: {
    /** Given a run's results, whether the workspace's later runs need only their advisory failures read. */
    failuresSuffice?: (results: PolicyResult[]) => boolean;
    /** Called with each workspace once read, before its worker reads another: what it sends counts in the budget. */
    onWorkspace?: (workspace: WorkspaceResults) => Promise<void>;
    /** Reads shared with other readers of the operation; a fresh one where none is given. */
    cache?: ResultsCache;
    /** How the budget is named where it stopped the reads; by default "the budget of N requests". */
    budgetSaid?: string;
  } = {},
): Promise<{ workspaces: WorkspaceResults[]; notRead: string[]; requests: number }> {
  const start = client.requestsSent;
  const spent = () => client.requestsSent - start;
  const since = new Date((settings.now ?? new Date()).getTime() - settings.windowDays * 24 * 3600 * 1000);
  const cache = options.cache ?? new ResultsCache();
  const rows: (WorkspaceResults | undefined)[] = [];
  const notRead: string[] = [];
  let unread = 0;
  // What another reader of the operation read, or is reading, costs nothing more: it is taken past the budget too.
  const overBudget = () => spent() >= settings.requestBudget;
  const readWorkspace = async (target: Workspace, index: number) => {
    if (overBudget() && !cache.holdsRuns(client, target.id, since)) {
      unread++;
      return;
    }
    const row: WorkspaceResults = { workspaceId: target.id, workspaceName: target.name, runs: [], complete: true };
    let advisoryFailuresOnly = false;
    try {
      for (const run of await cache.runsOf(client, target.id, since)) {
        if (overBudget() && !cache.holdsResults(client, run, advisoryFailuresOnly)) {
          row.complete = false;
          break;
        }
        const results = await cache.resultsOf(client, run, advisoryFailuresOnly);
        row.runs.push({ id: run.id, createdAt: run.createdAt, status: run.status, results });
        advisoryFailuresOnly ||= options.failuresSuffice?.(results) === true;
      }
      rows[index] = row;
      if (!row.complete) unread++;
      await options.onWorkspace?.(row);
    } catch (error) {
      notRead.push(`workspace ${target.name || target.id} (${(error as Error).message})`);
    }
  };
  // A few workspaces at a time: the service's answers take a round trip each, and the client keeps its rate limit.
  // Near the end of the budget, no more are started than it can read whole: what a workspace costs is learnt from
  // the first, read alone (a budget spent on four half-read workspaces would answer for none of them).
  let next = 0;
  let inFlight = 0;
  let costOfOne: number | undefined;
  const waiting: (() => void)[] = [];
  const room = () =>
    inFlight === 0 || (costOfOne !== undefined && settings.requestBudget - spent() >= costOfOne * (inFlight + 1));
  const worker = async () => {
    while (next < targets.length) {
      if (!room()) {
        await new Promise<void>((resolve) => waiting.push(resolve));
        continue;
      }
      const index = next++;
      const alone = inFlight === 0;
      const before = spent();
      inFlight++;
      try {
        await readWorkspace(targets[index] as Workspace, index);
      } finally {
        inFlight--;
        if (alone && inFlight === 0) costOfOne = Math.max(1, spent() - before);
        for (const wake of waiting.splice(0)) wake();
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, settings.concurrency ?? 4) }, worker));
  const workspaces = rows.filter((row): row is WorkspaceResults => row !== undefined);
  if (unread > 0) {
    notRead.push(
      `${unread} workspace${unread === 1 ? "" : "s"} past ${options.budgetSaid ?? `the budget of ${settings.requestBudget} requests`}; ${pastBudget}`,
    );
  }
  return { workspaces, notRead, requests: spent() };
}
