import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rename, rm, stat, symlink } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";
import { promisify } from "node:util";
import type { PulumiProject } from "./pulumi-project";

const repoRoot = resolve(__dirname, "..", "..");
const run = promisify(execFile);

export interface PluginArtifacts {
  folder: string;
  /** `pulumi-resource-tfegov-v<version>-<os>-<arch>.tar.gz` of this machine's platform. */
  tarball: string;
  /** The Python SDK's wheel. */
  wheel: string;
  version: string;
}

let built: Promise<PluginArtifacts> | undefined;

/** This machine's platform as the engine names it in a plugin's file name (`linux-amd64`). */
export const hostPlatform = `${process.platform === "win32" ? "windows" : process.platform}-${process.arch === "x64" ? "amd64" : process.arch}`;

/**
 * What a user installs, made by the command a user (or a release) runs: `scripts/package-plugin.mjs` over the built
 * dist/ and the committed sdk/, with this machine's plugin. Made once for every test file of a run that needs it: the
 * folder is named after what it is made of, so a test file finds the one another made, and a lock lets one make it
 * while others wait.
 */
export function pluginArtifacts(): Promise<PluginArtifacts> {
  built ??= (async () => {
    const folder = await packaged("artifacts", ["--platforms", hostPlatform]);
    const files = await readdir(folder);
    const tarball = files.find((file) => file.startsWith("pulumi-resource-tfegov-"));
    const wheel = files.find((file) => file.endsWith(".whl"));
    if (!tarball || !wheel) throw new Error(`the packaging made ${files.join(", ")}: no plugin tarball or wheel`);
    const version = /-v(\d+\.\d+\.\d+[^-]*)-/.exec(tarball)?.[1] as string;
    return { folder, tarball: join(folder, tarball), wheel: join(folder, wheel), version };
  })();
  return built;
}

let platformsBuilt: Promise<Record<string, string>> | undefined;

/**
 * The tarball of every platform, by platform (`linux-arm64`): this machine's from pluginArtifacts, the others made
 * apart, once, by the same command. Apart, so that the tests of this machine's plugin wait only for its own (the
 * four others take minutes more, signing included).
 */
export function everyPlatformTarball(): Promise<Record<string, string>> {
  platformsBuilt ??= (async () => {
    const { tarball } = await pluginArtifacts();
    const others = (await import("../../scripts/plugin-platforms.mjs")).platforms.filter(
      (platform) => platform !== hostPlatform,
    );
    const folder = await packaged("platforms", ["--platforms", others.join(",")]);
    const tarballs: Record<string, string> = { [hostPlatform]: tarball };
    for (const file of await readdir(folder)) {
      const platform = /^pulumi-resource-tfegov-v[^-]+-(\w+-\w+)\.tar\.gz$/.exec(file)?.[1];
      if (platform) tarballs[platform] = join(folder, file);
    }
    return tarballs;
  })();
  return platformsBuilt;
}

/** A folder `tfegov-<kind>-<digest>` of what `package-plugin.mjs <args>` makes, made once (see pluginArtifacts). */
async function packaged(kind: string, args: string[]): Promise<string> {
  const folder = join(tmpdir(), `tfegov-${kind}-${await sourcesDigest()}`);
  await madeOnce(folder, async (target) => {
    await run(process.execPath, [join(repoRoot, "scripts", "package-plugin.mjs"), target, ...args], {
      cwd: repoRoot,
      maxBuffer: 64 * 1024 * 1024,
    });
  });
  return folder;
}

/** A digest of everything the artifacts are made of: the build, the SDKs, the packaging script, the manifest. */
async function sourcesDigest(): Promise<string> {
  const hash = createHash("sha256");
  const visit = async (path: string): Promise<void> => {
    if ((await stat(path)).isDirectory()) {
      for (const entry of (await readdir(path)).sort()) await visit(join(path, entry));
    } else {
      hash.update(path).update(await readFile(path));
    }
  };
  const scripts = [
    "package-plugin.mjs",
    "plugin-bundle.mjs",
    "plugin-platforms.mjs",
    "plugin-platform-worker.mjs",
    "plugin-binaries.mts",
    "generate-sdks.sh",
  ];
  for (const path of [
    "dist",
    "sdk",
    "docs",
    "package.json",
    "package-lock.json",
    ...scripts.map((name) => `scripts/${name}`),
  ])
    await visit(join(repoRoot, path));
  return hash.digest("hex").slice(0, 16);
}

/** Makes `folder` with `make` unless it exists: in a folder of its own first, then renamed, under a lock. */
async function madeOnce(folder: string, make: (target: string) => Promise<void>): Promise<void> {
  const lock = `${folder}.lock`;
  for (const started = Date.now(); !existsSync(folder); ) {
    try {
      await mkdir(lock);
    } catch {
      // Another test file makes it; a lock older than ten minutes was left by a run that died.
      const age = Date.now() - (await stat(lock).catch(() => ({ mtimeMs: Date.now() }))).mtimeMs;
      if (age > 600_000) await rm(lock, { recursive: true, force: true });
      if (Date.now() - started > 600_000) throw new Error(`waited ten minutes for ${lock}`);
      await new Promise((done) => setTimeout(done, 500));
      continue;
    }
    try {
      if (existsSync(folder)) return;
      await removeOlderArtifacts();
      const partial = await mkdtemp(`${folder}-partial-`);
      await make(partial);
      await rename(partial, folder);
    } finally {
      await rm(lock, { recursive: true, force: true });
    }
  }
}

/** The artifacts of earlier builds, an hour old or more: 50 to 200 MB each, of no use once the build changed. */
async function removeOlderArtifacts(): Promise<void> {
  for (const entry of await readdir(tmpdir())) {
    if (!/^tfegov-(artifacts|platforms)-[0-9a-f]{16}(-partial-.*)?$/.test(entry)) continue;
    const path = join(tmpdir(), entry);
    const { mtimeMs } = await stat(path);
    if (Date.now() - mtimeMs > 3_600_000) await rm(path, { recursive: true, force: true });
  }
}

/** Installs the plugin into the project's PULUMI_HOME as a user does: `pulumi plugin install ... -f <tarball>`. */
export async function installPlugin(project: PulumiProject): Promise<PluginArtifacts> {
  const artifacts = await pluginArtifacts();
  await project.cli(["plugin", "install", "resource", "tfegov", artifacts.version, "-f", artifacts.tarball]);
  return artifacts;
}

export interface ServedRelease {
  /** The folder's URL, as the SDKs' pluginDownloadURL names it. */
  url: string;
  /** The paths the engine asked for, in order. */
  requests: string[];
  /** The Python wheel and the Go SDK's module folder made for `url`. */
  wheel: string;
  goSdk: string;
  close(): Promise<void>;
}

/**
 * A release as a team publishes one: the plugin's tarball (this platform's) served over HTTP from 127.0.0.1, and
 * SDKs made for that address by `npm run package -- --plugin-download-url <url> --sdks-only`, so that the engine
 * fetches the plugin itself when a program needs it.
 */
export async function servedRelease(): Promise<ServedRelease> {
  const artifacts = await pluginArtifacts();
  const requests: string[] = [];
  const server = createServer(async (request, response) => {
    const path = new URL(request.url ?? "/", "http://release").pathname;
    requests.push(path);
    const name = path.replace(/^\/releases\/v[^/]+\//, "");
    const file = join(artifacts.folder, basename(name));
    if (name !== basename(name) || !name.endsWith(".tar.gz") || !existsSync(file)) {
      response.writeHead(404).end();
      return;
    }
    const content = await readFile(file);
    response.writeHead(200, { "content-type": "application/gzip", "content-length": content.length });
    response.end(content);
  });
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/releases/v${artifacts.version}/`;
  const sdks = await mkdtemp(join(tmpdir(), "tfegov-release-sdks-"));
  await run(
    process.execPath,
    [join(repoRoot, "scripts", "package-plugin.mjs"), sdks, "--sdks-only", "--plugin-download-url", url],
    { cwd: repoRoot, maxBuffer: 64 * 1024 * 1024 },
  );
  const wheel = (await readdir(sdks)).find((file) => file.endsWith(".whl")) as string;
  return {
    url,
    requests,
    wheel: join(sdks, wheel),
    goSdk: join(sdks, "go"),
    close: async () => {
      await new Promise((closed) => server.close(closed));
      await rm(sdks, { recursive: true, force: true });
    },
  };
}

/**
 * PATH as on a machine with no Node.js: each folder of `path` that holds `node` is replaced by a folder of links to
 * everything else in it (Debian's /usr/bin holds Node 20 beside git and sh).
 */
export async function pathWithoutNode(path: string, scratch: string): Promise<string> {
  const nodeTools = new Set(["node", "nodejs", "npm", "npx", "corepack"]);
  const folders: string[] = [];
  for (const [index, folder] of path.split(":").entries()) {
    if (!folder || !existsSync(join(folder, "node"))) {
      if (folder) folders.push(folder);
      continue;
    }
    const shadow = join(scratch, `path-${index}`);
    await mkdir(shadow, { recursive: true });
    for (const entry of await readdir(folder)) {
      if (!nodeTools.has(entry)) await symlink(join(folder, entry), join(shadow, entry));
    }
    folders.push(shadow);
  }
  return folders.join(":");
}
