import { describe, expect, it } from "vitest";
import { cannotEvaluate } from "../../src/contract/policies";
import { type Enforcement, type PolicyBlockShape, strongerBaseline, weakenings } from "../../src/resources/guard";
import { unknownValue } from "../../src/resources/unknown";

// The one guard every resource's preview goes through: two snapshots of what is enforced, compared. What it cannot
// evaluate counts as weaker, never as "no change".

const scope = {
  global: false,
  workspaceIds: ["ws-a", "ws-b"],
  projectIds: [],
  excludedWorkspaceIds: [],
  excludedProjectIds: [],
};
const set = (overrides: Partial<Enforcement> = {}): Enforcement => ({
  kind: "sentinel",
  policies: { "require-tags": "hard-mandatory", "limit-size": "soft-mandatory" },
  policiesUnknown: null,
  blocks: {},
  scope,
  memberships: { property: "policyIds", ids: [] },
  overridable: null,
  ...overrides,
});
const texts = (before: Enforcement, after: Enforcement) =>
  weakenings(before, after, "policy set").map((finding) => `${finding.uncomparable ? "?" : "-"} ${finding.text}`);

describe("the guard", () => {
  it("finds nothing between a snapshot and itself, or a stronger one", () => {
    expect(texts(set(), set())).toEqual([]);
    expect(
      texts(set(), set({ policies: { "require-tags": "hard-mandatory", "limit-size": "hard-mandatory" } })),
    ).toEqual([]);
    expect(texts(set(), set({ scope: { ...scope, workspaceIds: ["ws-a", "ws-b", "ws-c"] } }))).toEqual([]);
  });

  it("lists every weakening: a level lowered, a policy removed, scope narrowed, exclusions, overridable, members", () => {
    const after = set({
      policies: { "require-tags": "advisory" },
      scope: { ...scope, workspaceIds: ["ws-a"], excludedProjectIds: ["prj-x"] },
      memberships: { property: "policyIds", ids: [] },
      overridable: true,
    });
    const before = set({ memberships: { property: "policyIds", ids: ["pol-1"] } });
    expect(texts(before, after)).toEqual([
      '- policy "limit-size" (soft-mandatory) is removed',
      '- policy "require-tags" goes from hard-mandatory to advisory',
      "- workspaceIds loses ws-b",
      "- excludedProjectIds gains prj-x",
      "- policyIds loses pol-1",
      "- overridable is turned on",
    ]);
    expect(texts(set({ scope: { ...scope, global: true, workspaceIds: [] } }), set())).toEqual([
      "- global is turned off",
    ]);
  });

  it("counts what it cannot evaluate as weaker: an expression, a kind change, unreadable content, unknown lists", () => {
    const expression = cannotEvaluate('core::lower("ADVISORY")');
    expect(texts(set(), set({ policies: { "require-tags": expression, "limit-size": "soft-mandatory" } }))).toEqual([
      `? policy "require-tags" goes from hard-mandatory to ${expression}, which cannot be compared: only the levels of the kind can be`,
    ]);
    // The same expression on both sides is the same; the strongest level is never weaker than anything.
    const withExpression = set({ policies: { "require-tags": expression } });
    expect(texts(withExpression, withExpression)).toEqual([]);
    expect(texts(withExpression, set({ policies: { "require-tags": "hard-mandatory" } }))).toEqual([]);
    expect(texts(withExpression, set({ policies: { "require-tags": "soft-mandatory" } }))).toHaveLength(1);

    expect(texts(set(), set({ kind: "opa", policies: {} }))[0]).toMatch(
      /^\? kind goes from sentinel to opa, which replaces the policy set: policies of two kinds cannot be compared$/,
    );
    expect(texts(set(), set({ policiesUnknown: "read from version control with no vcsCheckout" }))).toEqual([
      "? the new policies cannot be read here (read from version control with no vcsCheckout), so they cannot be compared with the 2 it enforces now",
    ]);
    // An unknown is never equal to another, even of the same text; and what can be seen is compared regardless.
    expect(texts(set({ policiesUnknown: "x" }), set({ policiesUnknown: "x" }))).toEqual([
      "? what it enforces cannot be read here (x), so no change of its policies can be compared",
    ]);
    expect(
      texts(
        set({ policiesUnknown: "x" }),
        set({ policiesUnknown: "x", policies: { "require-tags": "advisory", "limit-size": "soft-mandatory" } }),
      ),
    ).toEqual([
      '- policy "require-tags" goes from hard-mandatory to advisory',
      "? what it enforces cannot be read here (x), so no change of its policies can be compared",
    ]);
    // Where nothing of the new policies was read, their absence is no removal: only the unknown is said.
    expect(texts(set(), set({ policiesUnknown: "no checkout", policies: {}, policiesNotRead: true }))).toEqual([
      "? the new policies cannot be read here (no checkout), so they cannot be compared with the 2 it enforces now",
    ]);
    expect(texts(set({ policiesUnknown: "x" }), set())).toHaveLength(1);
    expect(texts(set(), set({ scope: { ...scope, workspaceIds: unknownValue as unknown as string[] } }))).toEqual([
      "? workspaceIds is not known until apply",
    ]);
    expect(texts(set(), set({ scope: { ...scope, excludedWorkspaceIds: [unknownValue] } }))).toHaveLength(1);
  });

  it("compares Terraform policy blocks: enforce removed, operations dropped, a filter added or changed", () => {
    const block: PolicyBlockShape = { enforce: 2, operations: ["create", "update"], filter: null };
    const before = set({ kind: "tfpolicy", policies: { b: "mandatory" }, blocks: { b: block } });
    const changedTo = (changed: Partial<PolicyBlockShape>) =>
      set({ kind: "tfpolicy", policies: { b: "mandatory" }, blocks: { b: { ...block, ...changed } } });
    expect(texts(before, changedTo({ enforce: 1 }))).toEqual(["- b loses 1 enforce block (2 to 1)"]);
    expect(texts(before, changedTo({ operations: ["create"] }))).toEqual(["- b no longer applies to update"]);
    expect(texts(before, changedTo({ filter: "x" }))).toEqual(["- b gains a filter, x"]);
    const filtered = changedTo({ filter: "x" });
    expect(texts(filtered, changedTo({ filter: "y" }))).toEqual([
      "? b's filter goes from x to y, which cannot be compared: a filter is not evaluated",
    ]);
    expect(texts(before, changedTo({ operations: [cannotEvaluate("local.ops")] }))).toHaveLength(1);
  });

  it("keeps, after a change that failed half-way, a baseline at least as strict as either side", () => {
    const merged = strongerBaseline(
      {
        folderPolicies: { a: "mandatory", b: "advisory" },
        policyBlocks: { a: { enforce: 2, operations: ["create"], filter: null } },
        policiesUnknown: null,
        checkedCommit: null,
      },
      {
        folderPolicies: { a: "advisory", b: "mandatory_overridable", c: "advisory" },
        policyBlocks: { a: { enforce: 1, operations: ["update"], filter: "x" } },
        policiesUnknown: null,
        checkedCommit: null,
      },
      "tfpolicy",
    );
    expect(merged.folderPolicies).toEqual({ a: "mandatory", b: "mandatory_overridable", c: "advisory" });
    expect(merged.policyBlocks.a).toEqual({
      enforce: 2,
      operations: ["create", "update"],
      filter: null,
      levelInputs: [],
    });
  });
});
