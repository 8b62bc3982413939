import { enforcementStrength, type PolicySetKind } from "../../contract/policies";
import { blocks, describeImpact, type Reach, unjudged } from "../impact";
import { holdsUnknown, isUnknown, knownIds, type ProviderContext } from "../provider-context";
import { readImpactOnce, sayImpact } from "../stricter-changes";
import type { PolicySetInputs, PolicySetOutputs } from "./properties";

// A set made stricter, said under the resource before it is applied (impact.ts): a level raised in its folder, a
// policy added to its folder or its members at a blocking level (a new set: all of its blocking policies), and its
// scope widened (global on, workspaces or projects added, an exclusion removed), which brings every blocking policy
// of the set to the workspaces it newly reaches. Reads only; a failure to read is said, never thrown.

const scopeLists = ["workspaceIds", "projectIds", "excludedWorkspaceIds", "excludedProjectIds"] as const;

/** The scope a set declares or holds; undefined where part of it is not known until apply. */
function reachOf(props: Partial<Record<keyof PolicySetOutputs, unknown>>): Reach | undefined {
  if (isUnknown(props.global)) return undefined;
  if (scopeLists.some((list) => holdsUnknown(props[list]))) return undefined;
  return {
    global: props.global === true,
    workspaceIds: knownIds(props.workspaceIds),
    projectIds: knownIds(props.projectIds),
    excludedWorkspaceIds: knownIds(props.excludedWorkspaceIds),
    excludedProjectIds: knownIds(props.excludedProjectIds),
  };
}

/** Whether `after` may reach a workspace `before` did not: the pure test that spends no request when it says no. */
export function widens(before: Reach, after: Reach): boolean {
  const added = (list: "workspaceIds" | "projectIds") =>
    knownIds(after[list]).some((id) => !knownIds(before[list]).includes(id));
  const lifted = (list: "excludedWorkspaceIds" | "excludedProjectIds") =>
    knownIds(before[list]).some((id) => !knownIds(after[list]).includes(id));
  const exclusionLifted = lifted("excludedWorkspaceIds") || lifted("excludedProjectIds");
  if (after.global) return !before.global || exclusionLifted;
  return !before.global && (added("workspaceIds") || added("projectIds") || exclusionLifted);
}

interface Blocking {
  name: string;
  level: string;
  /** The level it had before the change, where it was in the set. */
  was?: string;
}

/** A policy made to block, as a message names it: in a set that is new itself, no "(new)". */
const shown = (policy: Blocking, inNewSet: boolean) =>
  `${policy.name} at ${policy.level}${inNewSet ? "" : policy.was === undefined ? " (new)" : ` (was ${policy.was})`}`;

export async function sayWhomSetBlocks(
  context: ProviderContext,
  setId: string | undefined,
  olds: PolicySetOutputs | undefined,
  news: PolicySetInputs,
): Promise<void> {
  const settings = context.impactSettings;
  const kind = news.kind as PolicySetKind;
  if (settings.windowDays === 0 || isUnknown(kind)) return;
  const urn = (news as unknown as Record<string, unknown>).__urn;
  const after = reachOf(news);
  const before = olds && reachOf(olds);
  const folderAfter = news.policiesUnknown || isUnknown(news.folderPolicies) ? {} : (news.folderPolicies ?? {});
  const folderBefore = olds?.folderPolicies ?? {};
  // What the change makes block where it did not: raised or new in the folder, members added at a blocking level.
  const raised: Blocking[] = Object.entries(folderAfter)
    .filter(([name, level]) => {
      if (!blocks(kind, level)) return false;
      const was = folderBefore[name];
      return was === undefined || (enforcementStrength(kind, level) ?? 0) > (enforcementStrength(kind, was) ?? 0);
    })
    .map(([name, level]) => ({
      name,
      level,
      ...(folderBefore[name] !== undefined ? { was: folderBefore[name] } : {}),
    }));
  const widened = before !== undefined && after !== undefined && widens(before, after);
  const declaredAdded = knownIds(news.policyIds).filter((id) => !knownIds(olds?.policyIds).includes(id));
  // The set's members on the service are read only where they matter: a member declared anew may have joined
  // from the policy's side already, and a widened scope brings every member to new workspaces.
  const notRead: string[] = [];
  const onService =
    setId && (widened || declaredAdded.length > 0)
      ? ((
          await context.policySetOf(setId).catch((error: Error) => {
            notRead.push(`the set's members on the service (${error.message})`);
            return undefined;
          })
        )?.policyIds ?? [])
      : [];
  const members = [...new Set([...knownIds(news.policyIds), ...onService])];
  const addedIds = declaredAdded.filter((id) => !onService.includes(id));
  const scopeUnknown = after === undefined && (raised.length > 0 || addedIds.length > 0 || olds !== undefined);
  if (raised.length === 0 && addedIds.length === 0 && !widened && !scopeUnknown) return;
  const subject = `${olds === undefined ? "new " : ""}policy set "${news.name}"`;
  const approved = news.allowStricter === true;
  // What cannot be judged is said as such, and a stack that refuses what it cannot judge refuses it.
  const cannotJudge = (why: string) =>
    sayImpact(
      context,
      urn,
      `${subject}: whom it would block is not read: ${why}`,
      unjudged(settings.windowDays, why),
      approved,
    );
  // A scope not known until apply may be wider than before: it cannot be compared.
  if (after === undefined) return cannotJudge("its scope is not known until apply");
  const levels = new Map<string, Blocking>();
  for (const id of widened ? members : addedIds) {
    try {
      const policy = await context.client.policies.read(id);
      if (policy.enforcementLevel && blocks(kind, policy.enforcementLevel)) {
        levels.set(id, { name: policy.name, level: policy.enforcementLevel });
      }
    } catch (error) {
      notRead.push(`policy ${id} (${(error as Error).message})`);
    }
  }
  const stricter = [...raised, ...addedIds.flatMap((id) => levels.get(id) ?? [])];
  if (stricter.length > 0) {
    const impact = await readImpactOnce(context, {
      organization: news.organization,
      kind,
      policies: stricter,
      reach: [after],
    });
    impact.notRead.unshift(...notRead.splice(0));
    await sayImpact(
      context,
      urn,
      describeImpact(
        `${subject} with ${stricter.map((policy) => shown(policy, olds === undefined)).join(", ")}`,
        impact,
      ),
      impact,
      approved,
    );
  }
  if (!widened) return;
  // A widened scope brings every policy of the set to new workspaces: where they are not known here, neither is whom
  // they would block.
  if (news.policiesUnknown) return cannotJudge(`its policies are not known here (${news.policiesUnknown})`);
  // Every other blocking policy of the set reaches the workspaces the scope newly takes in.
  const newlyThere = [
    ...Object.entries(folderAfter)
      .filter(([name, level]) => blocks(kind, level) && !stricter.some((policy) => policy.name === name))
      .map(([name, level]) => ({ name, level })),
    ...[...levels.entries()].filter(([id]) => !addedIds.includes(id)).map(([, policy]) => policy),
  ];
  if (newlyThere.length === 0) {
    if (stricter.length === 0)
      await context.info(urn, `${subject} widened holds no blocking policy: it blocks no run more`);
    return;
  }
  const impact = await readImpactOnce(context, {
    organization: news.organization,
    kind,
    policies: newlyThere,
    reach: [after],
    reachedBefore: [before],
  });
  impact.notRead.unshift(...notRead);
  const listed = newlyThere.map((policy) => `${policy.name} at ${policy.level}`).join(", ");
  await sayImpact(context, urn, describeImpact(`${subject} widened (${listed})`, impact), impact, approved);
}
