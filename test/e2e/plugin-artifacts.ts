import { execFile } from "node:child_process";
import { mkdtemp, readdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import type { PulumiProject } from "./pulumi-project";

const repoRoot = resolve(__dirname, "..", "..");
const run = promisify(execFile);

export interface PluginArtifacts {
  folder: string;
  /** `pulumi-resource-tfegov-v<version>.tar.gz`. */
  tarball: string;
  /** The Python SDK's wheel. */
  wheel: string;
  version: string;
}

let built: Promise<PluginArtifacts> | undefined;

/**
 * What a user installs, made by the command a user (or a release) runs: `scripts/package-plugin.mjs` over the built
 * dist/, into a folder of this test process. Built once per test file.
 */
export function pluginArtifacts(): Promise<PluginArtifacts> {
  built ??= (async () => {
    const folder = await mkdtemp(join(tmpdir(), "tfegov-artifacts-"));
    await run(process.execPath, [join(repoRoot, "scripts", "package-plugin.mjs"), folder], {
      cwd: repoRoot,
      maxBuffer: 64 * 1024 * 1024,
    });
    const files = await readdir(folder);
    const tarball = files.find((file) => file.startsWith("pulumi-resource-tfegov-"));
    const wheel = files.find((file) => file.endsWith(".whl"));
    if (!tarball || !wheel) throw new Error(`the packaging made ${files.join(", ")}: no plugin tarball or wheel`);
    const version = /-v(.+)\.tar\.gz$/.exec(tarball)?.[1] as string;
    return { folder, tarball: join(folder, tarball), wheel: join(folder, wheel), version };
  })();
  return built;
}

/** Installs the plugin into the project's PULUMI_HOME as a user does: `pulumi plugin install ... -f <tarball>`. */
export async function installPlugin(project: PulumiProject): Promise<PluginArtifacts> {
  const artifacts = await pluginArtifacts();
  await project.cli(["plugin", "install", "resource", "tfegov", artifacts.version, "-f", artifacts.tarball]);
  return artifacts;
}
