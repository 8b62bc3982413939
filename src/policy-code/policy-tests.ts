import { readdirSync, statSync } from "node:fs";
import { basename, dirname, join, relative, resolve, sep } from "node:path";
import { Opa, OpaError, type OpaTestResult, type RegoVersion } from "./opa";
import { type CaseResult, findPolicyTests, runSentinelTests } from "./sentinel/runner";

/**
 * A policy folder's own tests, whatever its kind: Sentinel test cases (`test/<policy>/*.hcl`, run by this library's
 * evaluator, no Sentinel binary) and Rego tests (`*_test.rego`, run by the `opa` on hand). One report for both, for
 * `tfe-governance test` and for the preview of a folder (`tfe:requirePolicyTests`).
 */

export type { CaseResult, RuleResult, Verdict } from "./sentinel/runner";

export interface FolderTestOptions {
  /** Test only this policy (a `.sentinel` file of the folder). */
  only?: string;
  /** The Rego dialect of the folder's OPA tests: `v0` (default, as the service's `latest` runtime) or `v1`. */
  regoVersion?: RegoVersion;
  /** The `opa` to run Rego tests with; default: `opa` on PATH. */
  opaPath?: string;
  /** The moment Sentinel's `time.now` gives (milliseconds since the epoch), where a case does not mock time. */
  now?: number;
}

/** Runs every test of the folder; paths in the results are relative to it. */
export async function runFolderTests(folder: string, options: FolderTestOptions = {}): Promise<CaseResult[]> {
  const root = resolve(folder);
  if (!statSync(root, { throwIfNoEntry: false })?.isDirectory())
    throw new Error(`no folder ${folder} (resolved to ${root})`);
  let policies = findPolicyTests(root);
  if (options.only !== undefined) {
    const only = resolve(options.only);
    policies = policies.filter((policy) => policy.policy === only);
    if (policies.length === 0) {
      throw new Error(
        `${options.only} has no test cases: they go in test/${basename(only, ".sentinel")}/*.hcl beside it`,
      );
    }
  }
  const results = await runSentinelTests(root, policies, options.now === undefined ? {} : { now: options.now });
  if (options.only === undefined) results.push(...(await runRegoTests(root, options)));
  return results;
}

/** The folder of `path` and the policy to test: a folder tests all it holds, a `.sentinel` file its own cases. */
export function testTarget(path: string): { folder: string; only?: string } {
  const resolved = resolve(path);
  if (statSync(resolved, { throwIfNoEntry: false })?.isFile()) return { folder: dirname(resolved), only: resolved };
  return { folder: resolved };
}

const skipped = new Set(["node_modules", ".git", ".terraform"]);

function regoTestFiles(root: string): string[] {
  const found: string[] = [];
  const visit = (directory: string) => {
    for (const entry of readdirSync(directory, { withFileTypes: true })) {
      if (entry.isDirectory()) {
        if (!entry.name.startsWith(".") && !skipped.has(entry.name)) visit(join(directory, entry.name));
      } else if (entry.name.endsWith("_test.rego")) {
        found.push(relative(root, join(directory, entry.name)).split(sep).join("/"));
      }
    }
  };
  visit(root);
  return found.sort();
}

async function runRegoTests(root: string, options: FolderTestOptions): Promise<CaseResult[]> {
  const files = regoTestFiles(root);
  if (files.length === 0) return [];
  const opa = await Opa.find(options.opaPath);
  const record = (file: string, verdict: CaseResult["verdict"], reason: string): CaseResult => ({
    kind: "opa",
    file,
    policy: "",
    verdict,
    reason,
    rules: [],
    printed: [],
  });
  if (!opa) {
    const why = options.opaPath ? `${options.opaPath} cannot be run` : "no opa binary on PATH";
    return files.map((file) => record(file, "not-run", `${why}: install OPA to run Rego tests`));
  }
  let tests: OpaTestResult[];
  try {
    tests = await opa.test(options.regoVersion ?? "v0", root);
  } catch (error) {
    if (!(error instanceof OpaError)) throw error;
    const message = error.problems
      .map(
        (problem) =>
          `${problem.location ? `${problem.location.file}:${problem.location.row}: ` : ""}${problem.message}`,
      )
      .join("; ");
    return files.map((file) => record(file, "fail", `opa test cannot load the folder: ${message}`));
  }
  // OPA runs tests in parallel and lists them in the order they finished: the report keeps the files' order.
  const place = (test: OpaTestResult) =>
    `${test.location?.file ?? ""}\u0000${String(test.location?.row ?? 0).padStart(9, "0")}`;
  tests.sort((a, b) => (place(a) < place(b) ? -1 : place(a) > place(b) ? 1 : 0));
  return tests.map((test) => {
    const error = typeof test.error === "string" ? test.error : test.error?.message;
    const verdict = test.skip ? "not-run" : test.fail || error ? "fail" : "pass";
    const computed = error ? `error: ${error}` : verdict === "not-run" ? null : !test.fail;
    return {
      kind: "opa",
      file: test.location?.file.replace(/^\.\//, "") ?? "",
      policy: test.package,
      verdict,
      ...(verdict === "fail" ? { reason: error ? `${test.name} errors: ${error}` : `${test.name} is false` } : {}),
      ...(verdict === "not-run" ? { reason: `${test.name} is skipped (a todo_ test)` } : {}),
      rules: [{ name: test.name, expected: true, computed }],
      printed: test.output ? Buffer.from(test.output, "base64").toString("utf8").split("\n").filter(Boolean) : [],
    };
  });
}

/** How many cases passed, failed and were not run. */
export function tally(results: CaseResult[]): { pass: number; fail: number; notRun: number } {
  return {
    pass: results.filter((result) => result.verdict === "pass").length,
    fail: results.filter((result) => result.verdict === "fail").length,
    notRun: results.filter((result) => result.verdict === "not-run").length,
  };
}

/** One line for a case that did not pass: the case, its policy and why. */
export function describeCase(result: CaseResult): string {
  const policy = result.policy ? ` (${result.kind === "opa" ? "package " : ""}${result.policy})` : "";
  return `${result.file}${policy}: ${result.reason ?? result.verdict}`;
}
