import { enforcementStrength, type PolicySetKind, strongestLevel } from "../contract/policies";
import { isUnknown } from "./unknown";
import { setOwn } from "./wire-keys";

// The one guard of governance. Every resource describes what it enforces as an Enforcement snapshot (the service's,
// as its outputs record it, and the program's, as its check read it); `weakenings` compares two snapshots and lists
// every way the second is less strict than the first. A part it cannot evaluate (an expression, content it cannot
// read, a kind change) counts as weaker, never as "no change": the caller refuses it unless allowed. No I/O here.

/** What a Terraform policy block enforces besides its level: a later change that takes any away narrows it. */
export interface PolicyBlockShape {
  enforce: number;
  /** `resource_policy` only: the operations it applies to; one entry {@link cannotEvaluate} for an expression. */
  operations: string[] | null;
  filter: string | null;
  /** The inputs its level reads: a parameter of theirs changed outside Pulumi changes the level. */
  levelInputs?: string[];
  /** Where its level or filter cannot be evaluated: a digest of what it may read (see tfpolicy.ts). */
  readsDigest?: string | null;
}

/** The scope of a set: where its policies apply. */
export interface EnforcedScope {
  global: boolean;
  workspaceIds: readonly unknown[];
  projectIds: readonly unknown[];
  excludedWorkspaceIds: readonly unknown[];
  excludedProjectIds: readonly unknown[];
}

/** One resource's enforcement, normalized. */
export interface Enforcement {
  kind: PolicySetKind;
  /**
   * Each policy by its label (a folder's block, a set's policy file block; "" for a `Policy` itself) with its level.
   * A level the kind does not know (an expression the check cannot evaluate) cannot be compared.
   */
  policies: Readonly<Record<string, string>>;
  /**
   * Why `policies` is not known to be what is enforced (content this machine cannot read, a checkout not shown to be
   * what the set reads, a version made outside Pulumi); null or absent where it is. An unknown is never equal to
   * another, even of the same text: where either side has one, the change cannot be compared.
   */
  policiesUnknown?: string | null;
  /**
   * `policies` holds nothing read (a repository with no checkout, a folder not known until apply): its absent labels
   * are not removed ones. Where it is false or absent, `policies` is what was read (of the folder, the checkout, or
   * what the state recorded), and is compared even where `policiesUnknown` says it may not be what is enforced.
   */
  policiesNotRead?: boolean;
  /** Terraform policy: what each block enforces besides its level. */
  blocks?: Readonly<Record<string, PolicyBlockShape>>;
  scope?: EnforcedScope;
  /**
   * Memberships the resource owns: `policySetIds` of a policy, `policyIds` of a set. `whenReplaced` explains a loss
   * where the new list holds an id not known until apply (the other side is replaced, and gets a new id).
   */
  memberships?: { property: "policySetIds" | "policyIds"; ids: unknown; whenReplaced?: string };
  overridable?: boolean | null;
  /** Labels whose level is a secret (read from a sensitive parameter): findings say "(secret)" for it. */
  secretLabels?: ReadonlySet<string>;
}

export interface Finding {
  text: string;
  /** The guard could not evaluate it: it counts as weaker, and the refusal says why it cannot be compared. */
  uncomparable: boolean;
  /** A membership lost: the ids, for the caller to name (a policy id with its name). */
  lostIds?: string[];
}

/**
 * Every way `after` enforces less than `before`, in a fixed order. `describe` names a membership's ids (a policy
 * with its name) where the caller can; `what` is "policy" or "policy set", for a kind change.
 */
export function weakenings(
  before: Enforcement,
  after: Enforcement,
  what: "policy" | "policy set" | "policy folder",
): Finding[] {
  const findings: Finding[] = [];
  const weaker = (text: string) => findings.push({ text, uncomparable: false });
  const uncomparable = (text: string) => findings.push({ text, uncomparable: true });
  if (before.kind !== after.kind) {
    uncomparable(
      `kind goes from ${before.kind} to ${after.kind}, which replaces the ${what}: policies of two kinds cannot be ` +
        "compared",
    );
  }
  // What can be seen is compared even where something else cannot: a lowering visible in a checkout is a lowering.
  if (!after.policiesNotRead) {
    for (const finding of policyWeakenings(before, after)) findings.push(finding);
    for (const finding of blockWeakenings(before.blocks ?? {}, after.blocks ?? {})) findings.push(finding);
  }
  // An unknown is never equal to another: the same text before and after says the same thing cannot be read, not
  // that what it stands for stayed the same.
  const [unknownBefore, unknownAfter] = [before.policiesUnknown ?? null, after.policiesUnknown ?? null];
  if (unknownBefore !== null || unknownAfter !== null) {
    uncomparable(
      unknownAfter === null
        ? `what it enforces now cannot be read here (${unknownBefore}), so the new policies cannot be compared with it`
        : unknownBefore === null
          ? `the new policies cannot be read here (${unknownAfter}), so they cannot be compared with the ${Object.keys(before.policies).length} it enforces now`
          : unknownBefore === unknownAfter
            ? `what it enforces cannot be read here (${unknownAfter}), so no change of its policies can be compared`
            : `what it enforces cannot be read here, before (${unknownBefore}) or after (${unknownAfter})`,
    );
  }
  if (before.scope && after.scope) {
    for (const finding of scopeWeakenings(before.scope, after.scope)) findings.push(finding);
  }
  if (before.memberships && after.memberships) {
    const property = after.memberships.property;
    const lost = lostIds(before.memberships.ids, after.memberships.ids);
    if (lost === "unknown") {
      uncomparable(`${property} is not known until apply, so it may lose what it holds now`);
    } else if (lost.length > 0) {
      const replaced =
        Array.isArray(after.memberships.ids) && after.memberships.ids.some(isUnknown) && after.memberships.whenReplaced
          ? `: ${after.memberships.whenReplaced}`
          : "";
      findings.push({
        text: `${property === "policySetIds" ? `it leaves ${setsPhrase(lost)}` : `policyIds loses ${lost.join(", ")}`}${replaced}`,
        uncomparable: false,
        lostIds: lost,
      });
    }
  }
  if (before.overridable !== true && after.overridable === true) weaker("overridable is turned on");
  return findings;
}

function setsPhrase(ids: string[]): string {
  return ids.length === 1 ? `policy set ${ids[0]}` : `policy sets ${ids.join(", ")}`;
}

function policyWeakenings(before: Enforcement, after: Enforcement): Finding[] {
  const findings: Finding[] = [];
  for (const label of Object.keys(before.policies).sort()) {
    const from = before.policies[label] as string;
    const to = Object.hasOwn(after.policies, label) ? after.policies[label] : undefined;
    const named = label === "" ? "enforcementLevel" : `policy "${label}"`;
    const secret = before.secretLabels?.has(label) || after.secretLabels?.has(label);
    const shown = (level: string) => (secret ? "(secret)" : level);
    if (to === undefined) {
      findings.push({ text: `${named} (${shown(from)}) is removed`, uncomparable: false });
      continue;
    }
    const finding = levelFinding(before.kind, from, after.kind, to);
    if (finding) findings.push({ text: `${named} goes from ${shown(from)} to ${shown(to)}${finding.why}`, ...finding });
  }
  return findings;
}

/** Whether a level change weakens; a level either side cannot evaluate compares as weaker unless `to` is the top. */
function levelFinding(
  fromKind: PolicySetKind,
  from: string,
  toKind: PolicySetKind,
  to: string,
): { uncomparable: boolean; why: string } | undefined {
  if (from === to && fromKind === toKind) return undefined;
  if (to === strongestLevel(toKind)) return undefined;
  const [strengthBefore, strengthAfter] = [enforcementStrength(fromKind, from), enforcementStrength(toKind, to)];
  if (strengthBefore === undefined || strengthAfter === undefined) {
    return { uncomparable: true, why: ", which cannot be compared: only the levels of the kind can be" };
  }
  return strengthAfter < strengthBefore ? { uncomparable: false, why: "" } : undefined;
}

function blockWeakenings(
  before: Readonly<Record<string, PolicyBlockShape>>,
  after: Readonly<Record<string, PolicyBlockShape>>,
): Finding[] {
  const findings: Finding[] = [];
  for (const address of Object.keys(before).sort()) {
    const old = before[address] as PolicyBlockShape;
    const now = Object.hasOwn(after, address) ? after[address] : undefined;
    if (!now) continue; // A removed block is a removed policy: said once, by policyWeakenings.
    if (now.enforce < old.enforce) {
      const lost = old.enforce - now.enforce;
      findings.push({
        text: `${address} loses ${lost} enforce block${lost === 1 ? "" : "s"} (${old.enforce} to ${now.enforce})`,
        uncomparable: false,
      });
    }
    const [oldOperations, newOperations] = [old.operations ?? [], now.operations ?? []];
    if (old.operations !== null || now.operations !== null) {
      const evaluable = (operations: string[]) => !operations.some((operation) => operation.startsWith("<"));
      if (!evaluable(oldOperations) || !evaluable(newOperations)) {
        if (oldOperations.join() !== newOperations.join()) {
          findings.push({
            text: `${address}: operations go from ${oldOperations.join(", ")} to ${newOperations.join(", ")}, which cannot be compared`,
            uncomparable: true,
          });
        }
      } else {
        const dropped = oldOperations.filter((operation) => !newOperations.includes(operation));
        if (dropped.length > 0) {
          findings.push({ text: `${address} no longer applies to ${dropped.join(", ")}`, uncomparable: false });
        }
      }
    }
    // An expression the check cannot evaluate is compared through what it reads: the same text over another input,
    // parameter or local may be another level or filter.
    if (old.readsDigest && now.readsDigest && old.readsDigest !== now.readsDigest) {
      findings.push({
        text:
          `${address}'s level or filter is an expression this check cannot evaluate, and an input, parameter or ` +
          "local it may read changed, so it cannot be compared",
        uncomparable: true,
      });
    }
    if (now.filter !== null && now.filter !== old.filter) {
      findings.push(
        old.filter === null
          ? { text: `${address} gains a filter, ${now.filter}`, uncomparable: false }
          : {
              text: `${address}'s filter goes from ${old.filter} to ${now.filter}, which cannot be compared: a filter is not evaluated`,
              uncomparable: true,
            },
      );
    }
  }
  return findings;
}

function scopeWeakenings(before: EnforcedScope, after: EnforcedScope): Finding[] {
  const findings: Finding[] = [];
  if (before.global && !after.global) findings.push({ text: "global is turned off", uncomparable: false });
  for (const property of ["workspaceIds", "projectIds"] as const) {
    // A global set applies everywhere: its lists say nothing.
    if (after.global) continue;
    const lost = lostIds(before.global ? [] : before[property], after[property]);
    if (lost === "unknown") {
      findings.push({ text: `${property} is not known until apply`, uncomparable: true });
    } else if (lost.length > 0) {
      findings.push({ text: `${property} loses ${lost.join(", ")}`, uncomparable: false });
    }
  }
  for (const property of ["excludedWorkspaceIds", "excludedProjectIds"] as const) {
    const gained = lostIds(after[property], before[property]);
    if (gained === "unknown" || (Array.isArray(after[property]) && after[property].some(isUnknown))) {
      findings.push({
        text: `${property} holds a value not known until apply, which may exclude what the set covers now`,
        uncomparable: true,
      });
    } else if (gained.length > 0) {
      findings.push({ text: `${property} gains ${gained.join(", ")}`, uncomparable: false });
    }
  }
  return findings;
}

/** The ids of `before` that `after` no longer holds; "unknown" when `after` as a whole is not known yet. */
function lostIds(before: unknown, after: unknown): string[] | "unknown" {
  const held = Array.isArray(before) ? (before as unknown[]).filter((id): id is string => typeof id === "string") : [];
  if (held.length === 0) return [];
  if (!Array.isArray(after)) return isUnknown(after) ? "unknown" : held;
  return held.filter((id) => !after.includes(id));
}

/** The refusal's text for `findings` of `subject`: every one, and why those that cannot be compared cannot. */
export function describeFindings(subject: string, findings: readonly Finding[]): string {
  const texts = findings.map((finding) => finding.text);
  const uncomparable = findings.filter((finding) => finding.uncomparable).length;
  const verb =
    uncomparable === findings.length
      ? "cannot be compared with what is enforced now, so it counts as weakening governance"
      : "weakens governance";
  return `${subject} ${verb}: ${texts.join("; ")}`;
}

/** A set's content as a baseline: the policies and blocks it enforces, or why they cannot be read here. */
export interface ContentBaseline {
  folderPolicies: Record<string, string>;
  policyBlocks: Record<string, PolicyBlockShape>;
  policiesUnknown: string | null;
  checkedCommit: string | null;
}

/**
 * A baseline at least as strict as each of `a` and `b`, for a change that failed half-way (which of them the service
 * enforces is not known): every policy of either at the stronger level (one that cannot be compared wins, as it
 * compares as stronger than all but the strongest), every block with what either enforces, and unknown where
 * either is.
 */
export function strongerBaseline(a: ContentBaseline, b: ContentBaseline, kind: PolicySetKind): ContentBaseline {
  // Own properties throughout: a label is any text, `__proto__` included (see wire-keys.ts).
  const folderPolicies: Record<string, string> = { ...a.folderPolicies };
  for (const [label, level] of Object.entries(b.folderPolicies)) {
    const other = folderPolicies[label];
    if (other === undefined) {
      setOwn(folderPolicies, label, level);
      continue;
    }
    const [mine, theirs] = [enforcementStrength(kind, other), enforcementStrength(kind, level)];
    if (theirs === undefined || (mine !== undefined && theirs > mine)) setOwn(folderPolicies, label, level);
  }
  const policyBlocks: Record<string, PolicyBlockShape> = { ...a.policyBlocks };
  for (const [address, block] of Object.entries(b.policyBlocks)) {
    const other = policyBlocks[address];
    const merged: PolicyBlockShape = other
      ? {
          enforce: Math.max(other.enforce, block.enforce),
          operations:
            other.operations === null && block.operations === null
              ? null
              : [...new Set([...(other.operations ?? []), ...(block.operations ?? [])])].sort(),
          filter: other.filter === null || block.filter === null ? null : other.filter,
          levelInputs: [...new Set([...(other.levelInputs ?? []), ...(block.levelInputs ?? [])])],
          // Which of the two the service runs is not known: no digest compares equal to the next one.
          ...(other.readsDigest || block.readsDigest
            ? {
                readsDigest:
                  other.readsDigest === block.readsDigest ? other.readsDigest : "unknown after a failure half-way",
              }
            : {}),
        }
      : block;
    setOwn(policyBlocks, address, merged);
  }
  return {
    folderPolicies,
    policyBlocks,
    policiesUnknown: a.policiesUnknown ?? b.policiesUnknown,
    checkedCommit: a.checkedCommit === b.checkedCommit ? a.checkedCommit : null,
  };
}
