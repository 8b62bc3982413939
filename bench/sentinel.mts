// The Sentinel parser and evaluator against the public libraries of the corpus (../shared/corpus/sentinel from the
// project's root, or SENTINEL_CORPUS), read in place: every file parsed, the libraries' own test cases run (the share
// that gives the expected value, each disagreement and each case not run with its reason), a mutation test in full
// (single-token deletions and swaps the specification makes invalid), and what a preview pays: the parse of a
// 300-file library (goal <= 0.5 s) and a run of 200 test cases (goal <= 5 s), each in a fresh process as a preview's
// provider is, medians of BENCH_RUNS (default 3). Writes bench/results/sentinel.md. Nothing is asserted.
//
//   npm run bench:sentinel
//   BENCH_MUTATIONS=5000 npm run bench:sentinel
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { repoRoot, resultsDir } from "./engine/settings.mts";

// The built library is measured, as users run it; typed from the source so typechecking needs no build.
const distMeasure = join(repoRoot, "dist", "policy-code", "sentinel", "measure.js");
const measure = (await import(distMeasure)) as typeof import("../src/policy-code/sentinel/measure.ts");

const corpus = process.env.SENTINEL_CORPUS ?? join(repoRoot, "..", "shared", "corpus", "sentinel");
const runs = Number(process.env.BENCH_RUNS ?? 3);
const mutationCount = Number(process.env.BENCH_MUTATIONS ?? 2000);
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

if (!existsSync(corpus)) {
  console.log(`The Sentinel corpus is not at ${corpus}: set SENTINEL_CORPUS to its folder.`);
  process.exit(0);
}

/** Seconds a fresh Node.js process takes for `work` (a script given the measure module and the corpus), library load included. */
async function inFreshProcess(work: string): Promise<number> {
  const script = `const started = performance.now();
const measure = require(${JSON.stringify(distMeasure)});
const corpus = ${JSON.stringify(corpus)};
Promise.resolve((async () => { ${work} })()).then(() => console.log((performance.now() - started) / 1000));`;
  const { stdout } = await promisify(execFile)(process.execPath, ["-e", script], { maxBuffer: 16 * 1024 * 1024 });
  return Number(stdout.trim().split("\n").at(-1));
}

const lines: string[] = [];
const say = (line = "") => {
  console.log(line);
  lines.push(line);
};

const files = measure.sentinelFiles(corpus);
const failures = measure.parseFiles(corpus, files);
say(`# The Sentinel parser and evaluator on the public libraries, ${new Date().toISOString().slice(0, 10)}`);
say();
say("`npm run bench:sentinel`: the corpus's three libraries (terraform-guides third generation,");
say("policy-library-azure-storage-terraform, policy-library-tfe-terraform), read in place.");
say();
say("## Parse");
say();
say(`${files.length} .sentinel files (policies, modules, mocks): ${files.length - failures.length} parse.`);
for (const failure of failures) say(`- does not parse: ${failure.file}: ${failure.message}`);
say();
say("## The libraries' own test cases");
say();
const agreement = await measure.caseAgreement(corpus);
for (const line of measure.agreementLines(agreement)) say(line.startsWith("  ") ? `- ${line.trim()}` : line);
say();
say("## Mutations");
say();
const made = measure.mutations(corpus, files, mutationCount);
const { caught, missed } = measure.mutationScore(made);
say(
  `${made.length} single-token mutations of the corpus's files: ${caught} caught (${measure.percent(caught, made.length)}).`,
);
const kinds = new Map<string, number>();
for (const mutation of made) kinds.set(mutation.kind, (kinds.get(mutation.kind) ?? 0) + 1);
say();
say("| mutation | count |");
say("| --- | --- |");
for (const [kind, count] of [...kinds].sort((a, b) => b[1] - a[1])) say(`| ${kind.replace(/\|/g, "\\|")} | ${count} |`);
for (const mutation of missed) say(`- missed: ${mutation.file}: ${mutation.change}`);
say();
say(`## What a preview pays (fresh process, library load included; median of ${runs})`);
say();
const library = files.slice(0, 300);
const parseTimes: number[] = [];
const caseTimes: number[] = [];
for (let run = 0; run < runs; run++) {
  parseTimes.push(await inFreshProcess(`measure.parseFiles(corpus, ${JSON.stringify(library)});`));
  caseTimes.push(await inFreshProcess("await measure.caseAgreement(corpus, 200);"));
}
say("| measure | seconds | goal |");
say("| --- | --- | --- |");
say(
  `| parse of a 300-file library (the corpus's first 300 files by path) | ${median(parseTimes).toFixed(3)} | <= 0.5 |`,
);
say(
  `| a test run of 200 cases (the corpus's first 200, with their mocks and modules) | ${median(caseTimes).toFixed(3)} | <= 5 |`,
);
say();
say(
  `Runs: parse ${parseTimes.map((time) => time.toFixed(3)).join(", ")}; cases ${caseTimes.map((time) => time.toFixed(3)).join(", ")}.`,
);
await writeFile(join(resultsDir, "sentinel.md"), `${lines.join("\n")}\n`);
