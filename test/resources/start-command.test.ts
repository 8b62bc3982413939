import { afterEach, describe, expect, it } from "vitest";
import { declareMembership } from "../../src/resources/memberships";
import { firstThisCommand } from "../../src/resources/provider-context";
import { startCommand as startCommandOf } from "../../src/resources/provider-set";
import { providers } from "../../src/resources/providers";

const startCommand = () => startCommandOf(providers);

// A plugin the engine attached to (PULUMI_DEBUG_PROVIDERS) serves command after command in one process. Each command
// starts as a process started for it would: what the last one read, claimed, declared, said or cancelled is gone.
// test/e2e/yaml-program.test.ts runs the same under the real engine (a Ctrl-C, a refused token, an outside change).

describe("startCommand: a new command of a long-lived plugin remembers nothing of the last", () => {
  afterEach(() => startCommand());

  it("gives each provider a new context: a Ctrl-C, a claimed name and a listing stay with the last command", () => {
    const before = providers.Policy;
    before.context.cancel();
    before.context.claimed.set("pol-adopted", "adopted");
    startCommand();
    expect(providers.Policy).not.toBe(before);
    expect(providers.Policy.context.cancelled).toBe(false);
    expect(providers.Policy.context.adoptedThisOperation("pol-adopted")).toBe(false);
    // The last command's objects are left as they were, for a call of its that is still finishing.
    expect(before.context.cancelled).toBe(true);
  });

  it("forgets the memberships declared and what was said once", () => {
    expect(declareMembership("pol-a", "polset-1", "Policy a (policySetIds)")).toBeUndefined();
    expect(firstThisCommand("rego-unchecked")).toBe(true);
    expect(firstThisCommand("rego-unchecked")).toBe(false);
    startCommand();
    // The membership moved to the set's own policyIds in the next command: one owner, not "declared twice".
    expect(declareMembership("pol-a", "polset-1", "PolicySet s (policyIds)")).toBeUndefined();
    expect(firstThisCommand("rego-unchecked")).toBe(true);
  });
});
