import { execFile } from "node:child_process";
import { statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";

// What the policy checks need to know of the git repository a folder is in: where its work tree begins (sources
// outside a folder must stay inside it), and the commit its checkout is at (what a set read from version control
// was last checked at).

/** The root of the git work tree that holds `path` (the nearest folder upward with a `.git`), or undefined. */
export function workTreeRoot(path: string): string | undefined {
  for (let current = resolve(path); ; current = dirname(current)) {
    if (statSync(join(current, ".git"), { throwIfNoEntry: false })) return current;
    if (dirname(current) === current) return undefined;
  }
}

/** The commit `HEAD` names in the work tree of `path`, or null where there is none or git cannot say. */
export function headCommit(path: string): Promise<string | null> {
  return new Promise((done) => {
    execFile("git", ["rev-parse", "--verify", "--quiet", "HEAD"], { cwd: path, timeout: 10_000 }, (error, stdout) =>
      done(error ? null : (/^[0-9a-f]{40,64}$/.exec(stdout.trim())?.[0] ?? null)),
    );
  });
}
