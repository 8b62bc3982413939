import { parseArgs } from "node:util";
import type { RegoVersion } from "../policy-code/opa";
import { type CaseResult, runFolderTests, tally, testTarget } from "../policy-code/policy-tests";
import { policyTestUsage } from "./policy-test-usage";

// `tfe-governance test`: a policy library's own tests in CI, with no Sentinel binary: its Sentinel test cases run by
// this library's evaluator, its Rego tests by opa. The same run PolicySet and PolicyFolder make at preview under
// tfe:requirePolicyTests.

export async function policyTestMain(
  args: string[],
  io: { out: NodeJS.WritableStream; log: (line: string) => void },
): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      json: { type: "boolean" },
      run: { type: "string" },
      "fail-on-not-run": { type: "boolean" },
      "rego-version": { type: "string" },
      opa: { type: "string" },
      help: { type: "boolean" },
    },
    strict: true,
  });
  if (values.help) {
    io.out.write(`${policyTestUsage}\n`);
    return 0;
  }
  if (positionals.length > 1) {
    io.log("test takes one folder (or one .sentinel file): tfe-governance test --help");
    return 2;
  }
  const regoVersion = values["rego-version"] ?? "v0";
  if (regoVersion !== "v0" && regoVersion !== "v1") {
    io.log(`--rego-version ${regoVersion} is not valid: use v0 or v1`);
    return 2;
  }
  let filter: RegExp | undefined;
  try {
    filter = values.run === undefined ? undefined : new RegExp(values.run);
  } catch (error) {
    io.log(`--run ${values.run}: ${(error as Error).message}`);
    return 2;
  }
  const path = positionals[0] ?? ".";
  let results: CaseResult[];
  try {
    const target = testTarget(path);
    results = await runFolderTests(target.folder, {
      ...(target.only ? { only: target.only } : {}),
      regoVersion: regoVersion as RegoVersion,
      ...(values.opa ? { opaPath: values.opa } : {}),
    });
  } catch (error) {
    io.log(`${path}: ${(error as Error).message}`);
    return 2;
  }
  if (filter) results = results.filter((result) => filter.test(result.file));
  for (const result of results) {
    if (values.json) {
      io.out.write(`${JSON.stringify(result)}\n`);
      continue;
    }
    io.out.write(humanForm(result));
  }
  const counts = tally(results);
  const summary =
    results.length === 0
      ? `no test cases in ${path} (Sentinel: test/<policy>/*.hcl beside <policy>.sentinel; OPA: *_test.rego)`
      : `${counts.pass} passed, ${counts.fail} failed, ${counts.notRun} not run`;
  if (values.json) io.log(summary);
  else io.out.write(`${summary}\n`);
  return counts.fail > 0 || (values["fail-on-not-run"] && counts.notRun > 0) ? 1 : 0;
}

const labels = { pass: "PASS   ", fail: "FAIL   ", "not-run": "NOT RUN" } as const;

/** A case as a person reads it: a failing one with each rule's values and what the policy printed. */
function humanForm(result: CaseResult): string {
  const policy = result.policy ? `  (${result.kind === "opa" ? "package " : ""}${result.policy})` : "";
  const lines = [`${labels[result.verdict]} ${result.file}${policy}`];
  if (result.verdict === "pass") return `${lines[0]}\n`;
  if (result.verdict === "not-run") return `${lines[0]}: ${result.reason}\n`;
  if (result.reason) lines.push(`        ${result.reason}`);
  for (const rule of result.rules) {
    lines.push(
      `        rule ${rule.name}: expected ${JSON.stringify(rule.expected)}, computed ${JSON.stringify(rule.computed)}`,
    );
  }
  for (const line of result.printed) lines.push(`        print: ${line}`);
  return `${lines.join("\n")}\n`;
}
