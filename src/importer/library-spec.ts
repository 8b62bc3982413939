import { existsSync, readFileSync, realpathSync, statSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve } from "node:path";

/**
 * How a generated project depends on this library. The package is on no registry yet, so a version range would
 * not install: the project gets the spec this copy was installed from, as the project that installed it wrote it
 * (a tarball, a git URL, a directory), with a relative path rebased onto the new project. From a checkout it is the
 * checkout's directory.
 */
export function installedLibrarySpec(projectDir: string): string {
  const packageRoot = realpathSync(join(__dirname, "..", ".."));
  const installer = dirname(packageRoot);
  if (basename(installer) === "node_modules") {
    const spec = dependencySpec(join(dirname(installer), "package.json"));
    if (spec !== undefined) return rebase(spec, dirname(installer), projectDir);
  }
  return `file:${relativeOrAbsolute(packageRoot, projectDir)}`;
}

/**
 * Whether npm must copy the spec's package rather than link it: a linked directory would bring its own
 * node_modules, and with it a second `@pulumi/pulumi` beside the project's (npm's `install-links`).
 */
export function specIsDirectory(spec: string, projectDir: string): boolean {
  if (!spec.startsWith("file:")) return false;
  const path = resolve(projectDir, spec.slice("file:".length));
  return existsSync(path) && statSync(path).isDirectory();
}

function dependencySpec(manifestPath: string): string | undefined {
  if (!existsSync(manifestPath)) return undefined;
  const manifest = JSON.parse(readFileSync(manifestPath, "utf8"));
  return manifest.dependencies?.["pulumi-tfe-governance"] ?? manifest.devDependencies?.["pulumi-tfe-governance"];
}

function rebase(spec: string, fromDir: string, toDir: string): string {
  if (!spec.startsWith("file:")) return spec;
  const path = spec.slice("file:".length);
  return `file:${relativeOrAbsolute(isAbsolute(path) ? path : resolve(fromDir, path), toDir)}`;
}

/** A path as the project would write it: relative when it stays near, else absolute. */
function relativeOrAbsolute(path: string, fromDir: string): string {
  const near = relative(resolve(fromDir), path);
  return near.split("/").filter((part) => part === "..").length <= 2 ? near || "." : path;
}

/**
 * A tarball spec that names a file outside the generated project, copied into the project's `vendor/` instead:
 * `file:../elsewhere/x.tgz` in `package.json` names a file a fresh CI runner does not have, so `npm ci` fails there
 * (a warm npm cache hides it on the machine that imported). Undefined for every other spec.
 */
export function vendoredTarball(
  spec: string,
  projectDir: string,
): { spec: string; path: string; bytes: Buffer } | undefined {
  if (!spec.startsWith("file:") || !/\.(tgz|tar\.gz)$/.test(spec)) return undefined;
  const path = resolve(projectDir, spec.slice("file:".length));
  const inside = relative(resolve(projectDir), path);
  if (!inside.startsWith("..") && !isAbsolute(inside)) return undefined;
  if (!existsSync(path) || !statSync(path).isFile()) return undefined;
  const file = `vendor/${basename(path)}`;
  return { spec: `file:${file}`, path: file, bytes: readFileSync(path) };
}
