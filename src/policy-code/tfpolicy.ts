import { createHash } from "node:crypto";
import { posix } from "node:path";
import { closestName } from "../contract/names";
import { cannotEvaluate, tfPolicyLevels } from "../contract/policies";
import { type FolderFiles, normalizedPoliciesPath } from "./folder-files";
import { blockAddress, type HclBlock, isObject, lineOf, parseBlocks } from "./hcl";
import { type EvaluationScope, evaluateAttribute, type HclValue } from "./hcl-expression";
import { decodeUtf8 } from "./sentinel";
import {
  type BodySchema,
  checkBlocks,
  isBlockList,
  labelCounts,
  policyFileSchema,
  policyTestFileSchema,
} from "./tfpolicy-schema";

/**
 * A Terraform policy (`tfpolicy`) set's folder, read as the service reads it and checked against HashiCorp's schema
 * for these files (`github.com/hashicorp/terraform-schema`, `schema/policy` and `schema/policytest`, 1.16): every
 * `*.policy.hcl` at the set's root (or policies path) is a policy file, evaluated on its own; `*.policytest.hcl`
 * files anywhere are its tests. There is no set-level configuration file. Nothing here evaluates an expression:
 * the `tfpolicy` command that runs tests is closed source, so the checks are of structure, values written as
 * literals, and references between files.
 */

export const policyFileSuffix = ".policy.hcl";
export const policyTestFileSuffix = ".policytest.hcl";

/** One policy block as a later change is compared with it. */
export interface TfPolicyBlock {
  /** `resource_policy.aws_s3_bucket.require_tags`, with the file it is in where two files share it. */
  address: string;
  /** The level it runs at: written, its input's parameter or default, or `mandatory` when left out. */
  level: string;
  /** Where the level comes from, for messages: `enforcement_level`, `parameter "x"`, `input "x" default`. */
  levelFrom: string;
  /** The inputs the level reads: a change of their parameters changes it. */
  levelInputs: string[];
  enforce: number;
  /** `resource_policy` only: the operations it applies to (the default when left out). */
  operations: string[] | null;
  /** The filter as written, or null: a filter added where there was none narrows the policy. */
  filter: string | null;
  /**
   * Where the level or the filter is an expression the check cannot evaluate: a digest of everything of the file it
   * may read (each input's parameter or default, each local as written). Another digest means what it reads changed,
   * and the block's level or filter cannot be compared however alike their text. Null where both are evaluated.
   */
  readsDigest: string | null;
}

export interface TfPolicyInput {
  file: string;
  hasDefault: boolean;
  sensitive: boolean;
}

export interface TfPolicyFolder {
  blocks: TfPolicyBlock[];
  /** Every input, by name, of every policy file (a parameter of that name reaches each). */
  inputs: Map<string, TfPolicyInput[]>;
  policyFiles: string[];
  testFiles: string[];
  /** What fails the set: each names the file, line and block. */
  problems: string[];
  /** The part of `problems` the service itself refuses at ingress (no policy file, one that does not parse). */
  unreadable: string[];
  /** What is worth saying and fails nothing (a policy file in a subfolder, which the service does not read). */
  warnings: string[];
}

const operationsDefault = ["create", "update", "no-op"];
const knownOperations = ["create", "update", "delete", "no-op"];

/** A literal string as hcl2json gives it, or undefined for an expression. */
function literal(value: unknown): string | undefined {
  return typeof value === "string" && !value.includes("${") ? value : undefined;
}

/** An attribute as written in the file: hcl2json wraps an expression in `${...}`, which no reader wrote. */
function asWritten(value: unknown): string {
  if (typeof value !== "string") return JSON.stringify(value);
  const wrapped = /^\$\{([\s\S]*)\}$/.exec(value)?.[1];
  return wrapped !== undefined && !wrapped.includes("${") ? wrapped.trim() : value;
}

/** `${input.name}` alone: the input's name. */
function inputReference(value: unknown): string | undefined {
  return typeof value === "string" ? /^\$\{\s*input\.([A-Za-z_][\w-]*)\s*\}$/.exec(value)?.[1] : undefined;
}

/**
 * Reads a Terraform policy set's folder. `parameters` are the set's (by key; a value parsed as JSON where it parses,
 * as the service does): they resolve levels written as `input.<name>`. `policiesPath` is where the set's folder is
 * within `files` (a repository read from version control), "" for an uploaded folder.
 */
export async function readTfPolicyFolder(
  files: FolderFiles,
  options: {
    parameters?: Readonly<Record<string, string | undefined>>;
    policiesPath?: string;
    /** Parameters whose values are secrets: a message about a level read from one says "(secret)", never it. */
    secretParameters?: ReadonlySet<string>;
  } = {},
): Promise<TfPolicyFolder> {
  const base = normalizedPoliciesPath(options.policiesPath ?? "");
  const prefix = base ? `${base}/` : "";
  const folder: TfPolicyFolder = {
    blocks: [],
    inputs: new Map(),
    policyFiles: [],
    testFiles: [],
    problems: [],
    unreadable: [],
    warnings: [],
  };
  const inFolder = [...files.keys()].filter((path) => path.startsWith(prefix)).sort();
  for (const path of inFolder) {
    const relative = path.slice(prefix.length);
    if (relative.endsWith(policyFileSuffix)) {
      if (relative.includes("/")) {
        folder.warnings.push(
          `${path} is in a subfolder: the service reads only the ${policyFileSuffix} files at the set's root` +
            `${base ? ` (policies path ${base})` : ""}, so it is not evaluated`,
        );
      } else folder.policyFiles.push(path);
    } else if (relative.endsWith(policyTestFileSuffix)) folder.testFiles.push(path);
    else if (/\.policy(test)?\.json$/.test(relative)) {
      folder.warnings.push(
        `${path}: the service reads the HCL form (${policyFileSuffix}) only, so it is not evaluated`,
      );
    }
  }
  if (folder.policyFiles.length === 0) {
    const nested = inFolder.filter((path) => path.endsWith(policyFileSuffix)).length;
    unreadable(
      folder,
      `no ${policyFileSuffix} file at the ${base ? `policies path ${base}` : "root of the folder"}, which a ` +
        "Terraform policy set evaluates" +
        (nested > 0
          ? `; ${nested} in subfolders, which the service does not read: point ${base ? "policiesPath" : "directory"} at the folder that holds them`
          : ": a set without one enforces nothing"),
    );
  }
  const secret = options.secretParameters ?? new Set<string>();
  for (const path of folder.policyFiles) await readPolicyFile(folder, files, path, options.parameters ?? {}, secret);
  for (const path of folder.testFiles) await readTestFile(folder, files, path);
  return folder;
}

/** The file's text and top-level blocks, or undefined with the problem recorded. */
async function parsed(
  folder: TfPolicyFolder,
  files: FolderFiles,
  path: string,
  schema: BodySchema,
): Promise<{ text: string; blocks: HclBlock[] } | undefined> {
  const text = decodeUtf8(files.get(path) as Uint8Array);
  if (text === undefined) {
    unreadable(folder, `${path} is not valid UTF-8: save it as UTF-8`);
    return undefined;
  }
  try {
    return { text, blocks: await parseBlocks(path, text, labelCounts(schema)) };
  } catch (error) {
    unreadable(folder, (error as Error).message);
    return undefined;
  }
}

function unreadable(folder: TfPolicyFolder, problem: string): void {
  folder.problems.push(problem);
  folder.unreadable.push(problem);
}

async function readPolicyFile(
  folder: TfPolicyFolder,
  files: FolderFiles,
  path: string,
  parameters: Readonly<Record<string, string | undefined>>,
  secretParameters: ReadonlySet<string>,
): Promise<void> {
  const file = await parsed(folder, files, path, policyFileSchema);
  if (!file) return;
  const { text, blocks } = file;
  const problems = checkBlocks(path, text, blocks, policyFileSchema, "a policy file");
  folder.problems.push(...problems);
  const inputs = new Map<string, FileInput>();
  for (const block of blocks.filter((each) => each.type === "input" && each.labels.length === 1)) {
    const name = block.labels[0] as string;
    const entry: FileInput = {
      hasDefault: Object.hasOwn(block.body, "default"),
      defaultValue: block.body.default,
      sensitive: block.body.sensitive === true,
      line: lineOf(text, block),
    };
    inputs.set(name, entry);
    folder.inputs.set(name, [
      ...(folder.inputs.get(name) ?? []),
      { file: path, hasDefault: entry.hasDefault, sensitive: entry.sensitive },
    ]);
    if (!entry.hasDefault && !Object.hasOwn(parameters, name)) {
      folder.problems.push(
        `${path}:${entry.line ?? "?"}: input "${name}" has no default, and the set has no parameter "${name}": ` +
          `add one (parameters: { ${JSON.stringify(name)}: ... }) or give the input a default; a workspace ` +
          "variable of that name would serve only the workspaces that have it",
      );
    }
  }
  const locals: Record<string, unknown> = Object.assign(
    {},
    ...blocks.filter((block) => block.type === "locals").map((block) => block.body),
  );
  const inThisFile = new Set<string>();
  for (const block of blocks) {
    if (!["resource_policy", "provider_policy", "module_policy"].includes(block.type) || block.labels.length !== 2) {
      continue;
    }
    const at = `${path}:${lineOf(text, block) ?? "?"}: ${blockAddress(block)}`;
    const problem = (text: string) => folder.problems.push(`${at}: ${text}`);
    // A label with a dot (or a quote) is written quoted, so `"a.b" "c"` and `"a" "b.c"` are two addresses; labels
    // without one read as they always did (resource_policy.aws_s3_bucket.require_owner_tag), so baselines hold.
    const address = `${block.type}.${block.labels.map(addressPart).join(".")}`;
    if (inThisFile.has(address)) {
      problem(
        "declared twice in this file: each policy block's type and labels may appear once, as the service reads them",
      );
      continue;
    }
    inThisFile.add(address);
    const context = { inputs, locals };
    const level = effectiveLevel(block, context, parameters, problem, secretParameters);
    const operations =
      block.type === "resource_policy"
        ? checkedOperations(block, policyScope(block, context, parameters, [], problem), problem)
        : null;
    const shared = folder.blocks.some((other) => other.address === address);
    folder.blocks.push({
      address: shared ? `${address} (${path})` : address,
      level: level.level,
      levelFrom: level.from,
      levelInputs: level.inputs,
      enforce: isBlockList(block.body.enforce) ? block.body.enforce.length : 0,
      operations,
      filter: block.body.filter === undefined ? null : asWritten(block.body.filter),
      readsDigest:
        level.level.startsWith("<") || block.body.filter !== undefined
          ? readsDigestOf(inputs, locals, parameters, secretParameters)
          : null,
    });
  }
  const policyBlocks = blocks.filter((block) => block.type === "policy" && block.labels.length === 0);
  for (const block of policyBlocks) checkPlugins(folder, files, path, text, block);
}

/** A block label as its address writes it: as it is, or quoted where a dot, a quote or a space would blur it. */
function addressPart(label: string): string {
  return /^[^."\s]+$/.test(label) ? label : JSON.stringify(label);
}

/**
 * A digest of what an expression of the file may read: each input's value (its parameter, or its default as
 * written) and each local as written. A secret parameter goes in as its SHA-256, as state keeps it.
 */
function readsDigestOf(
  inputs: ReadonlyMap<string, FileInput>,
  locals: Readonly<Record<string, unknown>>,
  parameters: Readonly<Record<string, string | undefined>>,
  secretParameters: ReadonlySet<string>,
): string {
  const values = [...inputs.keys()].sort().map((name) => {
    const given = Object.hasOwn(parameters, name) ? parameters[name] : undefined;
    if (given === undefined) return [name, "default", JSON.stringify(inputs.get(name)?.defaultValue ?? null)];
    return [name, "parameter", secretParameters.has(name) ? createHash("sha256").update(given).digest("hex") : given];
  });
  const written = Object.keys(locals)
    .sort()
    .map((name) => [name, JSON.stringify(locals[name])]);
  return createHash("sha256").update(JSON.stringify({ values, written })).digest("hex").slice(0, 32);
}

/** An input as its own file declares it. */
interface FileInput {
  hasDefault: boolean;
  defaultValue: unknown;
  sensitive: boolean;
  line: number | undefined;
}

/**
 * The level a block runs at, evaluated as far as the check can (literals, locals, inputs with their parameters or
 * defaults, a few string functions, conditionals): anything else is {@link cannotEvaluate}, which the guard cannot
 * compare. A value that is no level fails the check.
 */
function effectiveLevel(
  block: HclBlock,
  context: { inputs: ReadonlyMap<string, FileInput>; locals: Readonly<Record<string, unknown>> },
  parameters: Readonly<Record<string, string | undefined>>,
  fail: (problem: string) => void,
  secretParameters: ReadonlySet<string>,
): { level: string; from: string; inputs: string[] } {
  const written = block.body.enforcement_level;
  if (written === undefined) return { level: "mandatory", from: "the default", inputs: [] };
  const read: string[] = [];
  const scope = policyScope(block, context, parameters, read, fail);
  const evaluated = evaluateAttribute(written, scope);
  const direct = inputReference(written);
  const from =
    literal(written) !== undefined
      ? "enforcement_level"
      : direct !== undefined
        ? Object.hasOwn(parameters, direct)
          ? `parameter "${direct}"`
          : `input "${direct}" default`
        : `enforcement_level = ${asWritten(written)}`;
  if ("cannot" in evaluated) return { level: cannotEvaluate(evaluated.cannot), from, inputs: read };
  const value = evaluated.value;
  if (typeof value === "string" && (tfPolicyLevels as readonly string[]).includes(value)) {
    return { level: value, from, inputs: read };
  }
  // A value read from a secret parameter is never said, not even as the level it is nearest to.
  const secret = read.some((input) => secretParameters.has(input));
  const near = typeof value === "string" && !secret ? closestName(value, tfPolicyLevels) : undefined;
  fail(
    `enforcement_level ${secret ? "(secret)" : JSON.stringify(value)} (${from}) is not a level of Terraform policy: use ` +
      `${tfPolicyLevels.join(", ")}${near ? ` (did you mean ${near}?)` : ""}`,
  );
  return { level: String(value), from, inputs: read };
}

/** What `input.<name>` and `local.<name>` mean inside a policy block of a file; the inputs read go to `read`. */
function policyScope(
  block: HclBlock,
  context: { inputs: ReadonlyMap<string, FileInput>; locals: Readonly<Record<string, unknown>> },
  parameters: Readonly<Record<string, string | undefined>>,
  read: string[],
  fail: (problem: string) => void,
): EvaluationScope {
  const blockLocals = Object.assign({}, ...(isBlockList(block.body.locals) ? block.body.locals : []));
  const evaluating = new Set<string>();
  const scope: EvaluationScope = {
    input(name) {
      if (!read.includes(name)) read.push(name);
      const declared = context.inputs.get(name);
      if (!declared) {
        fail(
          `enforcement_level reads input.${name}, which this file does not declare: add input "${name}" { type = string, default = "mandatory" }`,
        );
        return { cannot: `input.${name}, which is not declared` };
      }
      if (Object.hasOwn(parameters, name)) {
        const value = parameters[name];
        // A parameter that is another resource's output: its level is known at apply.
        if (value === undefined) return { cannot: `input.${name}, whose parameter is not known until apply` };
        return { value: parameterValue(value) as HclValue };
      }
      // No default and no parameter: reported once, for the input.
      if (!declared.hasDefault) return { cannot: `input.${name}, which has no value` };
      return evaluateAttribute(declared.defaultValue, scope);
    },
    local(name) {
      const source = Object.hasOwn(blockLocals, name)
        ? blockLocals
        : Object.hasOwn(context.locals, name)
          ? context.locals
          : undefined;
      if (!source) return { cannot: `local.${name}, which is not declared` };
      if (evaluating.has(name)) return { cannot: `local.${name}, which refers to itself` };
      evaluating.add(name);
      try {
        return evaluateAttribute(source[name], scope);
      } finally {
        evaluating.delete(name);
      }
    },
  };
  return scope;
}

/** What the service makes of a parameter's value: JSON where it parses, else the text. */
export function parameterValue(value: string): unknown {
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}

function checkedOperations(block: HclBlock, scope: EvaluationScope, fail: (problem: string) => void): string[] {
  const written = block.body.operations;
  if (written === undefined) return [...operationsDefault].sort();
  const evaluated = evaluateAttribute(written, scope);
  if ("cannot" in evaluated) return [cannotEvaluate(evaluated.cannot)];
  if (!Array.isArray(evaluated.value) || !evaluated.value.every((operation) => typeof operation === "string")) {
    fail(`operations must be a list of operations, such as ["create", "update"]`);
    return [cannotEvaluate(asWritten(written))];
  }
  const operations = evaluated.value as string[];
  for (const operation of operations) {
    if (!knownOperations.includes(operation)) {
      const near = closestName(operation, knownOperations);
      fail(
        `operations: "${operation}" is not an operation: use ${knownOperations.join(", ")}${near ? ` (did you mean ${near}?)` : ""}`,
      );
    }
  }
  if (operations.includes("delete") && (operations.includes("create") || operations.includes("no-op"))) {
    fail(
      'operations: "delete" combines with neither "create" nor "no-op" (a resource being deleted is neither): list it in a policy of its own',
    );
  }
  if (operations.length === 0)
    fail("operations is empty: the policy would apply to nothing; leave it out for create, update and no-op");
  return [...operations].sort();
}

function checkPlugins(folder: TfPolicyFolder, files: FolderFiles, path: string, text: string, block: HclBlock) {
  const declared = isBlockList(block.body.plugins) ? block.body.plugins : [];
  for (const entries of declared) {
    for (const [label, value] of Object.entries(entries)) {
      const source = isObject(value) ? literal(value.source) : literal(value);
      if (source === undefined) continue;
      const target = posix.normalize(posix.join(posix.dirname(path), source));
      if (!files.has(target)) {
        folder.problems.push(
          `${path}:${lineOf(text, block, label) ?? "?"}: policy: plugin "${label}": ${source} is not in the set's folder ` +
            `(resolved to ${target}): commit the plugin's binary beside the policies, or fix the path`,
        );
      }
    }
  }
}

async function readTestFile(folder: TfPolicyFolder, files: FolderFiles, path: string): Promise<void> {
  const file = await parsed(folder, files, path, policyTestFileSchema);
  if (!file) return;
  const { text, blocks } = file;
  folder.problems.push(...checkBlocks(path, text, blocks, policyTestFileSchema, "a policy test file"));
  for (const block of blocks.filter((each) => each.type === "policytest" && each.labels.length === 0)) {
    const targets = block.body.targets;
    if (targets === undefined) continue;
    if (!Array.isArray(targets) || !targets.every((target) => literal(target) !== undefined)) {
      folder.problems.push(
        `${path}:${lineOf(text, block, "targets") ?? "?"}: policytest: targets must be a list of paths`,
      );
      continue;
    }
    for (const target of targets as string[]) {
      const resolved = posix.normalize(posix.join(posix.dirname(path), target)).replace(/\/$/, "");
      const exists =
        resolved === "." || files.has(resolved) || [...files.keys()].some((each) => each.startsWith(`${resolved}/`));
      if (!exists) {
        folder.problems.push(
          `${path}:${lineOf(text, block, "targets") ?? "?"}: policytest: target ${target} is not in the set's folder ` +
            `(resolved to ${resolved}, relative to the test file)`,
        );
      }
    }
  }
}
