import { readFileSync } from "node:fs";
import { isAbsolute, join, relative } from "node:path";

/** Set by the plugin's bundler (scripts/plugin-bundle.mjs): the code runs as one file, not from dist/. */
declare const __PLUGIN_BUNDLE__: boolean | undefined;

/**
 * This package's root: two folders above this file's (dist/process/ once installed, src/process/ in a checkout); in
 * the plugin, its own folder (the executable or bundle, with package.json and docs/ beside it).
 */
const packageRoot = typeof __PLUGIN_BUNDLE__ !== "undefined" ? __dirname : join(__dirname, "..", "..");

/** This package's version, from its package.json. */
export const libraryVersion: string = JSON.parse(readFileSync(join(packageRoot, "package.json"), "utf8")).version;

/**
 * Where a page of this package's docs is, as a message names it: the package ships docs/, so the path is one the
 * reader can open (`node_modules/pulumi-tfe-governance/docs/ci.md` from a project's directory, `docs/ci.md` in a
 * checkout), absolute where the package is outside the working directory.
 */
export function packageDoc(page: string, from = process.cwd()): string {
  const path = join(packageRoot, "docs", page);
  const fromHere = relative(from, path);
  return fromHere.startsWith("..") || isAbsolute(fromHere) ? path : fromHere;
}

/**
 * The command a message tells a user to run (`<command> pending-creates --apply`): `npx tfe-governance` where the
 * library is installed; in the plugin, the plugin's own executable, which serves the same commands, so that a team
 * of another language, with no Node.js, has it too.
 */
export function cliCommand(): string {
  if (typeof __PLUGIN_BUNDLE__ === "undefined") return "npx tfe-governance";
  const executable = join(
    packageRoot,
    process.platform === "win32" ? "pulumi-resource-tfegov.exe" : "pulumi-resource-tfegov",
  );
  return /^[\w@%+=:,./\\-]+$/.test(executable) ? executable : JSON.stringify(executable);
}
