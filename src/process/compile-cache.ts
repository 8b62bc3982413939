import { mkdirSync, statSync } from "node:fs";
import * as nodeModule from "node:module";
import { homedir } from "node:os";
import { join } from "node:path";

// The provider's processes (the dynamic provider host, the plugin for other languages) keep the compiled code of the
// modules they load in a cache on disk, so the next command compiles none of them again (zod and undici alone took
// 0.1 s to compile at every start). Node's own mechanism, turned on by the provider's entry points only, never by
// the library a user's program imports (it would cache the whole program's modules), and in a folder of this user's
// own: a cache in the shared temporary directory could be filled first by another user of the machine. The cache is
// checked against each file's content; NODE_COMPILE_CACHE chooses another folder, NODE_DISABLE_COMPILE_CACHE=1 turns
// it off. A Node without it just compiles as before.

/** This user's cache folder, made private (0700) if missing; undefined when it is not this user's alone. */
function privateCacheFolder(): string | undefined {
  const base = process.env.XDG_CACHE_HOME || join(homedir(), ".cache");
  const folder = join(base, "pulumi-tfe-governance", "node-compile-cache");
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  const stat = statSync(folder);
  const ownedHere = typeof process.getuid !== "function" || stat.uid === process.getuid();
  return ownedHere && (stat.mode & 0o077) === 0 ? folder : undefined;
}

/** Turns the cache on for this process: call it first in a provider's entry point. */
export function enableProviderCompileCache(): void {
  try {
    if (process.env.NODE_COMPILE_CACHE) {
      nodeModule.enableCompileCache?.();
      return;
    }
    const folder = privateCacheFolder();
    if (folder) nodeModule.enableCompileCache?.(folder);
  } catch {
    // A cache folder that cannot be made or written is no reason to fail a command: Node compiles as before.
  }
}

/**
 * Writes what was compiled so far to the cache, where it is on. Node writes it when the process exits, but the
 * engine ends provider processes with a signal, so without this the cache would never hold the provider's modules.
 */
export function keepCompiledCode(): void {
  try {
    nodeModule.flushCompileCache?.();
  } catch {
    // As above: the cache only saves time.
  }
}
