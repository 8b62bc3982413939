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

/** What a checkout says of where it came from: its branch, its commit, its remotes and what they track. */
export interface CheckoutIdentity {
  /** The branch checked out; null where HEAD is detached (a CI checkout of a commit). */
  branch: string | null;
  head: string | null;
  /** Each remote's URL. */
  remoteUrls: string[];
  /** Each remote-tracking branch's commit, by its name without the remote (`main`), and each remote's default. */
  remoteBranches: { remote: string; branch: string; commit: string }[];
  remoteDefaults: string[];
}

function git(path: string, args: string[]): Promise<string | null> {
  return new Promise((done) => {
    execFile("git", ["-C", path, ...args], { timeout: 10_000 }, (error, stdout) => done(error ? null : String(stdout)));
  });
}

/** The checkout's branch, commit, remotes and remote-tracking branches, as git says them; empty where it cannot. */
export async function checkoutIdentity(path: string): Promise<CheckoutIdentity> {
  const [branch, head, urls, refs] = await Promise.all([
    git(path, ["symbolic-ref", "--quiet", "--short", "HEAD"]),
    headCommit(path),
    git(path, ["config", "--get-regexp", "^remote\\..*\\.url$"]),
    git(path, ["for-each-ref", "--format=%(refname:strip=2) %(objectname) %(symref:strip=3)", "refs/remotes"]),
  ]);
  const remoteBranches: CheckoutIdentity["remoteBranches"] = [];
  const remoteDefaults: string[] = [];
  for (const line of (refs ?? "").split("\n").filter(Boolean)) {
    const [name = "", commit = "", target = ""] = line.split(" ");
    const slash = name.indexOf("/");
    if (slash < 0) continue;
    const [remote, remoteBranch] = [name.slice(0, slash), name.slice(slash + 1)];
    if (remoteBranch === "HEAD") {
      if (target) remoteDefaults.push(target);
    } else remoteBranches.push({ remote, branch: remoteBranch, commit });
  }
  return {
    branch: branch?.trim() || null,
    head,
    remoteUrls: (urls ?? "")
      .split("\n")
      .filter(Boolean)
      .map((line) => withoutCredentials(line.slice(line.indexOf(" ") + 1).trim())),
    remoteBranches,
    remoteDefaults,
  };
}

/**
 * A remote's URL without what may be a credential: a CI checkout's remote often carries its job's token
 * (`https://gitlab-ci-token:<token>@host/...`, `?private_token=`), and what this URL is said in (a message, state)
 * must never hold it. Which repository it names is in its host and path, which stay.
 */
export function withoutCredentials(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@]*@/i, "$1").replace(/[?#].*$/, "");
}
