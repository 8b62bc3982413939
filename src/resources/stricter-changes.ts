import {
  type Answer,
  answerOf,
  describeAnswer,
  ImpactSession,
  type ImpactSettings,
  type Reach,
  readingOf,
  type StricterChange,
  unread,
} from "../impact";
import { GovernanceRefusal, type ProviderContext } from "./provider-context";

// What a provider does with a stricter change (src/impact/): reads whom it would block within the operation's one
// budget, then says the answer under the resource, or refuses it where the stack asks for certainty.

const budgetSaid = (settings: ImpactSettings) =>
  `the budget of ${settings.requestBudget} requests this preview shares (tfe:impactRequestBudget)`;

/**
 * The reads of the process's operation: one window, one cache, one budget for every resource of a preview. The
 * engine starts a provider process for each command; what drives the providers otherwise (a test) starts anew with
 * {@link startOperationReads}.
 */
let session = new ImpactSession(budgetSaid);

/** A new operation's reads: a window ending at `now`, an empty cache, the whole budget, nothing pending. */
export function startOperationReads(now = new Date()): void {
  session = new ImpactSession(budgetSaid, now);
  pending.policies.clear();
  pending.sets.clear();
  pending.newPolicies.length = 0;
}

/** A policy as the program leaves it. */
export interface PendingPolicy {
  organization: string;
  kind: string;
  name: string;
  level: string;
}

/** A set as the program leaves it: its name, its scope (undefined where not known until apply), its members. */
export interface PendingSet {
  name: string;
  reach: Reach | undefined;
  policyIds: readonly string[];
}

/**
 * What the resources of this operation change, as each one's check and diff see the program: a policy raised and
 * the set that takes it in (or widens) in the same preview judge each other as the program leaves them, not as the
 * service holds them now. Whichever resource the engine reaches second sees the first's change; the first judges
 * with the service's, which the second then completes.
 */
export const pending = {
  /** Existing policies by id. */
  policies: new Map<string, PendingPolicy>(),
  /** Existing sets by id. */
  sets: new Map<string, PendingSet>(),
  /** Policies made in this operation: their ids are not known until apply. */
  newPolicies: [] as PendingPolicy[],
};

/** Why nothing is read where the window is 0 days. */
const readsOff = "tfe:impactWindowDays is 0, which turns these reads off";

/**
 * Whom `change` would block, within one budget for the whole operation: every resource of a preview draws on
 * `tfe:impactRequestBudget`, and a workspace's runs are read once however many resources ask. What the caller
 * could not read (`notRead`: a set's scope, a member policy) makes the answer `not known` unless runs are blocked.
 */
export async function readImpactOnce(
  context: ProviderContext,
  change: StricterChange,
  notRead: readonly string[] = [],
): Promise<Answer> {
  const settings = context.impactSettings;
  if (settings.windowDays === 0) return cannotRead(context, [...notRead, readsOff]);
  const answer = await session.read(context.client, change, settings);
  return notRead.length > 0 ? withNotRead(answer, notRead) : answer;
}

/** The answer where nothing could be read, and why. */
export function cannotRead(context: ProviderContext, why: readonly string[]): Answer {
  const [first = "", ...rest] = why;
  return withNotRead(answerOf(unread(context.impactSettings.windowDays, first)), rest);
}

/** The answer with more that could not be read, judged anew. */
function withNotRead(answer: Answer, lines: readonly string[]): Answer {
  const reading = readingOf(answer);
  return answerOf({ ...reading, notRead: [...lines, ...reading.notRead] });
}

/**
 * Whom a stricter change would block, said under the resource: a warning where it would have blocked a run, else
 * information. With `requireNoBlockedRuns` anything but `none` is a refusal (a stack that asks for certainty gets it,
 * or an answer saying why not), unless the resource approves with `allowStricter`.
 */
export async function sayImpact(
  context: ProviderContext,
  urn: unknown,
  subject: string,
  answer: Answer,
  approved: boolean,
  /** Where it was read, where a change of the same update may reach further (describeAnswer). */
  where?: string,
): Promise<void> {
  const message = describeAnswer(subject, answer, where);
  if (context.requireNoBlockedRuns && !approved && answer.verdict !== "none") {
    const what =
      answer.verdict === "blocked"
        ? "that would have blocked recent runs"
        : "of which it is not known whom it would block";
    const readFurther = answer.notRead.some((line) => line.includes("tfe:impactRequestBudget"))
      ? ", or raise tfe:impactRequestBudget to read further"
      : "";
    throw new GovernanceRefusal(
      `${message}. ${context.requireNoBlockedRunsSetBy} refuses a stricter change ${what}: set allowStricter: true on this ` +
        `resource to approve it${readFurther}`,
    );
  }
  await (answer.verdict === "blocked" ? context.warn(urn, message) : context.info(urn, message));
}
