import { describe, expect, it, vi } from "vitest";
import { noReach, type Reach, widens } from "../../src/impact";
import type { PolicySetOutputs } from "../../src/resources/policy-set";
import { sayWhomSetBlocks } from "../../src/resources/policy-set/stricter";
import { ProviderContext, unknownValue } from "../../src/resources/provider-context";
import { useSeededServer } from "../seeded-server";

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

// What cannot be judged is said, and refused where the stack refuses what it cannot judge: a widened set whose
// policies are not known here (a repository with no checkout), a scope not known until apply.
describe("a set made stricter that cannot be judged", () => {
  const organization = "acme";
  const token = "set-stricter-token-0123456789";
  const seeded = useSeededServer({
    organization,
    token,
    workspaceIds: ["ws-StricterA0000001", "ws-StricterB0000001"],
  });

  const set = (declared: Record<string, unknown>) =>
    ({
      organization,
      name: "from-vcs",
      kind: "sentinel",
      ...noReach,
      folderPolicies: {},
      policyIds: [],
      policiesUnknown: null,
      ...declared,
    }) as unknown as PolicySetOutputs;

  async function said(olds: PolicySetOutputs | undefined, news: PolicySetOutputs, env: Record<string, string> = {}) {
    const context = new ProviderContext();
    context.useClient(seeded.client);
    const messages: string[] = [];
    const spy = vi.spyOn(console, "error").mockImplementation((line: unknown) => void messages.push(String(line)));
    vi.stubEnv("TFE_REQUIRE_NO_BLOCKED_RUNS", env.TFE_REQUIRE_NO_BLOCKED_RUNS ?? "");
    try {
      await sayWhomSetBlocks(context, undefined, olds, news);
      return messages;
    } catch (error) {
      return [`refused: ${(error as Error).message}`];
    } finally {
      spy.mockRestore();
      vi.unstubAllEnvs();
    }
  }

  it("says a widened set whose policies are not known here is not read, and refuses it where asked", async () => {
    const olds = set({ workspaceIds: ["ws-StricterA0000001"], policiesUnknown: "no checkout of acme/library" });
    const news = set({
      workspaceIds: ["ws-StricterA0000001", "ws-StricterB0000001"],
      policiesUnknown: "no checkout of acme/library",
    });
    expect(await said(olds, news)).toEqual([
      'info: policy set "from-vcs" widened: whom it would block is not known: its policies are not known here (no checkout of acme/library)',
    ]);
    expect(await said(olds, news, { TFE_REQUIRE_NO_BLOCKED_RUNS: "true" })).toEqual([
      expect.stringMatching(
        /^refused: policy set "from-vcs" widened: whom it would block is not known: its policies are not known here .*TFE_REQUIRE_NO_BLOCKED_RUNS=true refuses a stricter change of which it is not known whom it would block/,
      ),
    ]);
  });

  it("says a scope not known until apply is not read, and says nothing of a set that changes no reach or level", async () => {
    const olds = set({ workspaceIds: ["ws-StricterA0000001"], folderPolicies: { "require-tags": "hard-mandatory" } });
    expect(await said(olds, { ...olds, workspaceIds: [unknownValue] } as PolicySetOutputs)).toEqual([
      'info: policy set "from-vcs": whom it would block is not known: its scope is not known until apply',
    ]);
    const before = seeded.server.requestLog.entries().length;
    expect(await said(olds, { ...olds, description: "new words" } as PolicySetOutputs)).toEqual([]);
    expect(seeded.server.requestLog.entries().length).toBe(before);
  });
});
