import * as nodeModule from "node:module";

// Loaded first by the library's entry points (the program's and the dynamic provider's): Node then keeps the
// compiled code of the modules loaded after it in a cache on disk, so the next command compiles none of them again
// (zod and undici alone took 0.1 s to compile at every start). Node's own mechanism: the cache lives in
// NODE_COMPILE_CACHE or os.tmpdir()/node-compile-cache, is checked against each file's content, and
// NODE_DISABLE_COMPILE_CACHE=1 turns it off. A Node without it just compiles as before.
try {
  nodeModule.enableCompileCache?.();
} catch {
  // A cache directory that cannot be written is no reason to fail a command: Node compiles as before.
}

/**
 * Writes what was compiled so far to the cache. Node writes it when the process exits, but the engine ends the
 * dynamic provider's process with a signal, so without this the cache would never hold the provider's modules.
 */
export function keepCompiledCode(): void {
  try {
    nodeModule.flushCompileCache?.();
  } catch {
    // As above: the cache only saves time.
  }
}
