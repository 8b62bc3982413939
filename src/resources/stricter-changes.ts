import { type Impact, ResultsCache, readImpact, type StricterChange } from "./impact";
import { GovernanceRefusal, type ProviderContext } from "./provider-context";

// What a provider does with a stricter change (impact.ts): reads whom it would block within the operation's one
// budget, then says it under the resource, or refuses it where the stack asks.

/**
 * The reads of whom a stricter change would block, for every resource of the process's operation: one window (its
 * end fixed at the start), one cache, one budget.
 */
const operationReads = { now: new Date(), cache: new ResultsCache(), spent: 0 };

/**
 * Whom `change` would block, within one budget for the whole operation: every resource of a preview draws on
 * `tfe:impactRequestBudget`, and a workspace's runs are read once however many resources ask.
 */
export async function readImpactOnce(context: ProviderContext, change: StricterChange): Promise<Impact> {
  const settings = context.impactSettings;
  const impact = await readImpact(
    context.client,
    change,
    { ...settings, requestBudget: Math.max(0, settings.requestBudget - operationReads.spent), now: operationReads.now },
    {
      cache: operationReads.cache,
      budgetSaid: `the budget of ${settings.requestBudget} requests this preview shares (tfe:impactRequestBudget)`,
    },
  );
  operationReads.spent += impact.requests;
  return impact;
}

/**
 * Whom a stricter change would block, said under the resource: a warning where it would have blocked a run, else
 * information. With `requireNoBlockedRuns` it is a refusal instead, also where the reads did not finish (they cannot
 * show that no run would be blocked), unless the resource approves with `allowStricter`.
 */
export async function sayImpact(
  context: ProviderContext,
  urn: unknown,
  message: string,
  impact: Impact,
  approved: boolean,
): Promise<void> {
  if (context.requireNoBlockedRuns && !approved && (impact.blocked.length > 0 || impact.notRead.length > 0)) {
    throw new GovernanceRefusal(
      `${message}. tfe:requireNoBlockedRuns refuses a stricter change that ${impact.blocked.length > 0 ? "would have blocked recent runs" : "it could not judge whole"}: ` +
        "set allowStricter: true on this resource to approve it, or raise tfe:impactRequestBudget to read further",
    );
  }
  await (impact.blocked.length > 0 ? context.warn(urn, message) : context.info(urn, message));
}
