import { enforcementStrength } from "../../contract/policies";
import { blocks, describeImpact, readImpact } from "../impact";
import { GovernanceRefusal, isUnknown, type ProviderContext } from "../provider-context";
import type { PolicyInputs, PolicyOutputs } from "./properties";

/**
 * A raised level, or a set joined at a blocking level, said under the resource before it is applied: the runs of the
 * window that failed the policy at a level that let them go on, in the workspaces the change reaches (impact.ts). Reads only; a failure to read is said, never
 * thrown: it does not stop a preview that would otherwise pass.
 */
export async function sayWhomItBlocks(
  context: ProviderContext,
  olds: PolicyOutputs,
  news: PolicyInputs,
): Promise<void> {
  const settings = context.impactSettings;
  const [before, after] = [olds.enforcementLevel, news.enforcementLevel];
  if (settings.windowDays === 0 || !blocks(news.kind, after) || isUnknown(news.policySetIds)) return;
  const known = (ids: unknown) =>
    (Array.isArray(ids) ? ids : []).filter((id): id is string => typeof id === "string" && !isUnknown(id));
  const stronger =
    (enforcementStrength(news.kind, after) ?? 0) > (enforcementStrength(olds.kind, before) ?? Number.MAX_VALUE);
  // A raised level reaches every workspace of the policy's sets; a set joined at a blocking level, its own.
  const joined = known(news.policySetIds).filter((id) => !known(olds.policySetIds).includes(id));
  if (!stronger && joined.length === 0) return;
  const setIds = stronger ? known(news.policySetIds) : joined;
  const urn = (news as unknown as Record<string, unknown>).__urn;
  const subject = stronger ? `policy "${news.name}"` : `policy "${news.name}", joining ${joined.join(", ")},`;
  if (setIds.length === 0) {
    await context.info(urn, `${subject} at ${after} is in no policy set: it blocks no run`);
    return;
  }
  const impact = await readImpact(
    context.client,
    { organization: news.organization, policy: news.name, kind: news.kind, level: after, policySetIds: setIds },
    settings,
    (id) => context.policySetOf(id),
  );
  const message = describeImpact(subject, after, impact);
  // A team that wants no surprise refuses what would block a run, and what it could not read whole.
  if (
    context.requireNoBlockedRuns &&
    news.allowStricter !== true &&
    (impact.blocked.length > 0 || impact.notRead.length > 0)
  ) {
    throw new GovernanceRefusal(
      `${message}. tfe:requireNoBlockedRuns refuses a raise that ${impact.blocked.length > 0 ? "would have blocked recent runs" : "it could not judge whole"}: ` +
        "set allowStricter: true on this resource to approve it, or raise tfe:impactRequestBudget to read further",
    );
  }
  await (impact.blocked.length > 0 ? context.warn(urn, message) : context.info(urn, message));
}
