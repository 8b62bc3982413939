import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { temporaryDirectory } from "../temporary-directory";

// Node's compile cache is the provider's own: on in its processes, in a folder of the user's alone; never turned on
// for a user's program by importing the library, and never in a folder another user of the machine could fill.

const dist = join(__dirname, "..", "..", "dist");

/** The compile cache folder Node uses after `require(entry)` in a fresh process with `env`, or "none". */
function cacheAfter(entry: string, env: NodeJS.ProcessEnv): string {
  const script = `require(${JSON.stringify(entry)}); console.log(require("node:module").getCompileCacheDir?.() ?? "none");`;
  return execFileSync(process.execPath, ["-e", script], {
    env: { ...process.env, NODE_COMPILE_CACHE: "", ...env },
    encoding: "utf8",
  }).trim();
}

describe("the compile cache", () => {
  it("is not turned on for a program that imports the library", () => {
    const home = temporaryDirectory("compile-cache-home-");
    expect(cacheAfter(join(dist, "index.js"), { XDG_CACHE_HOME: home })).toBe("none");
  });

  it("is on in the provider's process, in a folder of the user's alone (0700)", () => {
    const home = temporaryDirectory("compile-cache-home-");
    const folder = cacheAfter(join(dist, "resources", "providers.js"), { XDG_CACHE_HOME: home });
    expect(folder.startsWith(join(home, "pulumi-tfe-governance", "node-compile-cache"))).toBe(true);
    expect(statSync(join(home, "pulumi-tfe-governance", "node-compile-cache")).mode & 0o777).toBe(0o700);
  });

  it("stays off where its folder is open to others, rather than load what another user may have put there", () => {
    const home = temporaryDirectory("compile-cache-home-");
    const folder = join(home, "pulumi-tfe-governance", "node-compile-cache");
    mkdirSync(folder, { recursive: true });
    chmodSync(folder, 0o777);
    expect(cacheAfter(join(dist, "resources", "providers.js"), { XDG_CACHE_HOME: home })).toBe("none");
  });
});
