import { createHash } from "node:crypto";
import { posix } from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import { Header, Parser, Pax, type ReadEntry } from "tar";
import {
  maxPolicySetFiles,
  maxPolicySetUnpackedBytes,
  type PolicySetArchiveSize,
  policySetArchiveSizeProblem,
} from "../contract/policy-sets";
import type { FolderFiles } from "./policy-set-folder";
import { LinkExpansionError, readSlugFolder, resolveLinks } from "./slug";

/**
 * A policy-set folder and its archive, the gzip'd tar a policy set version is uploaded as. The folder is read as
 * HashiCorp's go-slug packs it (see slug.ts); unpacking treats the archive as hostile input.
 */

export interface CollectedFolder {
  /** What the service reads once the upload is unpacked: each file by its path, links inside the folder resolved. */
  files: Map<string, Uint8Array>;
  /** SHA-256 over each path and its bytes, in path order: file modification times and the archive's own bytes
   * (gzip level, tar headers) change nothing. */
  contentHash: string;
  /** Links that leave the folder, followed as go-slug follows them: each is named at preview. */
  externalLinks: { path: string; target: string }[];
}

/** The folder's files as a version would hold them. Throws {@link SlugError} naming the path it cannot pack. */
export function collectFolder(directory: string): CollectedFolder {
  const { files, externalLinks } = readSlugFolder(directory);
  return { files, contentHash: hashFiles(files), externalLinks };
}

/**
 * Each file by path, with its size and the start of its SHA-256: what a reviewer reads in `pulumi preview --diff`
 * when a set's content changes (the files added, removed or changed), where the one content hash says only that.
 */
export function fileDigests(files: FolderFiles): Record<string, string> {
  // Built with fromEntries: a path is any text, and assigning `__proto__` would set the prototype instead.
  return Object.fromEntries(
    [...files.keys()].sort().map((path) => {
      const bytes = files.get(path) as Uint8Array;
      return [
        path,
        `${bytes.byteLength} bytes, sha256 ${createHash("sha256").update(bytes).digest("hex").slice(0, 12)}`,
      ];
    }),
  );
}

export function hashFiles(files: FolderFiles): string {
  const hash = createHash("sha256");
  for (const path of [...files.keys()].sort()) {
    const bytes = files.get(path) as Uint8Array;
    hash.update(`${path}\0${bytes.byteLength}\0`).update(bytes);
  }
  return hash.digest("hex");
}

/** The size the limits count, of files about to be packed into `archive`. */
export function archiveSize(files: FolderFiles, archive: Uint8Array): PolicySetArchiveSize {
  let unpackedBytes = 0;
  for (const bytes of files.values()) unpackedBytes += bytes.byteLength;
  return { archiveBytes: archive.byteLength, files: files.size, unpackedBytes };
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

/** Most a tar adds to its files' bytes: a header, a long-name record and padding for each entry, and its end. */
const maxTarOverheadBytes = maxPolicySetFiles * 2048 + 1024;

/**
 * The folder an uploaded archive holds, as a reader of the version sees it: links inside the folder read as their
 * targets (chains and linked folders too, in any entry order, as go-slug writes them). Refuses what would reach
 * outside the folder or past the limits: entries with an absolute path or `..`, links that point out of the folder,
 * devices and pipes, more files or bytes than {@link policySetArchiveSizeProblem} allows (inflated no further than
 * the limit and the tar's own overhead, so a gzip bomb costs at most that).
 */
export async function unpackArchive(archive: Uint8Array): Promise<Map<string, Uint8Array>> {
  let tarBytes: Buffer;
  try {
    tarBytes = gunzipSync(archive, { maxOutputLength: maxPolicySetUnpackedBytes + maxTarOverheadBytes });
  } catch (error) {
    if (error instanceof RangeError) {
      throw new ArchiveError(413, `the archive unpacks to more than ${maxPolicySetUnpackedBytes} bytes of files`);
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
  if (problems.length > 0) throw new ArchiveError(422, problems.slice(0, 5).join("; "));
  const tooLarge = policySetArchiveSizeProblem(archiveSize(files, archive));
  if (tooLarge) throw new ArchiveError(413, tooLarge);
  // The limits count what a reader sees: links resolved (a link to a folder reads as all its files).
  try {
    return resolveLinks(files, links);
  } catch (error) {
    if (error instanceof LinkExpansionError) throw new ArchiveError(413, `the archive ${error.message}`);
    throw error;
  }
}

/** The entry's path inside the folder (`./a/b` is `a/b`), or undefined when it would leave it. */
function folderPath(entryPath: string): string | undefined {
  if (entryPath.startsWith("/") || /^[A-Za-z]:/.test(entryPath)) return undefined;
  const normalized = posix.normalize(entryPath.replace(/\\/g, "/")).replace(/\/$/, "");
  if (normalized === ".." || normalized.startsWith("../")) return undefined;
  return normalized === "." ? "" : normalized;
}
