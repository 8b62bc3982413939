import { cannotEvaluate } from "../../contract/policies";
import type { ContentBaseline } from "../guard";
import { sameValue } from "../provider-context";
import { setOwn } from "../wire-keys";
import { type PolicySetOutputs, setEnforcement } from "./properties";
import type { ParameterState } from "./requests";

// What a set enforces as its state keeps it (the baseline every later change is compared with), and what the
// service's parameters make of it. No I/O.

export const emptyBaseline: ContentBaseline = {
  folderPolicies: {},
  policyBlocks: {},
  policiesUnknown: null,
  checkedCommit: null,
};

export function baselineOf(props: Partial<PolicySetOutputs>): ContentBaseline {
  const enforcement = setEnforcement(props);
  return {
    folderPolicies: { ...enforcement.policies },
    policyBlocks: { ...enforcement.blocks },
    policiesUnknown: enforcement.policiesUnknown ?? null,
    checkedCommit: props.checkedCommit ?? null,
  };
}

/**
 * The baseline with the service's parameters: a Terraform policy level that reads an input whose parameter changed
 * outside Pulumi is no longer what the baseline says, and cannot be compared.
 */
export function withParametersHeld(
  baseline: ContentBaseline,
  recorded: Record<string, ParameterState>,
  held: Record<string, ParameterState>,
  unseen: ReadonlySet<string> = new Set(),
): ContentBaseline {
  // A parameter changed outside Pulumi, and (for the guard) a sensitive one, whose value the service never shows
  // back: a level that reads it is no longer known, and an expression that may read it cannot be compared.
  const changed = new Set(
    [...Object.keys(recorded), ...Object.keys(held)].filter((key) => !sameValue(recorded[key], held[key])),
  );
  const notKnown = new Set([...changed, ...unseen]);
  if (notKnown.size === 0) return baseline;
  const folderPolicies = { ...baseline.folderPolicies };
  const policyBlocks = { ...baseline.policyBlocks };
  const why = (keys: readonly string[]) =>
    `parameter ${keys.map((input) => `"${input}"`).join(", ")}, ${keys.every((key) => unseen.has(key) && !changed.has(key)) ? "sensitive, whose value the service never shows back" : "changed outside Pulumi"}`;
  for (const [address, block] of Object.entries(baseline.policyBlocks)) {
    const moved = (block.levelInputs ?? []).filter((input) => notKnown.has(input));
    if (moved.length > 0 && Object.hasOwn(folderPolicies, address)) {
      folderPolicies[address] = cannotEvaluate(`a level read from ${why(moved)}`);
    }
    if (block.readsDigest) {
      setOwn(policyBlocks, address, { ...block, readsDigest: `not known: ${why([...notKnown].sort())}` });
    }
  }
  return { ...baseline, folderPolicies, policyBlocks };
}
