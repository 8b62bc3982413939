// The package.json `npm pack` puts in the tarball: the checkout's, without `prepare`. `prepare` builds dist/ where
// the package is installed from a git URL or a directory (npm runs it there); in a tarball dist/ is built already and
// scripts/ is not shipped, and npm 11 lists a tarball's prepare among the install scripts a team must approve.
// `prepack` writes the packed manifest and keeps the checkout's beside it; `postpack` puts the checkout's back (and
// so does the next `prepack`, where a failed pack left it out).
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const manifest = join(root, "package.json");
const kept = join(root, ".package.json.checkout");

function restore() {
  if (existsSync(kept)) renameSync(kept, manifest);
}

const step = process.argv[2];
if (step === "prepack") {
  restore();
  const text = readFileSync(manifest, "utf8");
  const packed = JSON.parse(text);
  delete packed.scripts.prepare;
  writeFileSync(kept, text);
  writeFileSync(manifest, `${JSON.stringify(packed, null, 2)}\n`);
} else if (step === "postpack") {
  restore();
} else {
  console.error("usage: node scripts/pack-manifest.mjs prepack|postpack");
  process.exit(2);
}
