// The package.json `npm pack` puts in the tarball: the checkout's, without `prepare`. `prepare` builds dist/ where
// the package is installed from a git URL or a directory (npm runs it there); in a tarball dist/ is built already and
// scripts/ is not shipped, and npm 11 lists a tarball's prepare among the install scripts a team must approve.
// `prepack` writes the packed manifest and keeps the checkout's beside it; `postpack` puts the checkout's back (and
// so does the next `prepack`, where a failed pack left it out).
// Its `files` name the folders of the repository it ships (docs/, examples/, bench/results) file by file, as git
// tracks them: npm packs whatever a folder holds, and a clone's examples/ may hold files of that machine's (a stray
// .env with a token, a stack's settings), git-ignored or not yet added. dist/, which git does not track, is built.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const manifest = join(root, "package.json");
const kept = join(root, ".package.json.checkout");

function restore() {
  if (existsSync(kept)) renameSync(kept, manifest);
}

/** The files git tracks under `entry`, or undefined outside a git work tree (a copy of the tracked files is one). */
function trackedFiles(entry) {
  try {
    const listed = execFileSync("git", ["ls-files", "-z", "--", entry], { cwd: root, encoding: "utf8", stdio: "pipe" });
    return listed.split("\0").filter(Boolean);
  } catch {
    return undefined;
  }
}

/** `files` with each folder git tracks files of replaced by those files; an entry git tracks nothing of (dist) kept. */
function trackedOnly(files) {
  return files.flatMap((entry) => {
    if (entry.startsWith("!")) return [entry];
    const tracked = trackedFiles(entry);
    return tracked && tracked.length > 0 ? tracked : [entry];
  });
}

/** Written whole or not at all: other commands of the checkout may read package.json while a pack runs. */
function writeWhole(path, text) {
  writeFileSync(`${path}.${process.pid}`, text);
  renameSync(`${path}.${process.pid}`, path);
}

const step = process.argv[2];
if (step === "prepack") {
  restore();
  const text = readFileSync(manifest, "utf8");
  const packed = JSON.parse(text);
  delete packed.scripts.prepare;
  packed.files = trackedOnly(packed.files);
  writeWhole(kept, text);
  writeWhole(manifest, `${JSON.stringify(packed, null, 2)}\n`);
} else if (step === "postpack") {
  restore();
} else {
  console.error("usage: node scripts/pack-manifest.mjs prepack|postpack");
  process.exit(2);
}
