import { relative } from "node:path";
import type { RegoVersion } from "../policy-code/opa";
import { describeCase, runFolderTests } from "../policy-code/policy-tests";

// What a folder's own tests say at preview (the text without the folder's name, which the caller puts first), for PolicySet and PolicyFolder alike: nothing where it has no test or
// every case passes; where a case fails, a warning, or with tfe:requirePolicyTests a refusal, naming the case and the
// rule. A case that cannot run here (http, a plugin) is neither: it is no failing test.

/** Cases named in one message at the most; the rest are counted. */
const shownCases = 5;

export async function judgeFolderTests(
  folder: string,
  regoVersion: RegoVersion,
  required: boolean,
): Promise<{ refusal?: string; warning?: string }> {
  let failed: string[];
  let total: number;
  try {
    const results = await runFolderTests(folder, { regoVersion });
    total = results.length;
    failed = results.filter((result) => result.verdict === "fail").map(describeCase);
  } catch (error) {
    total = 1;
    failed = [`the tests could not be run: ${(error as Error).message}`];
  }
  if (failed.length === 0) return {};
  const listed = failed.slice(0, shownCases).join("; ");
  const more = failed.length > shownCases ? `; and ${failed.length - shownCases} more` : "";
  const text = `${failed.length} of the folder's ${total} test cases fail: ${listed}${more}`;
  const run = `tfe-governance test ${relative(process.cwd(), folder) || "."} runs them`;
  if (required) {
    return {
      refusal:
        `${text}. tfe:requirePolicyTests (or TFE_REQUIRE_POLICY_TESTS) refuses a folder whose tests fail: fix the ` +
        `policy or its case (${run})`,
    };
  }
  return {
    warning: `${text} (${run}; set tfe:requirePolicyTests true, or TFE_REQUIRE_POLICY_TESTS=true in CI, to refuse such a change)`,
  };
}
