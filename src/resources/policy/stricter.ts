import type { Policy as ServicePolicy } from "../../client/policies";
import { enforcementStrength } from "../../contract/policies";
import { blocks, noReach, type Reach } from "../../impact";
import { holdsUnknown, knownIds, type ProviderContext } from "../provider-context";
import { cannotRead, type PendingPolicy, pending, readImpactOnce, sayImpact } from "../stricter-changes";
import type { PolicyInputs, PolicyOutputs } from "./properties";

/**
 * A policy made to block, said under the resource before it is applied: a level raised, a set joined at a blocking
 * level, or a new policy at one (`olds` undefined: the engine's check of a create, which has no diff). Whom it would
 * block is read in every workspace of every set that holds it: the sets it declares, and those the service holds it
 * in (a set's own `policyIds`, another stack's set), each set's scope as the service holds it (src/impact/). Reads
 * only; what it cannot read is said as not known, never as "none".
 */
export async function sayWhomItBlocks(
  context: ProviderContext,
  id: string | undefined,
  olds: PolicyOutputs | undefined,
  news: PolicyInputs,
  /** The policy as the service holds it (the guard's read where it made one); undefined where it is gone. */
  readHeld: (id: string) => Promise<ServicePolicy | undefined> = (id) => context.client.policies.read(id),
): Promise<void> {
  const after = news.enforcementLevel;
  if (!blocks(news.kind, after)) return;
  const stronger =
    olds !== undefined &&
    (enforcementStrength(news.kind, after) ?? 0) >
      (enforcementStrength(olds.kind, olds.enforcementLevel) ?? Number.MAX_VALUE);
  const declared = knownIds(news.policySetIds);
  // A raised level (or a new policy) reaches every workspace of the policy's sets; a set joined, its own.
  const joined = declared.filter((setId) => !knownIds(olds?.policySetIds).includes(setId));
  const setsUnknown = holdsUnknown(news.policySetIds);
  if (olds !== undefined && !stronger && joined.length === 0 && !setsUnknown) return;
  const urn = (news as unknown as Record<string, unknown>).__urn;
  const subject =
    olds === undefined
      ? `new policy "${news.name}" at ${after}`
      : stronger
        ? `policy "${news.name}" at ${after} (was ${olds.enforcementLevel})`
        : `policy "${news.name}" at ${after}, joining ${joined.join(", ")},`;
  const approved = news.allowStricter === true;
  const notRead: string[] = [];
  if (setsUnknown) notRead.push("policySetIds holds a set not known until apply");
  const setIds = new Set(olds === undefined || stronger ? declared : joined);
  if (olds === undefined) {
    // A new policy may be taken in by a set's own policyIds, which can name it only once it exists.
    notRead.push("it is new, and a set's policyIds can take it in only once it exists");
  } else if (stronger && id !== undefined) {
    // The sets the service holds it in: those of its policyIds, and any other stack's; and the sets of this
    // operation that take it in now.
    try {
      const onService = await readHeld(id);
      if (onService?.policySetIds === undefined) {
        notRead.push(
          `the policy sets the service holds it in (${onService ? "not given" : "the policy is not found"})`,
        );
      } else {
        for (const setId of onService.policySetIds) setIds.add(setId);
      }
    } catch (error) {
      notRead.push(`the policy sets the service holds it in (${(error as Error).message})`);
    }
    for (const [setId, set] of pending.sets) if (set.policyIds.includes(id)) setIds.add(setId);
  }
  const reach: Reach[] = [];
  const setNames: string[] = [];
  let overridable = setIds.size > 0;
  for (const setId of setIds) {
    // A set this operation changes reaches what the program gives it (a scope widened in the same preview).
    const changing = pending.sets.get(setId);
    try {
      const set = await context.policySetOf(setId);
      if (!set && !changing) {
        notRead.push(`policy set ${setId} (not found, or not visible to this token)`);
        continue;
      }
      if (changing && !changing.reach) {
        notRead.push(`policy set ${changing.name}'s scope (not known until apply)`);
        continue;
      }
      reach.push(changing?.reach ?? { ...noReach, ...set });
      setNames.push(...new Set([changing?.name, set?.name].filter((name): name is string => Boolean(name))));
      overridable &&= set?.overridable === true;
    } catch (error) {
      notRead.push(`policy set ${setId} (${(error as Error).message})`);
    }
  }
  if (reach.length === 0 && notRead.length > 0) {
    await sayImpact(context, urn, subject, cannotRead(context, notRead), approved);
    return;
  }
  const answer = await readImpactOnce(
    context,
    {
      organization: news.organization,
      kind: news.kind,
      policies: [{ name: news.name, sets: setNames, level: after, overridable }],
      reach,
    },
    notRead,
  );
  // Read in its sets as they are now: a set of this update that takes it in, or widens, says the rest.
  await sayImpact(context, urn, subject, answer, approved, "the sets that hold it now");
}

/** A policy as the program leaves it, for the sets of the operation that judge it (stricter-changes.ts, pending). */
const pendingOf = (news: PolicyInputs): PendingPolicy => ({
  organization: news.organization,
  kind: news.kind,
  name: news.name,
  level: news.enforcementLevel,
});

/** An existing policy as the program leaves it. */
export function leavesPolicy(id: string, news: PolicyInputs): void {
  pending.policies.set(id, pendingOf(news));
}

/** A policy this operation makes: its id is known only at apply, so a set taking it in names it by none. */
export function makesPolicy(news: PolicyInputs): void {
  pending.newPolicies.push(pendingOf(news));
}
