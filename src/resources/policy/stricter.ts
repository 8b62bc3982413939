import { enforcementStrength } from "../../contract/policies";
import { blocks, describeImpact, readImpact } from "../impact";
import { GovernanceRefusal, isUnknown, type ProviderContext } from "../provider-context";
import type { PolicyInputs, PolicyOutputs } from "./properties";

/**
 * A raised level, said under the resource before it is applied: the runs of the window that failed the policy at a
 * level that let them go on, in the workspaces of its sets (impact.ts). Reads only; a failure to read is said, never
 * thrown: it does not stop a preview that would otherwise pass.
 */
export async function sayWhomItBlocks(
  context: ProviderContext,
  olds: PolicyOutputs,
  news: PolicyInputs,
): Promise<void> {
  const settings = context.impactSettings;
  const [before, after] = [olds.enforcementLevel, news.enforcementLevel];
  const stronger =
    (enforcementStrength(news.kind, after) ?? 0) > (enforcementStrength(olds.kind, before) ?? Number.MAX_VALUE);
  if (settings.windowDays === 0 || !stronger || !blocks(news.kind, after) || isUnknown(news.policySetIds)) return;
  const setIds = (news.policySetIds ?? []).filter((id) => typeof id === "string" && !isUnknown(id));
  const urn = (news as unknown as Record<string, unknown>).__urn;
  const subject = `policy "${news.name}"`;
  if (setIds.length === 0) {
    await context.info(urn, `${subject} at ${after} is in no policy set: it blocks no run`);
    return;
  }
  const impact = await readImpact(
    context.client,
    { organization: news.organization, policy: news.name, kind: news.kind, level: after, policySetIds: setIds },
    settings,
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
