import { execFile } from "node:child_process";
import { posix } from "node:path";
import { unpackArchive } from "../policy-code/archive";
import { globRegExp } from "../policy-code/glob";
import { readPolicySetFolder } from "../policy-code/policy-set-folder";
import { ingressErrorMessage } from "./policy-set-ingress";
import type { PolicySetRecord, PolicySetVersionRecord, Storage } from "./storage";

/**
 * Sets read from version control, as the service reads them: when a set is created or its repository, branch or
 * policies path changes, and when the branch gets a new commit, the service ingests the whole repository at that
 * commit into a version (`source` the provider's name, `ingress-attributes` the commit), reads the set's folder at
 * its policies path (whose `../` sources reach the rest of the repository), and settles it `ready` or `errored`.
 *
 * Here each repository identifier the seed names is a local git repository, read with the `git` command; a push is
 * announced to `POST /_local/vcs-push` (see routes/vcs.ts), where the service would get the provider's webhook.
 * Submodules are not ingested (`ingress-submodules` is kept, and ignored).
 */

function git(repository: string, args: string[]): Promise<Buffer> {
  return new Promise((done, fail) => {
    execFile(
      "git",
      ["-C", repository, ...args],
      { encoding: "buffer", maxBuffer: 256 * 1024 * 1024 },
      (error, stdout, stderr) => (error ? fail(new Error(stderr.toString().trim() || error.message)) : done(stdout)),
    );
  });
}

/** The commit `branch` (or the default branch) points at, or undefined when there is no such branch. */
async function branchHead(
  repository: string,
  branch: string | null,
): Promise<{ branch: string; sha: string } | undefined> {
  try {
    const name = branch ?? (await git(repository, ["symbolic-ref", "--short", "HEAD"])).toString().trim();
    const sha = (await git(repository, ["rev-parse", "--verify", "--quiet", `refs/heads/${name}^{commit}`]))
      .toString()
      .trim();
    return sha ? { branch: name, sha } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Starts reading a version-control set at its branch's head: the version exists (ingressing) when this returns, so
 * the answer that created or changed the set can name it; the reading itself happens right after.
 */
export async function startVcsIngress(
  storage: Storage,
  policySet: PolicySetRecord,
): Promise<PolicySetVersionRecord | undefined> {
  const repo = policySet.vcsRepo;
  if (!repo) return undefined;
  const repository = storage.vcsRepository(repo.identifier);
  const head = repository ? await branchHead(repository.path, repo.branch) : undefined;
  const provider = repo.serviceProvider;
  const version = storage.createVersion(policySet.id, {
    source: provider,
    ingressAttributes: {
      commitSha: head?.sha ?? "",
      branch: head?.branch ?? repo.branch ?? "",
      identifier: repo.identifier,
      commitUrl: head ? `https://${providerHost(provider)}/${repo.identifier}/commit/${head.sha}` : "",
      policiesPath: policySet.policiesPath ?? "",
    },
  });
  if (!repository) {
    storage.finishVersion(version.id, {
      status: "errored",
      errorMessage: `Failed to ingress repository "${repo.identifier}": it was not found, or the VCS connection cannot read it`,
    });
    return storage.version(version.id);
  }
  if (!head) {
    storage.finishVersion(version.id, {
      status: "errored",
      errorMessage: `Failed to ingress repository "${repo.identifier}": branch "${repo.branch ?? "(default)"}" was not found`,
    });
    return storage.version(version.id);
  }
  storage.inBackground(() => readVersion(storage, policySet, version.id, repository.path, head.sha));
  return version;
}

/** The repository's files at `sha`, as the gzip'd tar a version of it is read from. */
export function gitArchive(repository: string, sha: string): Promise<Buffer> {
  return git(repository, ["archive", "--format=tar.gz", sha]);
}

async function readVersion(storage: Storage, policySet: PolicySetRecord, versionId: string, path: string, sha: string) {
  try {
    const files = await unpackArchive(await gitArchive(path, sha));
    await readPolicySetFolder(files, policySet.kind, policySet.policiesPath ?? "");
    storage.finishVersion(versionId, { status: "ready" });
  } catch (error) {
    storage.finishVersion(versionId, { status: "errored", errorMessage: ingressErrorMessage(error) });
  }
}

/**
 * A push to `identifier` (`branch`, else every branch a set reads): each set reading it gets a new version when the
 * branch moved past the commit of its newest version and, where the set has `policy-update-patterns`, a changed file
 * matches one of them (the service's rule; without patterns any change counts).
 */
export async function ingestPush(storage: Storage, identifier: string, branch: string | undefined): Promise<string[]> {
  const repository = storage.vcsRepository(identifier);
  if (!repository) return [];
  const started: string[] = [];
  for (const policySet of storage.policySetsReading(identifier)) {
    const head = await branchHead(repository.path, policySet.vcsRepo?.branch ?? null);
    if (!head || (branch !== undefined && head.branch !== branch)) continue;
    const newest = policySet.newestVersionId ? storage.version(policySet.newestVersionId) : undefined;
    const last = newest?.ingressAttributes?.commitSha;
    if (last === head.sha) continue;
    if (last && policySet.policyUpdatePatterns.length > 0) {
      const changed = (await git(repository.path, ["diff", "--name-only", last, head.sha]).catch(() => Buffer.alloc(0)))
        .toString()
        .split("\n")
        .filter(Boolean);
      const patterns = policySet.policyUpdatePatterns.map(globPattern);
      if (!changed.some((path) => patterns.some((pattern) => pattern.test(path)))) continue;
    }
    const version = await startVcsIngress(storage, policySet);
    if (version) started.push(version.id);
  }
  return started;
}

/**
 * A `policy-update-patterns` glob, in go-slug's glob language (`**` spans folders, `*` and `?` stay within one): one
 * that does not compile matches nothing.
 */
function globPattern(glob: string): RegExp {
  return globRegExp(posix.normalize(glob).replace(/^\.\//, "")) ?? /(?!)/;
}

/** The web host of a VCS provider, for the links a set's documents carry. */
export function providerHost(provider: string): string {
  return (
    (
      { github: "github.com", gitlab: "gitlab.com", bitbucket: "bitbucket.org", ado: "dev.azure.com" } as Record<
        string,
        string
      >
    )[provider] ?? `${provider}.example`
  );
}
