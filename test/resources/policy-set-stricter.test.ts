import { describe, expect, it } from "vitest";
import { noReach, type Reach } from "../../src/resources/impact";
import { widens } from "../../src/resources/policy-set/stricter";

// Whether a set's new scope may reach a workspace its old one did not: the test that decides, with no request,
// whether preview reads the runs of the workspaces a scope newly takes in.

const scope = (declared: Partial<Reach>): Reach => ({ ...noReach, ...declared });

describe("a widened scope", () => {
  it("is global turned on, a workspace or project added, or an exclusion lifted", () => {
    expect(widens(scope({ workspaceIds: ["ws-a"] }), scope({ global: true }))).toBe(true);
    expect(widens(scope({ workspaceIds: ["ws-a"] }), scope({ workspaceIds: ["ws-a", "ws-b"] }))).toBe(true);
    expect(widens(scope({}), scope({ projectIds: ["prj-a"] }))).toBe(true);
    expect(
      widens(
        scope({ global: true, excludedWorkspaceIds: ["ws-a"] }),
        scope({ global: true, excludedWorkspaceIds: [] }),
      ),
    ).toBe(true);
    expect(
      widens(scope({ projectIds: ["prj-a"], excludedProjectIds: ["prj-b"] }), scope({ projectIds: ["prj-a"] })),
    ).toBe(true);
  });

  it("is not a narrower or equal scope, nor a global set that stays global with the same exclusions", () => {
    expect(widens(scope({ workspaceIds: ["ws-a", "ws-b"] }), scope({ workspaceIds: ["ws-b"] }))).toBe(false);
    expect(widens(scope({ global: true }), scope({ workspaceIds: ["ws-a"] }))).toBe(false);
    expect(widens(scope({ global: true }), scope({ global: true, excludedWorkspaceIds: ["ws-a"] }))).toBe(false);
    expect(widens(scope({ workspaceIds: ["ws-a"] }), scope({ workspaceIds: ["ws-a"] }))).toBe(false);
  });
});
