// How well the parser and the evaluator do on a library of real Sentinel code (the public libraries of the corpus,
// read in place): every file parsed, every test case run and its verdict compared with what the case expects, and
// syntax errors injected into real files (a mutation test). Shared by the corpus test and `npm run bench:sentinel`.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { SentinelSyntaxError, type Token, tokenize } from "./lexer";
import { parseSentinel } from "./parser";
import { type CaseResult, findPolicyTests, runSentinelTests } from "./runner";

/** Every `.sentinel` file under `root`, sorted. */
export function sentinelFiles(root: string): string[] {
  const found: string[] = [];
  const visit = (directory: string) => {
    for (const entry of readdirSync(directory, { withFileTypes: true })) {
      const path = join(directory, entry.name);
      if (entry.isDirectory() && !entry.name.startsWith(".")) visit(path);
      else if (entry.isFile() && entry.name.endsWith(".sentinel")) found.push(path);
    }
  };
  visit(root);
  return found.sort();
}

/** Parses each file; the ones that fail, with the parser's message. */
export function parseFiles(root: string, files: string[]): { file: string; message: string }[] {
  const failures: { file: string; message: string }[] = [];
  for (const file of files) {
    try {
      parseSentinel(readFileSync(file, "utf8"));
    } catch (error) {
      if (!(error instanceof SentinelSyntaxError)) throw error;
      failures.push({ file: relative(root, file).split(sep).join("/"), message: error.message });
    }
  }
  return failures;
}

export interface Agreement {
  results: CaseResult[];
  /** Cases whose every rule gave the expected value. */
  agreeing: CaseResult[];
  /** Cases run whose rules did not all give the expected value (a verdict of the case file's "fail"). */
  disagreeing: CaseResult[];
  notRun: CaseResult[];
  /** Cases where we computed main = true and the file expects false: a policy we would let through. */
  falsePasses: CaseResult[];
}

/** Runs every test case under `root` and sorts the results by agreement. */
export async function caseAgreement(root: string, limit?: number): Promise<Agreement> {
  const policies = findPolicyTests(root);
  let budget = limit ?? Number.POSITIVE_INFINITY;
  const chosen = policies.flatMap((policy) => {
    const cases = policy.cases.slice(0, Math.max(0, budget));
    budget -= cases.length;
    return cases.length > 0 ? [{ policy: policy.policy, cases }] : [];
  });
  const results = await runSentinelTests(root, chosen);
  const main = (result: CaseResult, side: "expected" | "computed") =>
    result.rules.find((rule) => rule.name === "main")?.[side];
  return {
    results,
    agreeing: results.filter((result) => result.verdict === "pass"),
    disagreeing: results.filter((result) => result.verdict === "fail"),
    notRun: results.filter((result) => result.verdict === "not-run"),
    falsePasses: results.filter((result) => main(result, "expected") === false && main(result, "computed") === true),
  };
}

/** A deterministic source of numbers in [0, 1) (a linear congruential generator), so a run's mutations repeat. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 4294967296;
  };
}

export interface Mutation {
  file: string;
  /** What was changed and where: `deleted "}" at 12:1`. */
  change: string;
  kind: string;
  source: string;
}

const openers = new Set(["(", "[", "{"]);
const closers = new Set([")", "]", "}"]);
const assignments = new Set(["=", "+=", "-=", "*=", "/=", "%="]);
/** Binary operators whose removal leaves two operands side by side. Not + and -, which are also unary. */
const binaryOperators = new Set([
  "==",
  "!=",
  "<",
  "<=",
  ">",
  ">=",
  "*",
  "/",
  "%",
  "and",
  "or",
  "xor",
  "is",
  "in",
  "contains",
  "matches",
  "else",
]);
/** Keywords that start a construct: without them what follows cannot stand. */
const leadingKeywords = new Set([
  "rule",
  "if",
  "for",
  "import",
  "param",
  "filter",
  "all",
  "any",
  "map",
  "case",
  "when",
]);

/**
 * The kind of single-token change the specification makes invalid for the token at `index` (source tokens only, the
 * inserted semicolons left out). Undefined where the change could leave valid code: a trailing comma, `a[:2]`'s
 * colon, a separator before `(`, `[`, `.`, `+` or `-` (which could continue the operand before it).
 */
function mutationKind(tokens: Token[], index: number): "delete" | "swap" | undefined {
  const token = tokens[index] as Token;
  const next = tokens[index + 1];
  const previous = tokens[index - 1];
  const sameLine = (a: Token | undefined, b: Token | undefined) =>
    a !== undefined && b !== undefined && a.at.line === b.at.line;
  const text = token.kind === "punct" || token.kind === "keyword" ? token.text : "";
  // What follows could continue the operand before it (`x [1]` indexes, `x (y)` calls, `x -1` subtracts): removing a
  // separator or an operator between them may leave valid code.
  const continues = next !== undefined && ["(", "[", ".", "+", "-"].includes(next.text);
  if (openers.has(text)) return "delete"; // brackets no longer balance
  if (closers.has(text)) {
    // Swapping a closer with the token before closes the construct before its last part, which is left outside.
    return previous && !openers.has(previous.text) && previous.text !== text && index % 2 === 0 ? "swap" : "delete";
  }
  if (continues) return undefined;
  if (text === ",") return next && closers.has(next.text) && sameLine(token, next) ? undefined : "delete";
  if (text === ":") return previous?.text === "[" || next?.text === "]" ? undefined : "delete";
  if (text === "as" || assignments.has(text) || binaryOperators.has(text)) return "delete";
  if (leadingKeywords.has(text)) return "delete";
  if (text === "func") return next?.text === "(" || next?.kind === "ident" ? "delete" : undefined;
  return undefined;
}

/** The offset in `source` of a token (its line and column). */
function offsetOf(lineStarts: number[], token: Token): number {
  return (lineStarts[token.at.line - 1] as number) + token.at.column - 1;
}

/** Up to `count` mutations of the files, each file as likely as any other, each a random eligible token. */
export function mutations(root: string, files: string[], count: number, seed = 53): Mutation[] {
  const random = seededRandom(seed);
  const prepared = files.map((file) => {
    const source = readFileSync(file, "utf8");
    const tokens = tokenize(source).filter((token) => token.kind !== ";" && token.kind !== "eof");
    const lineStarts = [0];
    for (let index = 0; index < source.length; index++) if (source[index] === "\n") lineStarts.push(index + 1);
    const eligible = tokens.map((_, index) => index).filter((index) => mutationKind(tokens, index) !== undefined);
    return { file, source, tokens, lineStarts, eligible };
  });
  const usable = prepared.filter((entry) => entry.eligible.length > 0);
  const made: Mutation[] = [];
  const seen = new Set<string>();
  for (let attempts = 0; made.length < count && attempts < count * 20 && usable.length > 0; attempts++) {
    const entry = usable[Math.floor(random() * usable.length)] as (typeof usable)[number];
    const index = entry.eligible[Math.floor(random() * entry.eligible.length)] as number;
    const key = `${entry.file}:${index}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const token = entry.tokens[index] as Token;
    const kind = mutationKind(entry.tokens, index) as "delete" | "swap";
    const start = offsetOf(entry.lineStarts, token);
    const end = start + token.text.length;
    const shown = relative(root, entry.file).split(sep).join("/");
    if (kind === "delete") {
      made.push({
        file: shown,
        kind: `delete ${token.text}`,
        change: `deleted "${token.text}" at ${token.at.line}:${token.at.column}`,
        source: `${entry.source.slice(0, start)} ${entry.source.slice(end)}`,
      });
    } else {
      const previous = entry.tokens[index - 1] as Token;
      const previousStart = offsetOf(entry.lineStarts, previous);
      const previousEnd = previousStart + previous.text.length;
      made.push({
        file: shown,
        kind: `swap ${token.text} with the token before`,
        change: `swapped "${previous.text}" and "${token.text}" at ${previous.at.line}:${previous.at.column}`,
        source:
          entry.source.slice(0, previousStart) +
          `${token.text} ${entry.source.slice(previousEnd, start)}${previous.text}` +
          entry.source.slice(end),
      });
    }
  }
  return made;
}

/** The mutations the parser refuses and the ones it lets through. */
export function mutationScore(made: Mutation[]): { caught: number; missed: Mutation[] } {
  const missed: Mutation[] = [];
  for (const mutation of made) {
    try {
      parseSentinel(mutation.source);
      missed.push(mutation);
    } catch (error) {
      if (!(error instanceof SentinelSyntaxError)) throw error;
    }
  }
  return { caught: made.length - missed.length, missed };
}

/** A percentage with one decimal. */
export const percent = (part: number, whole: number): string =>
  whole === 0 ? "n/a" : `${((100 * part) / whole).toFixed(1)}%`;

/** The agreement as a report: the share, each case not run and each disagreement with its reason. */
export function agreementLines(agreement: Agreement): string[] {
  const { results, agreeing, disagreeing, notRun, falsePasses } = agreement;
  const run = results.length - notRun.length;
  const lines = [
    `${results.length} test cases: ${agreeing.length} agree (${percent(agreeing.length, results.length)} of all, ` +
      `${percent(agreeing.length, run)} of the ${run} run), ${disagreeing.length} disagree, ${notRun.length} not run; ` +
      `${falsePasses.length} where we say "passes" and the case expects a failure`,
  ];
  const reasons = new Map<string, number>();
  for (const result of notRun) reasons.set(result.reason ?? "", (reasons.get(result.reason ?? "") ?? 0) + 1);
  for (const [reason, count] of reasons) lines.push(`  not run (${count}): ${reason}`);
  for (const result of disagreeing) lines.push(`  disagrees: ${result.file}: ${result.reason}`);
  for (const result of falsePasses) lines.push(`  passes where a failure is expected: ${result.file}`);
  return lines;
}
