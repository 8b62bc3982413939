// A test case of `sentinel test`: one file `test/<policy>/<case>.hcl` (or `.json`) in the configuration format of the
// Sentinel CLI, naming mocks (a module's source, or data), modules, parameters, globals and the value each rule must
// give. Test cases ignore the folder's own sentinel.hcl: each carries all it needs. No I/O: the caller reads the file.
import { dirname, resolve } from "node:path";
import { type HclBlock, isObject, parseBlocks } from "../hcl";
import { literalBlocks } from "../hcl-literal";
import { fromPlain, type Value } from "./values";

/** What an import is, for one case. */
export type CaseImport =
  | { kind: "module"; file: string }
  | { kind: "data"; value: Value }
  | { kind: "static"; file: string; format: string }
  | { kind: "unsupported"; why: string };

export interface TestCase {
  /** By import name: the case's mocks, modules and static imports. */
  imports: Map<string, CaseImport>;
  params: Map<string, Value>;
  globals: Map<string, Value>;
  /**
   * The value each rule must give, by rule name: without a test block, main true. A test block asserts only the rules
   * it names, so one that names none asserts nothing.
   */
  rules: Map<string, Value>;
  /** What makes the file no test case the runner can use (a block it cannot read). */
  problems: string[];
}

const caseLabelCounts: Record<string, number> = { mock: 1, module: 1, param: 1, global: 1, import: 2, test: 0 };

/** Reads a case file's text; `path` is where it is (sources are relative to its folder). */
export async function readTestCase(path: string, text: string): Promise<TestCase> {
  const testCase: TestCase = {
    imports: new Map(),
    params: new Map(),
    globals: new Map(),
    rules: new Map(),
    problems: [],
  };
  const base = dirname(path);
  let blocks: HclBlock[];
  if (path.endsWith(".json")) {
    try {
      blocks = jsonBlocks(JSON.parse(text));
    } catch (error) {
      testCase.problems.push(`not JSON: ${(error as Error).message}`);
      return testCase;
    }
  } else {
    try {
      // Most cases hold literal data only, which the literal reader gives at a fraction of the cost.
      blocks = literalBlocks(text, caseLabelCounts) ?? (await parseBlocks(path, text, caseLabelCounts));
    } catch (error) {
      testCase.problems.push((error as Error).message);
      return testCase;
    }
  }
  let sawTest = false;
  for (const block of blocks) {
    const [label, second] = block.labels;
    switch (block.type) {
      case "mock":
        if (label === undefined) break;
        testCase.imports.set(label, mockOf(block.body, base));
        break;
      case "module":
        if (label !== undefined && typeof block.body.source === "string") {
          testCase.imports.set(label, { kind: "module", file: resolve(base, block.body.source) });
        } else testCase.problems.push(`module ${JSON.stringify(label)} has no source`);
        break;
      case "import":
        if (second === undefined) break;
        if (label === "module" && typeof block.body.source === "string") {
          testCase.imports.set(second, { kind: "module", file: resolve(base, block.body.source) });
        } else if (label === "static" && typeof block.body.source === "string") {
          const format = typeof block.body.format === "string" ? block.body.format : "json";
          testCase.imports.set(second, { kind: "static", file: resolve(base, block.body.source), format });
        } else {
          testCase.imports.set(second, {
            kind: "unsupported",
            why: `import "${label}" "${second}" (a plugin) is not run by this evaluator`,
          });
        }
        break;
      case "param":
        if (label !== undefined) testCase.params.set(label, fromPlain(block.body.value));
        break;
      case "global":
        if (label !== undefined) testCase.globals.set(label, fromPlain(block.body.value));
        break;
      case "test": {
        sawTest = true;
        const rules = block.body.rules;
        if (isObject(rules))
          for (const [name, value] of Object.entries(rules)) testCase.rules.set(name, fromPlain(value));
        break;
      }
    }
  }
  // "If the test key is omitted, the policy is expected to pass" (Sentinel's Testing page): main must be true.
  if (!sawTest) testCase.rules.set("main", true);
  return testCase;
}

/** `mock "name" { module { source = "..." } }` or `mock "name" { data = { ... } }`. */
function mockOf(body: Record<string, unknown>, base: string): CaseImport {
  const module = Array.isArray(body.module) ? body.module[0] : body.module;
  if (isObject(module) && typeof module.source === "string")
    return { kind: "module", file: resolve(base, module.source) };
  if ("data" in body) return { kind: "data", value: fromPlain(body.data) };
  return { kind: "unsupported", why: "a mock without a module source or data" };
}

/** The JSON form of a case (`{"mock": {...}, "global": {...}, "param": {...}, "test": {...}}`) as blocks. */
function jsonBlocks(document: unknown): HclBlock[] {
  if (!isObject(document)) throw new Error("a test case is a JSON object");
  const blocks: HclBlock[] = [];
  for (const [type, section] of Object.entries(document)) {
    if (!isObject(section)) continue;
    if (type === "test") {
      blocks.push({ type, labels: [], body: isObject(section.rules) ? section : { rules: section } });
      continue;
    }
    for (const [label, value] of Object.entries(section)) {
      if (type === "mock") {
        // A string names a module file; an object is the import's data.
        const body =
          typeof value === "string"
            ? { module: [{ source: value }] }
            : isObject(value) && "module" in value
              ? value
              : { data: value };
        blocks.push({ type, labels: [label], body });
      } else if (type === "modules" || type === "module") {
        blocks.push({ type: "module", labels: [label], body: isObject(value) ? value : { source: value } });
      } else if (type === "global" || type === "param") {
        blocks.push({ type, labels: [label], body: isObject(value) && "value" in value ? value : { value } });
      }
    }
  }
  return blocks;
}
