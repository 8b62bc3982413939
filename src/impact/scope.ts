// Which workspaces a policy set reaches: its scope (global, workspaces, projects, exclusions) as the service holds it
// or as a program declares it, and the rules that say whether a workspace is in it and whether a change widens it.
// No I/O: `reads.ts` lists the organization's workspaces where a scope needs them.

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

/** The ids a list holds; a value not known yet (the engine's unknown) is no id. */
export const stringIds = (values: readonly unknown[] | unknown): string[] =>
  Array.isArray(values) ? values.filter((value): value is string => typeof value === "string") : [];

/** Whether `reach` reaches a workspace of `projectId` (undefined: in no project, or the project is not known). */
export function reaches(reach: Reach, workspaceId: string, projectId: string | undefined): boolean {
  if (stringIds(reach.excludedWorkspaceIds).includes(workspaceId)) return false;
  if (projectId !== undefined && stringIds(reach.excludedProjectIds).includes(projectId)) return false;
  return (
    reach.global ||
    stringIds(reach.workspaceIds).includes(workspaceId) ||
    (projectId !== undefined && stringIds(reach.projectIds).includes(projectId))
  );
}

/** Whether reading `reach` needs the organization's workspaces listed (with their projects), not only its ids. */
export const needsListing = (reach: Reach): boolean =>
  reach.global || stringIds(reach.projectIds).length > 0 || stringIds(reach.excludedProjectIds).length > 0;

/** Whether `after` may reach a workspace `before` did not: the pure test that spends no request when it says no. */
export function widens(before: Reach, after: Reach): boolean {
  const added = (list: "workspaceIds" | "projectIds") =>
    stringIds(after[list]).some((id) => !stringIds(before[list]).includes(id));
  const lifted = (list: "excludedWorkspaceIds" | "excludedProjectIds") =>
    stringIds(before[list]).some((id) => !stringIds(after[list]).includes(id));
  const exclusionLifted = lifted("excludedWorkspaceIds") || lifted("excludedProjectIds");
  if (after.global) return !before.global || exclusionLifted;
  return !before.global && (added("workspaceIds") || added("projectIds") || exclusionLifted);
}
