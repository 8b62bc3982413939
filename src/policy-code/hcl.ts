/**
 * Reading a policy set's configuration file (`sentinel.hcl`, `policies.hcl`) with HashiCorp's own HCL parser,
 * compiled to WebAssembly (@cdktn/hcl2json, the maintained continuation of HashiCorp's @cdktf/hcl2json).
 */

/** One block of the file: its type, its labels, and its attributes and nested blocks as HCL-to-JSON gives them. */
export interface HclBlock {
  type: string;
  labels: string[];
  body: Record<string, unknown>;
}

type Hcl2Json = { parse(filename: string, contents: string): Promise<Record<string, unknown>> };

let parser: Hcl2Json | undefined;

// Loaded on first use: the module starts a WebAssembly instance as it loads, which programs that never read a
// folder should not pay for. `require` with a local type, because its declarations pull in the DOM library.
function hcl2json(): Hcl2Json {
  parser ??= require("@cdktn/hcl2json") as Hcl2Json;
  return parser;
}

/**
 * The labels each block type of a set's configuration file (`sentinel.hcl`, `policies.hcl`) takes; hcl2json nests
 * labelled blocks one object level per label.
 */
const configLabelCounts: Record<string, number> = { policy: 1, module: 1, param: 1, mock: 1, import: 2, test: 0 };

/**
 * The file's top-level blocks in the order of the file, or the parser's own diagnostics (`file:line,col: summary;
 * detail`) as the error. Top-level attributes come back as blocks without labels whose body is `{ value }`.
 * `labelCounts` says how many labels each block type takes (a set's configuration file by default).
 */
export async function parseBlocks(
  fileName: string,
  text: string,
  labelCounts: Record<string, number> = configLabelCounts,
): Promise<HclBlock[]> {
  let document: Record<string, unknown>;
  try {
    document = await hcl2json().parse(fileName, text);
  } catch (error) {
    // "parse config: [diag; diag]": keep HCL's words, one diagnostic per line.
    const message = (error as Error).message.replace(/^parse config: \[/, "").replace(/\]$/, "");
    throw new Error(message.split(/ (?=[^ ]+\.hcl:\d+,)/).join("\n"));
  }
  const blocks: HclBlock[] = [];
  for (const [type, value] of Object.entries(document)) {
    collect(blocks, type, [], value, Object.hasOwn(labelCounts, type) ? labelCounts[type] : undefined);
  }
  return sortByPosition(blocks, text);
}

function collect(blocks: HclBlock[], type: string, labels: string[], value: unknown, labelsLeft: number | undefined) {
  if (Array.isArray(value)) {
    for (const body of value) blocks.push({ type, labels, body: isObject(body) ? body : { value: body } });
    return;
  }
  // A block type we do not know: as many label levels as objects nest down to arrays, as for `policy`.
  const left = labelsLeft ?? labelDepth(value);
  if (left > 0 && isObject(value)) {
    for (const [label, inner] of Object.entries(value)) collect(blocks, type, [...labels, label], inner, left - 1);
    return;
  }
  blocks.push({ type, labels, body: { value } });
}

/** How many labels an unknown block's value nests: objects of objects of arrays is two, as `import "a" "b"`. */
function labelDepth(value: unknown): number {
  if (!isObject(value)) return 0;
  const inner = Object.values(value);
  if (inner.length === 0) return 0;
  if (inner.every(Array.isArray)) return 1;
  if (!inner.every(isObject)) return 0;
  const depths = inner.map(labelDepth);
  return depths.every((depth) => depth > 0 && depth === depths[0]) ? 1 + (depths[0] as number) : 0;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** hcl2json groups blocks by type; messages read best in the order the file has them. */
function sortByPosition(blocks: HclBlock[], text: string): HclBlock[] {
  const seen = new Map<string, number>();
  const position = (block: HclBlock) => {
    const key = blockAddress(block);
    const occurrence = seen.get(key) ?? 0;
    seen.set(key, occurrence + 1);
    return lineOf(text, block, undefined, occurrence) ?? Number.MAX_SAFE_INTEGER;
  };
  return blocks
    .map((block) => ({ block, line: position(block) }))
    .sort((a, b) => a.line - b.line)
    .map((entry) => entry.block);
}

/** How the block is written in the file, e.g. `policy "require-tags"` or `import "module" "report"`. */
export function blockAddress(block: Pick<HclBlock, "type" | "labels">): string {
  return [block.type, ...block.labels.map((label) => JSON.stringify(label))].join(" ");
}

/**
 * The 1-based line of a block's header, or of one of its attributes, for messages. The parser has already
 * accepted the file, so this only finds where a known block starts; it is no parser of its own.
 */
export function lineOf(text: string, block: Pick<HclBlock, "type" | "labels">, attribute?: string, occurrence = 0) {
  const { lines, headers } = indexOf(text);
  const found = block.labels.some((label) => label.includes('"'))
    ? scanForHeader(lines, block, occurrence)
    : (headers.get([block.type, ...block.labels].join("\0"))?.[occurrence] ?? -1);
  if (found < 0) return undefined;
  if (attribute === undefined) return found + 1;
  const assignment = new RegExp(`^\\s*${escapeRegExp(attribute)}\\s*=|[{\\s]${escapeRegExp(attribute)}\\s*=`);
  for (let index = found; index < lines.length; index++) {
    if (assignment.test(lines[index] as string)) return index + 1;
    if (index > found && /^\s*}\s*$/.test(lines[index] as string) && !/^\s/.test(lines[index] as string)) break;
  }
  return found + 1;
}

/** A file's lines and where each header (`type "label" ... {`, or `name =`) stands, read once per file. */
interface FileIndex {
  text: string;
  lines: string[];
  /** By type and labels joined with NUL: the 0-based lines, in file order. */
  headers: Map<string, number[]>;
}

/**
 * The last file indexed: messages and the order of blocks ask for the lines of many blocks of one file in a row,
 * and a scan of the whole file for each was most of the time of reading a folder of 200 policies.
 */
let lastIndex: FileIndex | undefined;

function indexOf(text: string): FileIndex {
  if (lastIndex?.text === text) return lastIndex;
  const lines = text.split("\n");
  const headers = new Map<string, number[]>();
  const header = /^\s*([^\s"{=]+)((?:\s+"[^"]*")*)\s*(?:\{|=|$)/;
  for (const [index, line] of lines.entries()) {
    const match = header.exec(line);
    if (!match) continue;
    const labels = [...(match[2] ?? "").matchAll(/"([^"]*)"/g)].map((label) => label[1] as string);
    const key = [match[1] as string, ...labels].join("\0");
    const found = headers.get(key);
    if (found) found.push(index);
    else headers.set(key, [index]);
  }
  lastIndex = { text, lines, headers };
  return lastIndex;
}

/** A label holding a quote escapes it in the file: the header is found by its text, line by line. */
function scanForHeader(lines: string[], block: Pick<HclBlock, "type" | "labels">, occurrence: number): number {
  const header = new RegExp(
    `^\\s*${escapeRegExp(block.type)}${block.labels.map((label) => `\\s+"${escapeRegExp(label)}"`).join("")}\\s*(\\{|=|$)`,
  );
  for (let index = 0, seen = 0; index < lines.length; index++) {
    if (header.test(lines[index] as string) && seen++ === occurrence) return index;
  }
  return -1;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}

/**
 * A block's attribute as a literal string: `undefined` when absent, `{ problem }` for anything else (the service
 * evaluates no expressions in these files).
 */
export function literalString(block: HclBlock, attribute: string): string | undefined | { problem: string } {
  const value = block.body[attribute];
  if (value === undefined) return undefined;
  if (typeof value !== "string" || value.includes("${")) return { problem: `${attribute} must be a literal string` };
  return value.trim();
}
