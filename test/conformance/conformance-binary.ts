import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

// The Go program of the conformance suites (go-tfe/), built from HashiCorp's own modules: go-tfe's calls, and
// go-slug's packing of a folder (its `slug` command).

const moduleDir = join(__dirname, "go-tfe");

export const goAvailable = (() => {
  try {
    execFileSync("go", ["version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

/**
 * The conformance binary, built once per content of the Go module (sources, go.mod, go.sum) and Go version, and
 * kept under the project's tool cache: a second run builds nothing.
 */
export function conformanceBinary(): { path: string; built: boolean } {
  const hash = createHash("sha256").update(execFileSync("go", ["version"]));
  for (const file of readdirSync(moduleDir).sort()) hash.update(file).update(readFileSync(join(moduleDir, file)));
  const cache =
    process.env.PULUMI_TFE_GOVERNANCE_CACHE ??
    join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "pulumi-tfe-governance");
  const prefix = "go-tfe-conformance-";
  const directory = join(cache, `${prefix}${hash.digest("hex").slice(0, 16)}`);
  const path = join(directory, "go-tfe-conformance");
  if (existsSync(path)) return { path, built: false };
  mkdirSync(directory, { recursive: true });
  const partial = `${path}.${process.pid}.partial`;
  execFileSync("go", ["build", "-mod=readonly", "-trimpath", "-o", partial, "."], {
    cwd: moduleDir,
    stdio: ["ignore", "inherit", "inherit"],
  });
  renameSync(partial, path);
  // Builds of earlier sources are dead weight now.
  for (const entry of readdirSync(cache)) {
    if (entry.startsWith(prefix) && join(cache, entry) !== directory) rmSync(join(cache, entry), { recursive: true });
  }
  return { path, built: true };
}
