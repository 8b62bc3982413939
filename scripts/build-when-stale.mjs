// Builds dist/ (npm run build) only where a source is newer than the last build: a quickstart run again, or run
// beside other work that reads dist/ (the test suite runs files in parallel), does not empty dist/ under them.
import { execFileSync } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/** The latest change under `path`: a folder's own time moves when a file in it is removed or renamed. */
function newest(path) {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(stat.mtimeMs, ...readdirSync(path).map((name) => newest(join(path, name))));
}

let built = 0;
try {
  built = statSync(join(root, "dist", "index.js")).mtimeMs;
} catch {}
// What tsc builds from; package.json is left out, as npm pack rewrites it for the length of a pack (pack-manifest.mjs).
const sources = ["src", "tsconfig.json", "tsconfig.build.json"].map((name) => newest(join(root, name)));
if (built < Math.max(...sources)) {
  execFileSync("npm", ["run", "--silent", "build"], { cwd: root, stdio: "inherit" });
}
