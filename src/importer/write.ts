import { createHash } from "node:crypto";
import { realpathSync } from "node:fs";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { dirname, isAbsolute, join, posix, resolve } from "node:path";
import { realpathOrSelf, within } from "../policy-code/file-access";

export interface WriteOutcome {
  created: string[];
  /** Files that differed and were replaced (only with `force`). */
  overwritten: string[];
  unchanged: string[];
  /** Files an earlier import wrote that this one does not: a policy gone from the service, renamed, or moved. */
  removed: string[];
}

/**
 * The file where an import records what it wrote (path and SHA-256 of each file), so that the next import into the
 * same directory can tell its own stale files (removed) from files someone edited since (refused without --force).
 * A stale code file left behind would be loaded with its folder, or confuse a reader of the project.
 */
export const manifestFile = ".tfe-governance-import.json";

interface Manifest {
  files: Record<string, string>;
}

function sha256(content: Buffer): string {
  return createHash("sha256").update(content).digest("hex");
}

/** Files already in the output directory that differ from what the import would write. */
export class ChangedFilesError extends Error {
  constructor(readonly paths: string[]) {
    const shown = paths.slice(0, 10).map((path) => `  ${path}`);
    if (paths.length > shown.length) shown.push(`  ... and ${paths.length - shown.length} more`);
    const count =
      paths.length === 1
        ? "1 file in the output directory differs"
        : `${paths.length} files in the output directory differ`;
    super(
      `${count} from what the import would write, and nothing was written:\n${shown.join("\n")}\n` +
        "They were edited since the last import wrote them (or were there before any import). Commit or move your " +
        "edits, then run the import again with --force to overwrite them (or remove those whose policy is gone), " +
        "or choose another --out directory.",
    );
  }
}

/** A manifest, or a file to write, that names a path outside the output directory: nothing is written or removed. */
export class OutsideOutputError extends Error {
  constructor(directory: string, problems: string[]) {
    super(
      `nothing was written: ${problems.join("; ")}. An import writes and removes files under --out ` +
        `(${directory}) only; fix or delete ${manifestFile} there if it was edited by hand`,
    );
    this.name = "OutsideOutputError";
  }
}

/**
 * Why `path` (relative to `directory`, `/`-separated) is not a file inside it, or undefined where it is: no absolute
 * path, no `..`, and no link on the way that leads out (the nearest existing folder of the path, followed through its
 * links, is the directory or under it).
 */
function outsideOutput(directory: string, path: string): string | undefined {
  const normalized = posix.normalize(path.replace(/\\/g, "/"));
  if (
    path === "" ||
    path.includes("\0") ||
    isAbsolute(path) ||
    posix.isAbsolute(normalized) ||
    /^[A-Za-z]:/.test(path) ||
    normalized === ".." ||
    normalized.startsWith("../") ||
    normalized === "." ||
    normalized !== path
  ) {
    return `${JSON.stringify(path)} is not a plain path inside the output directory`;
  }
  const base = resolve(directory);
  const root = realpathOrSelf(base);
  for (let folder = dirname(resolve(base, path)); within(base, folder); folder = dirname(folder)) {
    let real: string;
    try {
      real = realpathSync(folder);
    } catch {
      continue; // Not made yet: the import makes it, as a folder.
    }
    return within(root, real)
      ? undefined
      : `${JSON.stringify(path)} leads through a link to ${real}, outside the output directory`;
  }
  return undefined;
}

/** The files the last import wrote, as its manifest records them; a manifest of another shape is refused. */
function readManifest(directory: string, text: Buffer | undefined): Record<string, string> {
  if (text === undefined) return {};
  let files: unknown;
  try {
    files = (JSON.parse(text.toString("utf8")) as Manifest).files;
  } catch {
    files = undefined;
  }
  if (
    typeof files !== "object" ||
    files === null ||
    Array.isArray(files) ||
    Object.values(files).some((hash) => typeof hash !== "string")
  ) {
    throw new OutsideOutputError(directory, [`${manifestFile} is not a manifest an import wrote`]);
  }
  return files as Record<string, string>;
}

async function existing(path: string): Promise<Buffer | undefined> {
  try {
    return await readFile(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

/**
 * Writes `files` under `directory`. Every file is compared first, with what is there and with what the last import
 * wrote (its manifest): when one was edited since and `force` is not set, nothing at all is written, so a refused
 * run leaves the directory as it was. A file the last import wrote as it is now follows the service: replaced, or
 * removed when this import does not write it. Identical files are not touched, so a second import of an unchanged
 * organization changes nothing, not even modification times.
 */
export async function writeProject(
  directory: string,
  files: ReadonlyMap<string, Buffer>,
  options: { force: boolean; onWritten?: (done: number, total: number) => void },
): Promise<WriteOutcome> {
  const outcome: WriteOutcome = { created: [], overwritten: [], unchanged: [], removed: [] };
  const previous = await existing(join(directory, manifestFile));
  const written = readManifest(directory, previous);
  // Every path is checked before anything is read, written or removed: a manifest is committed with the project,
  // and one crafted to name ../../x must not make the import delete a file there.
  const outside = [...Object.keys(written), ...files.keys()]
    .map((path) => outsideOutput(directory, path))
    .filter((problem): problem is string => problem !== undefined);
  if (outside.length > 0) throw new OutsideOutputError(directory, [...new Set(outside)]);
  // A file that differs from what the last import wrote was edited since: only --force replaces or removes it.
  const edited: string[] = [];
  for (const [path, content] of files) {
    const current = await existing(join(directory, path));
    if (current === undefined) outcome.created.push(path);
    else if (current.equals(content)) outcome.unchanged.push(path);
    else {
      outcome.overwritten.push(path);
      if (sha256(current) !== written[path]) edited.push(path);
    }
  }
  for (const [path, hash] of Object.entries(written)) {
    if (files.has(path)) continue;
    const current = await existing(join(directory, path));
    if (current === undefined) continue;
    outcome.removed.push(path);
    if (sha256(current) !== hash) edited.push(path);
  }
  if (edited.length > 0 && !options.force) throw new ChangedFilesError(edited);
  const toWrite = [...outcome.created, ...outcome.overwritten];
  for (const [index, path] of toWrite.entries()) {
    const target = join(directory, path);
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, files.get(path)!);
    options.onWritten?.(index + 1, toWrite.length);
  }
  for (const path of outcome.removed) await rm(join(directory, path), { force: true });
  const manifest: Manifest = {
    files: Object.fromEntries([...files].map(([path, content]) => [path, sha256(content)]).sort()),
  };
  const manifestText = Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`);
  if (!previous?.equals(manifestText)) await writeFile(join(directory, manifestFile), manifestText);
  return outcome;
}
