import { enforcementStrength, type PolicySetKind } from "../../contract/policies";
import { blocks, type PolicyAtLevel, type Reach, widens } from "../../impact";
import { holdsUnknown, isUnknown, knownIds, type ProviderContext, sameValue } from "../provider-context";
import { cannotRead, readImpactOnce, sayImpact } from "../stricter-changes";
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
  // Each member's name and level, read where it matters; a member that cannot be read is not known, never skipped.
  const levels = new Map<string, Blocking>();
  const memberNotRead: string[] = [];
  for (const id of widened || overridableOff ? members : addedIds) {
    try {
      const policy = await context.client.policies.read(id);
      if (policy.enforcementLevel && blocks(kind, policy.enforcementLevel)) {
        levels.set(id, { name: policy.name, level: policy.enforcementLevel });
      }
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
  // taken away stops, in the whole scope, every run a user let go on past one of them.
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
  const how = widened ? "widened" : "no longer overridable";
  const listed = others.map((policy) => `${policy.name} at ${policy.level}`).join(", ");
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
            policies: others.map((policy) => atLevel(policy, !widened)),
            reach: [after],
            ...(widened && before ? { reachedBefore: [before] } : {}),
          },
          othersNotRead,
        )
      : cannotRead(context, othersNotRead);
  await sayImpact(context, urn, `${subject} ${how}${listed ? ` (${listed})` : ""}`, answer, approved);
}

/**
 * The names a run's result may give a Terraform policy block known here by its address (`resource_policy.x.y`,
 * with ` (file)` where two files declare it): the address, its label, and its declaration as diagnostics write it.
 */
export function tfPolicySpellings(address: string): string[] {
  const bare = address.replace(/ \([^)]*\)$/, "");
  const parts = [...bare.matchAll(/"((?:[^"\\]|\\.)*)"|([^.]+)/g)].map((match) => match[1] ?? match[2] ?? "");
  const [type, ...labels] = parts;
  if (!type || labels.length === 0) return [bare];
  return [
    ...new Set([bare, labels[labels.length - 1] as string, `${type} ${labels.map((label) => `"${label}"`).join(" ")}`]),
  ];
}
