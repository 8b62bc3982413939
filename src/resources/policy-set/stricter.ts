import { enforcementStrength, type PolicySetKind } from "../../contract/policies";
import { blocks, type PolicyAtLevel, type Reach, type StricterChange, tfPolicySpellings, widens } from "../../impact";
import { holdsUnknown, isUnknown, knownIds, type ProviderContext, sameValue } from "../provider-context";
import { cannotRead, pending, readImpactOnce, sayImpact } from "../stricter-changes";
import type { PolicySetInputs, PolicySetOutputs } from "./properties";

// A set made stricter, said under the resource before it is applied (src/impact/): a level raised in its folder, a
// policy added to its folder or its members at a blocking level (a new set: all of its blocking policies), its scope
// widened (global on, workspaces or projects added, an exclusion removed: every blocking policy of the set reaches
// the workspaces it newly takes in), `overridable` turned off (every overridden run of its policies would stop).
// Whatever it cannot read or know here (a member's level, policies read from version control with no checkout, a
// scope known only at apply) is said as not known, never as "none".

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

interface Blocking {
  name: string;
  level: string;
  /** The level it had before the change, where it was in the set. */
  was?: string;
}

/** A policy made to block, as a message names it: in a set that is new itself, no "(new)". */
const shown = (policy: Blocking, inNewSet: boolean) =>
  `${policy.name} at ${policy.level}${inNewSet ? "" : policy.was === undefined ? " (new)" : ` (was ${policy.was})`}`;

/** Whether what the set reads its policies from changed: its folder, its repository, branch or path. */
function sourceChanged(olds: PolicySetOutputs, news: PolicySetInputs): boolean {
  return (
    !sameValue(olds.policiesUnknown ?? null, news.policiesUnknown ?? null) ||
    !sameValue(olds.vcsRepo ?? null, news.vcsRepo ?? null) ||
    (olds.policiesPath ?? null) !== (news.policiesPath ?? null) ||
    (olds.contentHash ?? null) !== (news.contentHash ?? null) ||
    !sameValue(olds.folderPolicies ?? {}, isUnknown(news.folderPolicies) ? null : (news.folderPolicies ?? {}))
  );
}

export async function sayWhomSetBlocks(
  context: ProviderContext,
  setId: string | undefined,
  olds: PolicySetOutputs | undefined,
  news: PolicySetInputs,
): Promise<void> {
  const kind = news.kind as PolicySetKind;
  if (isUnknown(kind)) return;
  const urn = (news as unknown as Record<string, unknown>).__urn;
  const approved = news.allowStricter === true;
  const subject = `${olds === undefined ? "new " : ""}policy set "${news.name}"`;
  // The names runs' results give the set: a rename in this change leaves the runs of the window under the old one.
  const setNames = [...new Set([news.name, olds?.name].filter((name): name is string => typeof name === "string"))];
  const after = reachOf(news);
  const before = olds && reachOf(olds);
  // The policies of its folder or checkout that can be seen here, and why they are not known to be what it enforces.
  const folderSeen = isUnknown(news.folderPolicies) ? {} : (news.folderPolicies ?? {});
  const contentUnknown = news.policiesUnknown || (isUnknown(news.folderPolicies) ? "not known until apply" : null);
  const folderBefore = olds?.folderPolicies ?? {};
  const raised: Blocking[] = Object.entries(folderSeen)
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
  const overridableOff = olds?.overridable === true && news.overridable === false;
  const declaredAdded = knownIds(news.policyIds).filter((id) => !knownIds(olds?.policyIds).includes(id));
  // Content that cannot be seen here is a stricter change where it may have changed: a new set, another source.
  const contentMayBeStricter = contentUnknown !== null && (olds === undefined || sourceChanged(olds, news));
  const notRead: string[] = [];
  if (contentMayBeStricter) notRead.push(`its policies are not known here (${contentUnknown})`);
  const membersNotKnown = membersNotKnownYet(news);
  if (membersNotKnown) notRead.push(membersNotKnown);
  // The set's members on the service are read only where they matter: a member declared anew may have joined
  // from the policy's side already, and a widened scope (or an override taken away) reaches every member.
  const onService =
    setId && (widened || overridableOff || declaredAdded.length > 0)
      ? ((
          await context.policySetOf(setId).catch((error: Error) => {
            notRead.push(`the set's members on the service (${error.message})`);
            return undefined;
          })
        )?.policyIds ?? [])
      : [];
  const members = [...new Set([...knownIds(news.policyIds), ...onService])];
  const addedIds = declaredAdded.filter((id) => !onService.includes(id));
  if (
    raised.length === 0 &&
    addedIds.length === 0 &&
    !widened &&
    !overridableOff &&
    notRead.length === 0 &&
    !(after === undefined && olds !== undefined)
  ) {
    return;
  }
  // A scope not known until apply may be wider than before: whom anything would block there cannot be read.
  if (after === undefined) {
    await sayImpact(
      context,
      urn,
      subject,
      cannotRead(context, [...notRead, "its scope is not known until apply"]),
      approved,
    );
    return;
  }
  // Each member's name and level, as this operation leaves it (a policy raised in the same preview) or as the
  // service holds it, read where it matters; a member that cannot be read is not known, never skipped.
  const levels = new Map<string, Blocking>();
  const memberNotRead: string[] = [];
  for (const id of widened || overridableOff ? members : addedIds) {
    try {
      const policy = pending.policies.get(id) ?? (await context.client.policies.read(id));
      const level = "level" in policy ? policy.level : policy.enforcementLevel;
      if (level && blocks(kind, level)) levels.set(id, { name: policy.name, level });
    } catch (error) {
      memberNotRead.push(`policy ${id} (${(error as Error).message})`);
    }
  }
  const overridable = news.overridable === true;
  const atLevel = (policy: Blocking, overriddenOnly = false): PolicyAtLevel => ({
    name: policy.name,
    sets: setNames,
    level: policy.level,
    overridable,
    ...(kind === "tfpolicy" ? { spellings: tfPolicySpellings(policy.name) } : {}),
    ...(overriddenOnly ? { overriddenOnly } : {}),
  });
  // 1. What the change makes block where it did not, in the whole scope.
  const stricter = [...raised, ...addedIds.flatMap((id) => levels.get(id) ?? [])];
  const addedNotRead = memberNotRead.filter((line) => addedIds.some((id) => line.startsWith(`policy ${id} `)));
  if (stricter.length > 0 || addedNotRead.length > 0 || (!widened && !overridableOff && notRead.length > 0)) {
    const what =
      stricter.length > 0 ? ` with ${stricter.map((policy) => shown(policy, olds === undefined)).join(", ")}` : "";
    const why = [...notRead, ...addedNotRead];
    const answer =
      stricter.length > 0
        ? await readImpactOnce(
            context,
            {
              organization: news.organization,
              kind,
              policies: stricter.map((policy) => atLevel(policy)),
              reach: [after],
            },
            why,
          )
        : cannotRead(context, why);
    await sayImpact(context, urn, `${subject}${what}`, answer, approved);
  }
  // 2. A widened scope brings every blocking policy of the set to the workspaces it newly takes in; an override
  // taken away stops, in the whole scope, every run a user let go on past one of them. Both in one change are two
  // reads: the overridden runs of the whole scope, and every run of the workspaces newly reached.
  if (!widened && !overridableOff) return;
  const others = [
    ...Object.entries(folderSeen)
      .filter(([name, level]) => blocks(kind, level) && !stricter.some((policy) => policy.name === name))
      .map(([name, level]) => ({ name, level })),
    ...[...levels.entries()].filter(([id]) => !addedIds.includes(id)).map(([, policy]) => policy),
  ];
  const othersNotRead = [
    ...new Set([
      ...notRead,
      ...(contentUnknown !== null ? [`its policies are not known here (${contentUnknown})`] : []),
      ...memberNotRead.filter((line) => !addedNotRead.includes(line)),
    ]),
  ];
  const listed = others.map((policy) => `${policy.name} at ${policy.level}`).join(", ");
  const readOthers = async (how: string, change: Partial<StricterChange>, overriddenOnly: boolean) => {
    if (others.length === 0 && othersNotRead.length === 0) {
      // Every policy of the set was read, and none blocks: this is read whole.
      if (stricter.length === 0)
        await context.info(urn, `${subject} ${how} holds no blocking policy: it blocks no run more`);
      return;
    }
    const answer =
      others.length > 0
        ? await readImpactOnce(
            context,
            {
              organization: news.organization,
              kind,
              policies: others.map((policy) => atLevel(policy, overriddenOnly)),
              reach: [after],
              ...change,
            },
            othersNotRead,
          )
        : cannotRead(context, othersNotRead);
    await sayImpact(context, urn, `${subject} ${how}${listed ? ` (${listed})` : ""}`, answer, approved);
  };
  if (overridableOff) await readOthers("no longer overridable", {}, true);
  if (widened && before) await readOthers("widened", { reachedBefore: [before] }, false);
}

/**
 * Why the set's members are not known at preview, or undefined: its policyIds as a whole known only at apply, or
 * holding policies this operation makes (their ids come at apply) where one of them blocks, or more of them than the
 * operation makes (another resource's ids, whose policies cannot be named here).
 */
function membersNotKnownYet(news: PolicySetInputs): string | undefined {
  if (isUnknown(news.policyIds)) return "its policyIds are not known until apply, nor whom its members would block";
  const unknownIds = Array.isArray(news.policyIds) ? news.policyIds.filter((id) => isUnknown(id)).length : 0;
  if (unknownIds === 0) return undefined;
  const made = pending.newPolicies.filter((policy) => policy.organization === news.organization);
  const blocking = made.filter((policy) => blocks(news.kind as PolicySetKind, policy.level));
  if (blocking.length === 0 && unknownIds <= made.length) return undefined;
  const named = blocking.map((policy) => `${policy.name} at ${policy.level}`).join(", ");
  return (
    `policyIds holds ${unknownIds} ${unknownIds === 1 ? "policy" : "policies"} made in this update` +
    `${named ? ` (of this update's new policies, ${named} would block)` : ""}: whom they would block is not known ` +
    "until they exist"
  );
}

/** What the program leaves of a set, for the other resources of the operation (stricter-changes.ts, pending). */
export function leavesSet(setId: string, news: PolicySetInputs): void {
  pending.sets.set(setId, { name: news.name, reach: reachOf(news), policyIds: knownIds(news.policyIds) });
}
