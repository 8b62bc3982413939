import { createHash } from "node:crypto";
import { readdirSync, readFileSync, realpathSync, statSync } from "node:fs";
import { join, posix, resolve } from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import { Header, Parser, Pax, type ReadEntry } from "tar";
import { maxPolicySetFiles, maxPolicySetUnpackedBytes } from "../contract/policy-sets";
import type { FolderFiles } from "./policy-set-folder";

/**
 * A policy-set folder and its archive, the gzip'd tar a policy set version is uploaded as. Packing reads the folder
 * as HashiCorp's go-slug does (what go-tfe and the Terraform provider upload): paths relative to the folder, a root
 * `.terraformignore` honoured, links followed. Unpacking treats the archive as hostile input.
 */

export interface CollectedFolder {
  files: Map<string, Uint8Array>;
  /** SHA-256 over each path and its bytes, in path order: file modification times and the archive's own bytes
   * (gzip level, tar headers) change nothing. */
  contentHash: string;
}

/** Always left out: version control and installed packages are no part of a policy set. */
const alwaysExcluded = [".git/", "node_modules/"];
/** go-slug's default when the folder has no `.terraformignore`. */
const defaultExcluded = [".terraform/", "!.terraform/modules/"];

/** The folder's files as a version would hold them. Throws naming the path for a broken link or a loop. */
export function collectFolder(directory: string): CollectedFolder {
  const root = resolve(directory);
  const ignoreFile = join(root, ".terraformignore");
  const rules = [
    ...alwaysExcluded,
    ...(statSync(ignoreFile, { throwIfNoEntry: false })?.isFile()
      ? readFileSync(ignoreFile, "utf8").split(/\r?\n/)
      : defaultExcluded),
  ].flatMap(ignoreRule);
  const files = new Map<string, Uint8Array>();
  const visit = (absolute: string, relative: string, seen: ReadonlySet<string>) => {
    for (const entry of readdirSync(absolute, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const path = relative ? `${relative}/${entry.name}` : entry.name;
      const full = join(absolute, entry.name);
      const stat = statSync(full, { throwIfNoEntry: false });
      if (!stat) throw new Error(`${path} is a link to nothing: remove it, or fix its target`);
      if (stat.isDirectory()) {
        if (isIgnored(rules, `${path}/`)) continue;
        const real = realpathSync(full);
        if (seen.has(real)) throw new Error(`${path} links back to a folder above it: remove the loop`);
        visit(full, path, new Set([...seen, real]));
      } else if (stat.isFile() && !isIgnored(rules, path)) {
        files.set(path, readFileSync(full));
      }
    }
  };
  visit(root, "", new Set([realpathSync(root)]));
  return { files, contentHash: hashFiles(files) };
}

export function hashFiles(files: FolderFiles): string {
  const hash = createHash("sha256");
  for (const path of [...files.keys()].sort()) {
    const bytes = files.get(path) as Uint8Array;
    hash.update(`${path}\0${bytes.byteLength}\0`).update(bytes);
  }
  return hash.digest("hex");
}

interface IgnoreRule {
  negated: boolean;
  directoryOnly: boolean;
  pattern: RegExp;
}

/** One `.terraformignore` line as a rule: gitignore's syntax, which go-slug follows. */
function ignoreRule(line: string): IgnoreRule[] {
  let text = line.trim();
  if (text === "" || text.startsWith("#")) return [];
  const negated = text.startsWith("!");
  if (negated) text = text.slice(1);
  const directoryOnly = text.endsWith("/");
  text = text.replace(/\/+$/, "");
  const anchored = text.startsWith("/") || text.includes("/");
  text = text.replace(/^\/+/, "");
  let source = "";
  for (let index = 0; index < text.length; index++) {
    const character = text[index] as string;
    if (character === "*" && text[index + 1] === "*") {
      source += text[index + 2] === "/" ? "(?:.*/)?" : ".*";
      index += text[index + 2] === "/" ? 2 : 1;
    } else if (character === "*") source += "[^/]*";
    else if (character === "?") source += "[^/]";
    else source += character.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  return [{ negated, directoryOnly, pattern: new RegExp(`^${anchored ? "" : "(?:.*/)?"}${source}(?:/.*)?$`) }];
}

/** Whether the last rule that matches `path` (a folder's path ends in `/`) excludes it. */
function isIgnored(rules: readonly IgnoreRule[], path: string): boolean {
  const isDirectory = path.endsWith("/");
  const bare = path.replace(/\/$/, "");
  let ignored = false;
  for (const rule of rules) {
    if (rule.directoryOnly && !isDirectory && !rule.pattern.test(posix.dirname(bare))) continue;
    if (rule.pattern.test(bare)) ignored = !rule.negated;
  }
  return ignored;
}

/** The files as a gzip'd tar: regular files only, mode 0644, no owner, time zero. */
export function packFiles(files: FolderFiles): Buffer {
  const blocks: Buffer[] = [];
  const mtime = new Date(0);
  for (const path of [...files.keys()].sort()) {
    const bytes = files.get(path) as Uint8Array;
    const header = new Header({ path, mode: 0o644, size: bytes.byteLength, mtime, type: "File" });
    const block = Buffer.alloc(512);
    header.encode(block);
    if (header.needPax) blocks.push(new Pax({ path, mtime }).encode());
    blocks.push(block, Buffer.from(bytes), Buffer.alloc((512 - (bytes.byteLength % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(blocks));
}

/** Why an archive cannot be taken: too large (413), or not a folder that can be stored (422). */
export class ArchiveError extends Error {
  constructor(
    readonly status: 413 | 422,
    message: string,
  ) {
    super(message);
    this.name = "ArchiveError";
  }
}

/**
 * The folder an uploaded archive holds. Refuses what would reach outside it or past the limits: entries with an
 * absolute path or `..`, links that point out of the folder, devices and pipes, more than
 * {@link maxPolicySetFiles} files or {@link maxPolicySetUnpackedBytes} bytes unpacked (counted before anything is
 * inflated past it, so a gzip bomb costs at most the limit). Links inside the folder read as their target.
 */
export async function unpackArchive(archive: Uint8Array): Promise<Map<string, Uint8Array>> {
  let tarBytes: Buffer;
  try {
    tarBytes = gunzipSync(archive, { maxOutputLength: maxPolicySetUnpackedBytes + 64 * 1024 });
  } catch (error) {
    if (error instanceof RangeError) {
      throw new ArchiveError(413, `the archive unpacks to more than ${maxPolicySetUnpackedBytes} bytes`);
    }
    throw new ArchiveError(422, `the archive is not gzip'd (${(error as Error).message}): upload a gzip'd tar`);
  }
  const files = new Map<string, Uint8Array>();
  const links = new Map<string, string>();
  const problems: string[] = [];
  await new Promise<void>((done, fail) => {
    const parser = new Parser({
      strict: true,
      onReadEntry: (entry: ReadEntry) => {
        const path = folderPath(entry.path);
        if (path === undefined) {
          problems.push(`${JSON.stringify(entry.path)} leaves the folder (an absolute path or ..)`);
        } else if (entry.type === "File" || entry.type === "OldFile" || entry.type === "ContiguousFile") {
          const chunks: Buffer[] = [];
          entry.on("data", (chunk: Buffer) => chunks.push(chunk));
          entry.on("end", () => files.set(path, Buffer.concat(chunks)));
          return;
        } else if (entry.type === "SymbolicLink" || entry.type === "Link") {
          const target =
            entry.type === "Link"
              ? folderPath(entry.linkpath ?? "")
              : folderPath(posix.join(posix.dirname(path), entry.linkpath ?? ""));
          if (target === undefined || posix.isAbsolute(entry.linkpath ?? "")) {
            problems.push(`${path} links to ${entry.linkpath}, outside the folder`);
          } else links.set(path, target);
        } else if (entry.type !== "Directory") {
          problems.push(`${path} is a ${entry.type}, which a policy set cannot hold`);
        }
        entry.resume();
      },
    });
    parser.on("error", (error: Error) =>
      fail(new ArchiveError(422, `the archive is not a readable tar: ${error.message}`)),
    );
    parser.on("warn", (_code: string, message: string) =>
      problems.push(`the archive is not a readable tar: ${message}`),
    );
    parser.on("end", () => done());
    parser.end(tarBytes);
  });
  for (const [path, target] of links) {
    const bytes = files.get(target);
    if (bytes) files.set(path, bytes);
  }
  if (problems.length > 0) throw new ArchiveError(422, problems.slice(0, 5).join("; "));
  if (files.size > maxPolicySetFiles) {
    throw new ArchiveError(
      413,
      `the archive holds ${files.size} files; a policy set holds at most ${maxPolicySetFiles}`,
    );
  }
  return files;
}

/** The entry's path inside the folder (`./a/b` is `a/b`), or undefined when it would leave it. */
function folderPath(entryPath: string): string | undefined {
  if (entryPath.startsWith("/") || /^[A-Za-z]:/.test(entryPath)) return undefined;
  const normalized = posix.normalize(entryPath.replace(/\\/g, "/")).replace(/\/$/, "");
  if (normalized === ".." || normalized.startsWith("../")) return undefined;
  return normalized === "." ? "" : normalized;
}
