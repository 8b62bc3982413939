import { relative } from "node:path";
import type { RegoVersion } from "../policy-code/opa";
import { describeCase, runFolderTests } from "../policy-code/policy-tests";

// What a folder's own tests say at preview (the text without the folder's name, which the caller puts first), for
// PolicySet and PolicyFolder alike: nothing where it has no test or every case passes. A case that fails is a warning,
// or with tfe:requirePolicyTests a refusal, naming the case and the rule. A case that could not run here (http, a
// plugin, a construct the evaluator lacks) is no failing test, but no passing one either: it is said as a warning, and
// tfe:requirePolicyTests, a setting that asks for certainty, refuses it, naming the case and why it could not run.

/** Cases named in one message at the most; the rest are counted. */
const shownCases = 5;

export async function judgeFolderTests(
  folder: string,
  regoVersion: RegoVersion,
  required: boolean,
): Promise<{ refusal?: string; warning?: string }> {
  let failed: string[];
  let notRun: string[] = [];
  let total: number;
  try {
    const results = await runFolderTests(folder, { regoVersion });
    total = results.length;
    failed = results.filter((result) => result.verdict === "fail").map(describeCase);
    notRun = results.filter((result) => result.verdict === "not-run").map(describeCase);
  } catch (error) {
    total = 1;
    failed = [`the tests could not be run: ${(error as Error).message}`];
  }
  if (failed.length === 0 && notRun.length === 0) return {};
  const listed = (cases: string[]) => {
    const more = cases.length > shownCases ? `; and ${cases.length - shownCases} more` : "";
    return `${cases.slice(0, shownCases).join("; ")}${more}`;
  };
  const text = [
    ...(failed.length > 0 ? [`${failed.length} of the folder's ${total} test cases fail: ${listed(failed)}`] : []),
    ...(notRun.length > 0
      ? [`${notRun.length} of the folder's ${total} test cases could not run here: ${listed(notRun)}`]
      : []),
  ].join(". ");
  const run = `tfe-governance test ${relative(process.cwd(), folder) || "."} runs them`;
  if (required) {
    const refused = [...(failed.length > 0 ? ["fail"] : []), ...(notRun.length > 0 ? ["could not all run"] : [])];
    const notRunFix =
      notRun.length > 0
        ? "; a case that could not run says why: mock what it lacks in the case, or unset the setting to be warned instead"
        : "";
    return {
      refusal:
        `${text}. tfe:requirePolicyTests (or TFE_REQUIRE_POLICY_TESTS) refuses a folder whose tests ${refused.join(" or ")}: ` +
        `fix the policy or its case (${run})${notRunFix}`,
    };
  }
  return {
    warning: `${text} (${run}; set tfe:requirePolicyTests true, or TFE_REQUIRE_POLICY_TESTS=true in CI, to refuse such a change)`,
  };
}
