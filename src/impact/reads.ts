import type { TfeClient } from "../client";
import type { PolicyResult, Run } from "../client/runs";
import type { ScopeTarget as Workspace } from "../client/workspaces";
import type { ImpactSettings } from "./verdict";

// The reads behind every answer of whom a stricter policy would block: each workspace's runs of a window and the
// policy results each recorded, a few workspaces at a time, within a request budget (every attempt counted), once
// per operation however many readers ask. A read that fails is said, never thrown.

/** One workspace's runs of the window and the results each recorded: a row of the organization's matrix. */
export interface WorkspaceResults {
  workspaceId: string;
  /** Empty where the workspace was named by id alone. */
  workspaceName: string;
  runs: { id: string; createdAt: Date; status: string; results: PolicyResult[] }[];
  /** Whether every run of the window was read: false where the budget ran out within the workspace. */
  complete: boolean;
}

/** What a walk read: the rows it read (whole or not), of how many workspaces, and what it did not read. */
export interface ResultsRead {
  workspaces: WorkspaceResults[];
  /** The workspaces it was to read: those missing from `workspaces` are said in `notRead`. */
  targets: number;
  notRead: string[];
  requests: number;
}

/**
 * The runs of a window and their results, read once for every reader of one operation (a preview's resources): a
 * second policy of the same set costs no request. Reads under way are shared; a failed one is not kept.
 */
export class ResultsCache {
  private readonly runs = new Map<string, Promise<Run[]>>();
  private readonly names = new Map<string, Promise<string>>();
  private readonly results = new Map<string, { wentOnOnly: boolean; read: Promise<PolicyResult[]> }>();

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
  holdsResults(client: TfeClient, run: Run, wentOnOnly: boolean): boolean {
    return this.servingResults(client, run, wentOnOnly) !== undefined;
  }

  runsOf(client: TfeClient, workspaceId: string, since: Date): Promise<Run[]> {
    return this.kept(this.runs, runsKey(client, workspaceId, since), async () => {
      const runs: Run[] = [];
      for await (const run of client.runs.since(workspaceId, since)) runs.push(run);
      return runs;
    });
  }

  /** A run's results, read once where a read held serves this reader. */
  resultsOf(client: TfeClient, run: Run, wentOnOnly: boolean): Promise<PolicyResult[]> {
    const serving = this.servingResults(client, run, wentOnOnly);
    if (serving) return serving;
    const key = `${client.address} ${run.id}`;
    const read = client.runs.policyResults(run, { wentOnOnly });
    this.results.set(key, { wentOnOnly, read });
    read.catch(() => {
      if (this.results.get(key)?.read === read) this.results.delete(key);
    });
    return read;
  }

  /** A whole read serves a reader of what runs went on past only, not the other way round. */
  private servingResults(client: TfeClient, run: Run, wentOnOnly: boolean) {
    const held = this.results.get(`${client.address} ${run.id}`);
    return held && (wentOnOnly || !held.wentOnOnly) ? held.read : undefined;
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
    /** Given a run's results, whether the workspace's later runs need only what they went on past read. */
    wentOnSuffices?: (results: PolicyResult[]) => boolean;
    /** Called with each workspace once read, before its worker reads another: what it sends counts in the budget. */
    onWorkspace?: (workspace: WorkspaceResults) => Promise<void>;
    /** Reads shared with other readers of the operation; a fresh one where none is given. */
    cache?: ResultsCache;
    /** How the budget is named where it stopped the reads; by default "the budget of N requests". */
    budgetSaid?: string;
  } = {},
): Promise<ResultsRead> {
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
    let wentOnOnly = false;
    try {
      for (const run of await cache.runsOf(client, target.id, since)) {
        if (overBudget() && !cache.holdsResults(client, run, wentOnOnly)) {
          row.complete = false;
          break;
        }
        const results = await cache.resultsOf(client, run, wentOnOnly);
        row.runs.push({ id: run.id, createdAt: run.createdAt, status: run.status, results });
        wentOnOnly ||= options.wentOnSuffices?.(results) === true;
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
  return { workspaces, targets: targets.length, notRead, requests: spent() };
}
