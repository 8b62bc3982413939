import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";

export interface WriteOutcome {
  created: string[];
  /** Files that differed and were replaced (only with `force`). */
  overwritten: string[];
  unchanged: string[];
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
        "They were edited since the last import, or the service changed. Commit or move your edits, then run the " +
        "import again with --force to overwrite them, or choose another --out directory.",
    );
  }
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
 * Writes `files` under `directory`. Every file is compared first: when one that exists differs and `force` is not
 * set, nothing at all is written, so a refused run leaves the directory as it was. Identical files are not
 * touched, so a second import of an unchanged organization changes nothing, not even modification times.
 */
export async function writeProject(
  directory: string,
  files: ReadonlyMap<string, Buffer>,
  options: { force: boolean; onWritten?: (done: number, total: number) => void },
): Promise<WriteOutcome> {
  const outcome: WriteOutcome = { created: [], overwritten: [], unchanged: [] };
  for (const [path, content] of files) {
    const current = await existing(join(directory, path));
    if (current === undefined) outcome.created.push(path);
    else if (current.equals(content)) outcome.unchanged.push(path);
    else outcome.overwritten.push(path);
  }
  if (outcome.overwritten.length > 0 && !options.force) throw new ChangedFilesError(outcome.overwritten);
  const toWrite = [...outcome.created, ...outcome.overwritten];
  for (const [index, path] of toWrite.entries()) {
    const target = join(directory, path);
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, files.get(path)!);
    options.onWritten?.(index + 1, toWrite.length);
  }
  return outcome;
}
