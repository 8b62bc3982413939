import { dirname, posix, relative, resolve, sep } from "node:path";
import type { PolicySetKind } from "../contract/policies";
import { FileAccess } from "./file-access";
import { blockAddress, type HclBlock, lineOf, literalString, parseBlocks } from "./hcl";
import { configFileOfKind, type FolderFiles, isRemoteSource } from "./policy-set-folder";
import { decodeUtf8 } from "./sentinel";

/**
 * Libraries made for sets read from version control (HashiCorp's third-generation Sentinel library, many vendors')
 * keep shared functions and imports outside each set's folder: `source = "../../common-functions/..."`. The service
 * reads such a set from the whole repository. An uploaded version holds only its folder, so those files are brought
 * in: each goes into the archive under {@link outsideFolder}, at its path from the nearest folder that holds the set
 * and all of them, and the configuration's `source` points there. The service then reads exactly the files the
 * repository would give it.
 */

/** Where files from outside the folder go in the archive. */
export const outsideFolder = "_outside";

export interface BroughtIn {
  /** The `source` as the configuration wrote it. */
  source: string;
  /** Where the file is on disk. */
  from: string;
  /** Its path in the archive, and in the rewritten configuration (without the leading `./`). */
  path: string;
}

export interface WithOutsideSources {
  files: Map<string, Uint8Array>;
  broughtIn: BroughtIn[];
  /** A source outside the folder that names no file, each naming the block: preview fails on these. */
  problems: string[];
}

/** The folder's files with every local `source` that leaves the folder brought in (Sentinel; OPA names none). */
export async function bringInOutsideSources(
  folder: string,
  files: FolderFiles,
  kind: PolicySetKind,
): Promise<WithOutsideSources> {
  const unchanged = { files: new Map(files), broughtIn: [], problems: [] };
  // Terraform policy has no module or import mechanism, so nothing outside the folder is read.
  if (kind === "tfpolicy") return unchanged;
  const configName = configFileOfKind[kind];
  const configBytes = files.get(configName);
  const text = configBytes && decodeUtf8(configBytes);
  // A source outside the folder is written with "..": without one, nothing is parsed (the parser's start-up alone
  // costs a tenth of a second).
  if (kind !== "sentinel" || text === undefined || !text.includes("..")) return unchanged;
  let blocks: HclBlock[];
  try {
    blocks = await parseBlocks(configName, text);
  } catch {
    return unchanged; // The folder's own reading reports the syntax error.
  }
  const problems: string[] = [];
  const outside = new Map<string, string>();
  const access = FileAccess.forFolder(folder);
  for (const block of blocks) {
    const source = literalString(block, "source");
    if (typeof source !== "string" || isRemoteSource(source)) continue;
    const normalized = posix.normalize(source.replace(/\\/g, "/"));
    if (!(normalized === ".." || normalized.startsWith("../"))) continue;
    const file = access.check(resolve(folder, source), source);
    if ("problem" in file) {
      const line = lineOf(text, block, "source");
      problems.push(`${configName}${line ? `:${line}` : ""}: ${blockAddress(block)}: ${file.problem}`);
      continue;
    }
    outside.set(source, file.path);
  }
  if (outside.size === 0) return { ...unchanged, problems };
  if ([...files.keys()].some((path) => path === outsideFolder || path.startsWith(`${outsideFolder}/`))) {
    problems.push(
      `the folder holds ${outsideFolder}/, where files from outside the folder go in the upload: rename it`,
    );
    return { ...unchanged, problems };
  }
  const root = commonFolder([resolve(folder), ...[...outside.values()].map((from) => dirname(from))]);
  const result = new Map(files);
  const broughtIn: BroughtIn[] = [];
  let config = text;
  for (const [source, from] of outside) {
    const path = `${outsideFolder}/${relative(root, from).split(sep).join("/")}`;
    result.set(path, access.read(from, source));
    broughtIn.push({ source, from, path });
    const literal = new RegExp(`(\\bsource\\s*=\\s*)"${source.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}"`, "g");
    config = config.replace(literal, `$1"./${path}"`);
  }
  result.set(configName, Buffer.from(config, "utf8"));
  return { files: result, broughtIn: broughtIn.sort((a, b) => (a.path < b.path ? -1 : 1)), problems };
}

/** The deepest folder that holds every one of `folders`. */
function commonFolder(folders: string[]): string {
  let common = folders[0] as string;
  for (const folder of folders.slice(1)) {
    while (relative(common, folder).startsWith("..")) common = dirname(common);
  }
  return common;
}
