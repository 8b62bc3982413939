import type { TfeClient } from "../client";
import type { ScopeTarget as Workspace } from "../client/workspaces";
import { ResultsCache, readResults } from "./reads";
import { needsListing, reaches, stringIds } from "./scope";
import {
  type Answer,
  answerOf,
  defaultImpactSettings,
  type ImpactSettings,
  isResultOf,
  type Reading,
  type StricterChange,
  wouldStop,
} from "./verdict";

/**
 * The workspaces `change` reaches and had not before. A set that is global, or names projects, needs the
 * organization's workspaces (with their projects): they are listed once; otherwise the ids are the answer, their
 * names read later, only for a workspace with something to say.
 */
async function workspacesReached(client: TfeClient, change: StricterChange): Promise<Workspace[]> {
  const before = change.reachedBefore ?? [];
  const candidates: Workspace[] = [];
  if ([...change.reach, ...before].some(needsListing)) {
    for await (const workspace of client.workspaces.listAll(change.organization)) candidates.push(workspace);
  } else {
    for (const id of new Set(change.reach.flatMap((reach) => stringIds(reach.workspaceIds)))) {
      candidates.push({ id, name: "" });
    }
  }
  return candidates.filter(
    (workspace) =>
      change.reach.some((reach) => reaches(reach, workspace.id, workspace.projectId)) &&
      !before.some((reach) => reaches(reach, workspace.id, workspace.projectId)),
  );
}

/**
 * Reads whom `change` would block: the workspaces it newly reaches, each one's runs of the window and their results,
 * and answers (verdict.ts). Within the budget; never throws: what it could not read makes the answer `not known`.
 */
export async function readImpact(
  client: TfeClient,
  change: StricterChange,
  settings: ImpactSettings = defaultImpactSettings,
  shared: { cache?: ResultsCache; budgetSaid?: string } = {},
): Promise<Answer> {
  const start = client.requestsSent;
  const reading: Reading = {
    windowDays: settings.windowDays,
    policies: change.policies.length,
    reached: 0,
    readWhole: 0,
    unevaluated: 0,
    blocked: [],
    evaluated: 0,
    notRead: [],
    requests: 0,
  };
  let targets: Workspace[];
  try {
    targets = await workspacesReached(client, change);
  } catch (error) {
    reading.notRead.push(`the workspaces the policy sets reach (${(error as Error).message})`);
    reading.requests = client.requestsSent - start;
    return answerOf(reading);
  }
  reading.reached = targets.length;
  const ofChange = (result: Parameters<typeof isResultOf>[0]) =>
    change.policies.filter((policy) => isResultOf(result, policy, change.kind));
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
      // Once a workspace's runs show the policy ran there, a later run matters only for what it went on past.
      wentOnSuffices: (results) => results.some((result) => ofChange(result).length > 0),
      // Each workspace is judged as soon as it is read, so that the read of its name counts in the budget.
      onWorkspace: async (workspace) => {
        let evaluating = 0;
        for (const run of workspace.runs) {
          const results = run.results.filter((result) => ofChange(result).length > 0);
          if (results.length > 0) evaluating++;
          let stopped: { policy: string; wentOn: string } | undefined;
          for (const result of results) {
            for (const policy of ofChange(result)) {
              const wentOn = wouldStop(result, policy, change.kind);
              if (wentOn && !stopped) stopped = { policy: result.policy, wentOn };
            }
          }
          if (!stopped) continue;
          // A workspace named by id alone is named once it has something to say.
          if (!workspace.workspaceName) workspace.workspaceName = await cache.nameOf(client, workspace.workspaceId);
          reading.blocked.push({
            workspaceId: workspace.workspaceId,
            workspaceName: workspace.workspaceName,
            runId: run.id,
            createdAt: run.createdAt,
            ...stopped,
          });
        }
        reading.evaluated += evaluating;
        if (!workspace.complete) return;
        reading.readWhole++;
        if (workspace.runs.length > 0 && evaluating === 0) reading.unevaluated++;
      },
    },
  );
  // Workspaces are read a few at a time: the runs are told in the order of the scope, whichever answered first.
  const order = new Map(targets.map((target, index) => [target.id, index]));
  reading.blocked.sort((a, b) => (order.get(a.workspaceId) ?? 0) - (order.get(b.workspaceId) ?? 0));
  reading.notRead.push(...read.notRead);
  reading.requests = client.requestsSent - start;
  return answerOf(reading);
}
