import { afterEach, describe, expect, it, vi } from "vitest";
import { noReach, type StricterChange } from "../../src/impact";
import { ProviderContext } from "../../src/resources/provider-context";
import { readImpactOnce, sayImpact, startOperationReads } from "../../src/resources/stricter-changes";
import { useSeededServer } from "../seeded-server";

// Review of issue 51: the settings that ask for certainty. A stack's `tfe:requireNoBlockedRuns` is checked (a value
// other than true or false fails the configuration); the same setting from the environment of a CI job
// (`TFE_REQUIRE_NO_BLOCKED_RUNS`) is taken only where it is the exact text "true": `TRUE` or `1` turns the certainty
// off without a word, and so a change that would have blocked runs goes through. Likewise TFE_IMPACT_WINDOW_DAYS
// that is no whole number falls back to 30 silently.

const organization = "acme";
const token = "review51-settings-token-0123456789";
const workspace = "ws-ReviewSettings01";

const seeded = useSeededServer({
  organization,
  token,
  workspaceIds: [workspace],
  runs: [
    {
      id: "run-ReviewSettings1",
      workspace,
      daysAgo: 1,
      policyResults: [{ policySet: "baseline", policy: "require-tags", level: "advisory", status: "failed" as const }],
    },
  ],
});

const raise: StricterChange = {
  organization,
  kind: "sentinel",
  policies: [{ name: "require-tags", sets: ["baseline"], level: "hard-mandatory" }],
  reach: [{ ...noReach, workspaceIds: [workspace] }],
};

afterEach(() => vi.unstubAllEnvs());

describe("review 51: TFE_REQUIRE_NO_BLOCKED_RUNS as a CI job writes it", () => {
  for (const written of ["TRUE", "True", "1", "yes"]) {
    it(`${written}: refuses the raise that would have blocked a run, or fails naming the variable`, async () => {
      vi.stubEnv("TFE_REQUIRE_NO_BLOCKED_RUNS", written);
      startOperationReads();
      const context = new ProviderContext();
      context.useClient(seeded.client);
      const quiet = vi.spyOn(console, "error").mockImplementation(() => {});
      try {
        const answer = await readImpactOnce(context, raise);
        expect(answer.verdict).toBe("blocked");
        // Either the certainty it asks for (a refusal), or a clear error naming TFE_REQUIRE_NO_BLOCKED_RUNS: never a
        // silent pass of a change that would have blocked run-ReviewSettings1.
        await expect(
          sayImpact(context, undefined, 'policy "require-tags" at hard-mandatory', answer, false),
        ).rejects.toThrow(/TFE_REQUIRE_NO_BLOCKED_RUNS|requireNoBlockedRuns/);
      } finally {
        quiet.mockRestore();
      }
    });
  }
});
