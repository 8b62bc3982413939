import { enforcementStrength } from "../../contract/policies";
import { blocks, describeImpact, reachOfSets, unjudged } from "../impact";
import { holdsUnknown, knownIds, type ProviderContext } from "../provider-context";
import { readImpactOnce, sayImpact } from "../stricter-changes";
import type { PolicyInputs, PolicyOutputs } from "./properties";

/**
 * A policy made to block, said under the resource before it is applied: a level raised, a set joined at a blocking
 * level, or a new policy at one (`olds` undefined: the engine's check of a create, which has no diff). The runs of
 * the window that failed it at a level that let them go on, in the workspaces its sets reach (impact.ts). Reads
 * only; a failure to read is said, never thrown: it does not stop a preview that would otherwise pass.
 */
export async function sayWhomItBlocks(
  context: ProviderContext,
  olds: PolicyOutputs | undefined,
  news: PolicyInputs,
): Promise<void> {
  const after = news.enforcementLevel;
  if (context.impactSettings.windowDays === 0 || !blocks(news.kind, after)) return;
  const setsUnknown = holdsUnknown(news.policySetIds);
  const stronger =
    olds !== undefined &&
    (enforcementStrength(news.kind, after) ?? 0) >
      (enforcementStrength(olds.kind, olds.enforcementLevel) ?? Number.MAX_VALUE);
  // A raised level (or a new policy) reaches every workspace of the policy's sets; a set joined, its own.
  const joined = knownIds(news.policySetIds).filter((id) => !knownIds(olds?.policySetIds).includes(id));
  const urn = (news as unknown as Record<string, unknown>).__urn;
  if (setsUnknown) {
    // Sets made in the same update: their scope is read at the next preview, not this one; said, not guessed.
    if (olds === undefined || stronger) {
      const why = "its policy sets are not known until apply";
      await sayImpact(
        context,
        urn,
        `${olds === undefined ? "new " : ""}policy "${news.name}" at ${after}: whom it would block is not read: ${why}`,
        unjudged(context.impactSettings.windowDays, why),
        news.allowStricter === true,
      );
    }
    return;
  }
  if (olds !== undefined && !stronger && joined.length === 0) return;
  const setIds = olds === undefined || stronger ? knownIds(news.policySetIds) : joined;
  const subject =
    olds === undefined
      ? `new policy "${news.name}"`
      : stronger
        ? `policy "${news.name}"`
        : `policy "${news.name}", joining ${joined.join(", ")},`;
  if (setIds.length === 0) {
    // A new policy in no set yet joins one from the set's side, which says so there.
    if (olds !== undefined) await context.info(urn, `${subject} at ${after} is in no policy set: it blocks no run`);
    return;
  }
  const sets = await reachOfSets(setIds, (id) => context.policySetOf(id));
  const impact = await readImpactOnce(context, {
    organization: news.organization,
    kind: news.kind,
    policies: [{ name: news.name, level: after }],
    reach: sets.reach,
  });
  impact.notRead.unshift(...sets.notRead);
  await sayImpact(context, urn, describeImpact(`${subject} at ${after}`, impact), impact, news.allowStricter === true);
}
