// Runs a folder's Sentinel test cases as `sentinel test` lays them out (`test/<policy>/*.hcl` beside
// `<policy>.sentinel`): each case's mocks and modules as imports, its parameters, then every rule it names compared
// with the value it expects. A case this evaluator cannot run says why ("not run"), never "pass".
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve, sep } from "node:path";
import type { Program } from "./ast";
import { NotSupported, PolicyErrorCalled, SentinelRuntimeError } from "./errors";
import { Evaluator, type ImportSource } from "./evaluator";
import type { Position } from "./lexer";
import { parseSentinel, SentinelSyntaxError } from "./parser";
import { standardImport } from "./stdlib";
import { readTestCase, type TestCase } from "./test-case";
import { equal, fromPlain, type HostObject, type Scope, show, toPlain, Undefined, type Value } from "./values";

export type Verdict = "pass" | "fail" | "not-run";

export interface RuleResult {
  name: string;
  expected: unknown;
  /** The rule's value; where it could not be had, why (`error: ...`). */
  computed: unknown;
}

/** One test case's outcome: the record `tfe-governance test --json` prints. */
export interface CaseResult {
  kind: "sentinel" | "opa";
  /** The case's file, relative to the folder tested (`/`-separated). */
  file: string;
  /** The policy's file (Sentinel) or package (OPA). */
  policy: string;
  verdict: Verdict;
  /** Why a case failed or was not run. */
  reason?: string;
  rules: RuleResult[];
  /** What the policy printed, line by line. */
  printed: string[];
}

/** A policy with test cases: its file and the case files, absolute. */
export interface PolicyTests {
  policy: string;
  cases: string[];
}

const skippedDirectories = new Set(["node_modules", ".git", ".terraform"]);

/** Every policy under `root` with a `test/<name>/` folder of cases beside it, in path order. */
export function findPolicyTests(root: string): PolicyTests[] {
  const found: PolicyTests[] = [];
  const visit = (directory: string) => {
    let entries: import("node:fs").Dirent[];
    try {
      entries = readdirSync(directory, { withFileTypes: true });
    } catch {
      return;
    }
    const testFolder = join(directory, "test");
    if (entries.some((entry) => entry.isDirectory() && entry.name === "test")) {
      for (const entry of readdirSync(testFolder, { withFileTypes: true })) {
        const policy = join(directory, `${entry.name}.sentinel`);
        if (!entry.isDirectory() || !isFile(policy)) continue;
        const cases = readdirSync(join(testFolder, entry.name))
          .filter((name) => name.endsWith(".hcl") || name.endsWith(".json"))
          .sort()
          .map((name) => join(testFolder, entry.name, name));
        if (cases.length > 0) found.push({ policy, cases });
      }
    }
    for (const entry of entries) {
      if (entry.isDirectory() && !entry.name.startsWith(".") && !skippedDirectories.has(entry.name)) {
        visit(join(directory, entry.name));
      }
    }
  };
  visit(resolve(root));
  return found.sort((a, b) => (a.policy < b.policy ? -1 : a.policy > b.policy ? 1 : 0));
}

function isFile(path: string): boolean {
  return statSync(path, { throwIfNoEntry: false })?.isFile() ?? false;
}

export interface RunOptions {
  /** The moment `time.now` gives (milliseconds since the epoch); default: when each case starts. */
  now?: number;
}

/** Runs every case of every policy given; paths in the results are relative to `root`. */
export async function runSentinelTests(
  root: string,
  policies: PolicyTests[],
  options: RunOptions = {},
): Promise<CaseResult[]> {
  const programs = new ProgramCache();
  const results: CaseResult[] = [];
  for (const { policy, cases } of policies) {
    for (const file of cases) results.push(await runCase(root, policy, file, programs, options));
  }
  return results;
}

/** Each file parsed once per run, however many cases import it. */
class ProgramCache {
  private readonly programs = new Map<string, Program | SentinelRuntimeError>();

  get(file: string): Program {
    let program = this.programs.get(file);
    if (!program) {
      try {
        program = parseSentinel(readFileSync(file, "utf8"));
      } catch (error) {
        if (error instanceof SentinelSyntaxError) {
          program = new SentinelRuntimeError(`syntax error: ${error.detail}`, error.at, file);
        } else if ((error as NodeJS.ErrnoException).code === "ENOENT") {
          program = new SentinelRuntimeError(`${file} does not exist`, undefined, undefined);
        } else throw error;
      }
      this.programs.set(file, program);
    }
    if (program instanceof SentinelRuntimeError) throw program;
    return program;
  }
}

const shown = (root: string, path: string) => relative(root, path).split(sep).join("/");

async function runCase(
  root: string,
  policy: string,
  file: string,
  programs: ProgramCache,
  options: RunOptions,
): Promise<CaseResult> {
  const result: CaseResult = {
    kind: "sentinel",
    file: shown(root, file),
    policy: shown(root, policy),
    verdict: "pass",
    rules: [],
    printed: [],
  };
  let testCase: TestCase;
  try {
    testCase = await readTestCase(file, readFileSync(file, "utf8"));
  } catch (error) {
    return { ...result, verdict: "fail", reason: `the case cannot be read: ${(error as Error).message}` };
  }
  if (testCase.problems.length > 0) return { ...result, verdict: "fail", reason: testCase.problems.join("; ") };
  const expected = [...testCase.rules];
  if (expected.length === 0) {
    // sentinel test asserts only the rules a test block names: it would pass this case whatever the policy does.
    return {
      ...result,
      verdict: "not-run",
      reason:
        "the case's test block names no rule, so it asserts nothing (sentinel test checks only the rules named): " +
        "name what it expects, e.g. rules = { main = true }, or leave the test block out to expect the policy to pass",
    };
  }
  const imports = new CaseImports(testCase, programs, options.now ?? Date.now(), (path) => shown(root, path));
  const evaluator = new Evaluator(imports, testCase.params, testCase.globals);
  imports.evaluator = evaluator;
  result.printed = evaluator.printed;
  // error() is a runtime error like any other ("Runtime errors can be manually triggered using the error function",
  // Logging and Errors): it halts the policy, which fails, whatever value the case expects of main.
  const where = (error: SentinelRuntimeError) =>
    new SentinelRuntimeError(
      error instanceof PolicyErrorCalled ? `error() was called: ${error.message}` : error.message,
      error.at,
      error.file ? shown(root, error.file) : undefined,
    ).where();
  let scope: Scope;
  try {
    scope = evaluator.run(programs.get(policy), policy);
  } catch (error) {
    if (error instanceof NotSupported)
      return { ...result, verdict: "not-run", reason: error.message, rules: rulesUnknown(expected) };
    if (error instanceof SentinelRuntimeError) {
      return {
        ...result,
        verdict: "fail",
        reason: `the policy errors: ${where(error)}`,
        rules: rulesUnknown(expected),
      };
    }
    throw error;
  }
  const failures: string[] = [];
  for (const [name, want] of expected) {
    let computed: Value;
    try {
      computed = ruleValue(evaluator, scope, name);
    } catch (error) {
      if (error instanceof NotSupported)
        return { ...result, verdict: "not-run", reason: error.message, rules: rulesUnknown(expected) };
      if (!(error instanceof SentinelRuntimeError)) throw error;
      result.rules.push({ name, expected: toPlain(want), computed: `error: ${where(error)}` });
      failures.push(`rule ${name} errors: ${where(error)}`);
      continue;
    }
    // An undefined main counts as false (Undefined): the policy fails.
    const compared = name === "main" && computed === Undefined ? false : computed;
    result.rules.push({ name, expected: toPlain(want), computed: toPlain(computed) });
    if (equal(want, compared) !== true)
      failures.push(`rule ${name} is ${show(computed, true)}, expected ${show(want, true)}`);
  }
  if (failures.length > 0) {
    result.verdict = "fail";
    result.reason = failures.join("; ");
  }
  return result;
}

function rulesUnknown(expected: [string, Value][]): RuleResult[] {
  return expected.map(([name, want]) => ({ name, expected: toPlain(want), computed: null }));
}

/** A rule's value as the test reads it: the global's value, a rule evaluated. */
function ruleValue(evaluator: Evaluator, scope: Scope, name: string): Value {
  const value = scope.variables.get(name);
  if (value === undefined) return Undefined;
  if (
    typeof value === "object" &&
    value !== null &&
    !Array.isArray(value) &&
    "kind" in value &&
    value.kind === "rule"
  ) {
    return evaluator.ruleValue(value);
  }
  return value;
}

/** A case's imports: its mocks and modules first, then the standard imports; each made once per case. */
class CaseImports implements ImportSource {
  evaluator: Evaluator | undefined;
  private readonly made = new Map<string, Value>();
  private readonly making = new Set<string>();

  constructor(
    private readonly testCase: TestCase,
    private readonly programs: ProgramCache,
    private readonly now: number,
    private readonly show: (path: string) => string,
  ) {}

  resolve(name: string, at: Position, file: string): Value {
    const made = this.made.get(name);
    if (made !== undefined) return made;
    if (this.making.has(name)) throw new SentinelRuntimeError(`import "${name}" imports itself`, at, file);
    this.making.add(name);
    try {
      const value = this.make(name, at, file);
      this.made.set(name, value);
      return value;
    } finally {
      this.making.delete(name);
    }
  }

  private make(name: string, at: Position, file: string): Value {
    const evaluator = this.evaluator as Evaluator;
    const given = this.testCase.imports.get(name);
    if (given) {
      switch (given.kind) {
        case "unsupported":
          throw new NotSupported(given.why);
        case "data":
          return given.value;
        case "static": {
          if (given.format !== "json")
            throw new NotSupported(`static import "${name}" in format ${given.format} is not read`);
          let text: string;
          try {
            text = readFileSync(given.file, "utf8");
          } catch {
            throw new SentinelRuntimeError(
              `static import "${name}": ${this.show(given.file)} cannot be read`,
              at,
              file,
            );
          }
          let parsed: unknown;
          try {
            parsed = JSON.parse(text);
          } catch (error) {
            // The case's data is wrong, not the evaluator: this case fails, naming the file; the others still run.
            throw new SentinelRuntimeError(
              `static import "${name}": ${this.show(given.file)} is not JSON: ${(error as Error).message}`,
              at,
              file,
            );
          }
          return fromPlain(parsed);
        }
        case "module": {
          if (!isFile(given.file)) {
            throw new SentinelRuntimeError(
              `import "${name}": its source ${this.show(given.file)} does not exist`,
              at,
              file,
            );
          }
          const scope = evaluator.run(this.programs.get(given.file), given.file, false);
          return moduleObject(name, scope);
        }
      }
    }
    const standard = standardImport(name, {
      now: this.now,
      call: (fn, args, callAt) => evaluator.call(fn, args, callAt),
    });
    if (standard) return standard;
    throw new SentinelRuntimeError(
      `import "${name}" is neither a standard import nor a mock or module of this case: add a mock or module block for it`,
      at,
      file,
    );
  }
}

/** A module's globals as an import: a name it does not define is undefined, as for a map. */
function moduleObject(name: string, scope: Scope): HostObject {
  return {
    kind: "object",
    typeName: "module",
    describe: `module "${name}"`,
    strict: false,
    get: (member) => (scope.variables.has(member) ? scope.variables.get(member) : undefined),
  };
}
