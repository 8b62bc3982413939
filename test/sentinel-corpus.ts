import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

// The public Sentinel libraries the parser and the evaluator are measured against live outside the project (they
// are not ours to ship): in `shared/corpus/sentinel` beside the checkout, or beside the checkout a clone was made
// from (CI clones the repository into a directory of its own), or where SENTINEL_CORPUS says.

const repoRoot = resolve(__dirname, "..");

/** The folders a `shared/` beside `start` may be in: `start` and each folder above it. */
function foldersAbove(start: string): string[] {
  const folders = [start];
  while (dirname(folders.at(-1)!) !== folders.at(-1)) folders.push(dirname(folders.at(-1)!));
  return folders;
}

/** Where the clone's `origin` is a checkout on this machine, its path. */
function localOrigin(): string | undefined {
  try {
    const url = execFileSync("git", ["remote", "get-url", "origin"], {
      cwd: repoRoot,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
    const path = url.startsWith("file:") ? fileURLToPath(url) : url;
    return isAbsolute(path) && existsSync(path) ? path : undefined;
  } catch {
    return undefined;
  }
}

/** The corpus's folder, or where it was looked for first (absent: a user's clone). */
export function sentinelCorpus(): { folder: string; present: boolean } {
  if (process.env.SENTINEL_CORPUS) {
    return { folder: process.env.SENTINEL_CORPUS, present: existsSync(process.env.SENTINEL_CORPUS) };
  }
  const starts = [repoRoot, localOrigin()].filter((start): start is string => start !== undefined);
  for (const start of starts) {
    for (const folder of foldersAbove(dirname(start))) {
      const candidate = join(folder, "shared", "corpus", "sentinel");
      if (existsSync(candidate)) return { folder: candidate, present: true };
    }
  }
  return { folder: join(repoRoot, "..", "shared", "corpus", "sentinel"), present: false };
}
