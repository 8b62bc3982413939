import type { PolicyResult } from "../client/runs";
import { enforcementStrength, type PolicySetKind } from "../contract/policies";
import type { Reach } from "./scope";

// Whom a stricter policy would block, judged against the service's own recent results: the rules of which result
// counts, and the one answer every reader takes (the message under a resource, the refusal of requireNoBlockedRuns,
// `tfe-governance impact`'s table, JSON and page, listPolicyResults). An answer has three cases, and only one of them
// is permission: `none` is said only where every workspace the change reaches was read whole over the window and
// the policy ran there; `not known` says why not; `blocked` lists the runs. No I/O here.

/** A policy a change makes stricter, as runs' results name it. */
export interface PolicyAtLevel {
  /** The name a run's result gives it. */
  name: string;
  /**
   * The sets it is evaluated in, by name (a result names its set): a result of another set is another policy (a set's
   * folder policy may share its name with a policy of another set). Empty: no set is known to hold it.
   */
  sets: readonly string[];
  /** The level the change sets. */
  level: string;
  /** Whether the level can be overridden: an OPA set's `mandatory` where the set is overridable. */
  overridable?: boolean;
  /**
   * Other names a result may give it: a Terraform policy block, named by its address here, may come back as its label
   * or its declaration (which of them the service writes in `policy_name` is not documented: every one matches).
   */
  spellings?: readonly string[];
  /**
   * The change takes away an override and not more (an OPA set's `overridable` turned off): only the runs that were
   * overridden would stop, not those that failed at advisory.
   */
  overriddenOnly?: boolean;
}

/** What a change makes stricter: policies made to block, in the workspaces some scopes reach. */
export interface StricterChange {
  organization: string;
  kind: PolicySetKind;
  policies: PolicyAtLevel[];
  /** Where they will block: every workspace one of these reaches... */
  reach: Reach[];
  /** ...and none of these already did (a widened scope reads only what it newly reaches). */
  reachedBefore?: Reach[];
}

export interface ImpactSettings {
  /** Days back from `now`; default 30. 0 turns the reads off: every answer is then `not known`. */
  windowDays: number;
  /**
   * Requests the reads may send (every attempt counted); default 300. No read starts past it; those under way finish
   * (a few requests each).
   */
  requestBudget: number;
  /** Workspaces read at a time; default 4. */
  concurrency?: number;
  now?: Date;
}

export const defaultImpactSettings: ImpactSettings = { windowDays: 30, requestBudget: 300 };

export interface BlockedRun {
  workspaceId: string;
  workspaceName: string;
  runId: string;
  createdAt: Date;
  /** The policy, as the run's result names it. */
  policy: string;
  /** How the run went on past it, which the stricter level would not let it: `failed at advisory`, ... */
  wentOn: string;
}

/** What the reads found, before it is judged: made by `readImpact`, or by a caller that could not read at all. */
export interface Reading {
  windowDays: number;
  /** How many policies the change makes stricter. */
  policies: number;
  /** Workspaces the change newly reaches (those its scopes reach, less those they reached before). */
  reached: number;
  /** Of those, the workspaces whose runs of the window were read whole. */
  readWhole: number;
  /** Of those read whole, the workspaces with runs of the window none of which evaluated one of the policies. */
  unevaluated: number;
  blocked: BlockedRun[];
  /**
   * Runs of the window seen evaluating one of the policies: at least this many (once one shows it in a workspace,
   * an evaluation there whose counts show nothing a run went on past is not opened).
   */
  evaluated: number;
  /** What was not read, and why: each makes the answer `not known` where no run is blocked. */
  notRead: string[];
  requests: number;
}

/** The one answer: blocked (these runs), none (read whole), not known (why). */
export type Answer = Reading &
  (
    | { verdict: "blocked" }
    | { verdict: "none" }
    | {
        verdict: "not known";
        /** Every reason, the reads that failed and the workspaces where the policy never ran. */
        why: string[];
      }
  );

/** A level that lets a run go on past a failure once a user overrides it. */
export function overridableLevel(kind: PolicySetKind, level: string, setOverridable = false): boolean {
  return enforcementStrength(kind, level) === 2 || (kind === "opa" && level === "mandatory" && setOverridable);
}

/** Whether `level` blocks at all: nothing is read for a change to advisory. */
export function blocks(kind: PolicySetKind, level: string): boolean {
  return (enforcementStrength(kind, level) ?? 0) > 1;
}

/** Whether a run's result is of `policy`: its kind, its name (or one of its spellings), and one of its sets. */
export function isResultOf(result: PolicyResult, policy: PolicyAtLevel, kind: PolicySetKind): boolean {
  if (result.kind !== kind) return false;
  if (policy.sets.length > 0 && !policy.sets.includes(result.policySet)) return false;
  const names = [policy.name, ...(policy.spellings ?? [])];
  return (
    names.includes(result.policy) || (result.declarations ?? []).some((declaration) => names.includes(declaration))
  );
}

const statusWords: Record<string, string> = { failed: "failed", errored: "errored", unknown: "came back unknown" };

/**
 * How a run went on past `result` where `policy`'s stricter level would have stopped it, or undefined: it failed,
 * errored or came back unknown at advisory (an advisory policy's error lets the run go on; at a blocking level it
 * stops it), or at an overridable level a user overrode, which the new level does not let anyone override.
 */
export function wouldStop(result: PolicyResult, policy: PolicyAtLevel, kind: PolicySetKind): string | undefined {
  if (!blocks(kind, policy.level)) return undefined;
  const status = statusWords[result.status];
  if (status === undefined) return undefined;
  if (result.level === "advisory") return policy.overriddenOnly ? undefined : `${status} at advisory`;
  if (!result.overridden || overridableLevel(kind, policy.level, policy.overridable)) return undefined;
  return `${status} at ${result.level}, overridden`;
}

/** The reading of a change the reads could not start on: nothing known, and why. */
export function unread(windowDays: number, why: string): Reading {
  return {
    windowDays,
    policies: 0,
    reached: 0,
    readWhole: 0,
    unevaluated: 0,
    blocked: [],
    evaluated: 0,
    notRead: [why],
    requests: 0,
  };
}

/** What an answer was made of: to judge it again with more (what a caller could not read). */
export function readingOf(answer: Answer): Reading {
  const { verdict: _verdict, ...rest } = answer;
  const { why: _why, ...reading } = rest as Reading & { why?: string[] };
  return reading;
}

/** The answer a reading gives: made here alone. */
export function answerOf(reading: Reading): Answer {
  if (reading.blocked.length > 0) return { ...reading, verdict: "blocked" };
  const why = [...reading.notRead];
  if (reading.unevaluated > 0) {
    why.push(
      `in ${reading.unevaluated} of the ${reading.reached} workspaces it reaches, no run of the window evaluated ` +
        `${reading.policies === 1 ? "it" : "them"}, so the runs there show nothing of it`,
    );
  }
  return why.length > 0 ? { ...reading, verdict: "not known", why } : { ...reading, verdict: "none" };
}

/** The answer's one message under a resource, of `subject` (what is made stricter, its level included). */
export function describeAnswer(
  subject: string,
  answer: Answer,
  /**
   * Where the answer was read, where it is less than what the change may reach once applied: a policy's raise is
   * read in the workspaces of the sets that hold it now, and a set of the same update that takes it in (or widens)
   * says the rest under its own name.
   */
  where?: string,
): string {
  const window = `in the last ${answer.windowDays} days`;
  const read = `${answer.readWhole} of ${answer.reached} workspaces read whole`;
  if (answer.verdict === "not known") {
    return `${subject}: whom it would block is not known: ${answer.why.join("; ")}${answer.reached > 0 ? ` (${read})` : ""}`;
  }
  if (answer.verdict === "none") {
    if (answer.reached === 0) {
      return where
        ? `${subject} reaches no workspace through ${where}`
        : `${subject} reaches no workspace: it blocks no run`;
    }
    // How many runs evaluated it is not said: once one shows it in a workspace, later evaluations that show nothing
    // a run went on past are not opened.
    return (
      `${subject}: no run ${window} would have been blocked${where ? ` in the workspaces of ${where}` : ""} ` +
      `(${read}; it ran in each of them that had runs)`
    );
  }
  const byWorkspace = new Map<string, BlockedRun[]>();
  for (const run of answer.blocked) {
    byWorkspace.set(run.workspaceName, [...(byWorkspace.get(run.workspaceName) ?? []), run]);
  }
  const shown = [...byWorkspace]
    .sort(([, a], [, b]) => b.length - a.length)
    .slice(0, 5)
    .map(([name, runs]) => {
      const listed = runs
        .slice(0, 3)
        .map((run) => `${run.runId}, ${run.createdAt.toISOString().slice(0, 10)}, ${run.wentOn}`);
      return `${name} (${listed.join("; ")}${runs.length > 3 ? `; ${runs.length - 3} more` : ""})`;
    });
  const more = byWorkspace.size > 5 ? `, and ${byWorkspace.size - 5} more workspaces` : "";
  const unknown = answer.notRead.length > 0 ? `; not read: ${answer.notRead.join("; ")}` : "";
  const count = answer.blocked.length;
  return (
    `${subject} would have blocked ${count} run${count === 1 ? "" : "s"} in ${byWorkspace.size} of ` +
    `${answer.reached} workspaces ${window}: ${shown.join(", ")}${more} (${read})${unknown}`
  );
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
  const declaration = `${type} ${labels.map((label) => `"${label}"`).join(" ")}`;
  return [...new Set([bare, labels[labels.length - 1] as string, declaration])];
}
