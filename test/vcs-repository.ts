import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

// A local git repository standing for a VCS provider's repository: what the local server's vcsRepositories seed maps
// an identifier to, and what a test commits to and pushes from.

const gitEnv = {
  ...process.env,
  GIT_AUTHOR_NAME: "Policy Author",
  GIT_AUTHOR_EMAIL: "author@example.com",
  GIT_COMMITTER_NAME: "Policy Author",
  GIT_COMMITTER_EMAIL: "author@example.com",
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_CONFIG_NOSYSTEM: "1",
};

export class GitRepository {
  private constructor(readonly path: string) {}

  /**
   * A repository on branch `main` holding `files`, committed, with a remote `origin` naming `identifier` as a clone
   * of it would: a checkout shows by its remote and branch which repository it is (PolicySet's vcsCheckout).
   */
  static create(
    files: Record<string, string>,
    into = mkdtempSync(join(tmpdir(), "vcs-repository-")),
    identifier = "acme/policy-library",
  ): GitRepository {
    mkdirSync(into, { recursive: true });
    const repository = new GitRepository(into);
    repository.git(["init", "--quiet", "--initial-branch=main"]);
    repository.git(["remote", "add", "origin", `https://github.com/${identifier}.git`]);
    repository.commit(files, "The policy library");
    // What a clone records of its remote: the branch it tracks, and which branch is the default.
    repository.git(["update-ref", "refs/remotes/origin/main", "HEAD"]);
    repository.git(["symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/main"]);
    return repository;
  }

  /** A clone of the repository at `from`, in `into`: its remote `origin` is `from` until the caller names another. */
  static clone(from: string, into: string): GitRepository {
    execFileSync("git", ["clone", "--quiet", from, into], { env: gitEnv });
    return new GitRepository(into);
  }

  /** Removes the repository's directory: what a test made under the system's temporary directory goes with it. */
  remove(): void {
    rmSync(this.path, { recursive: true, force: true });
  }

  git(args: string[]): string {
    return execFileSync("git", ["-C", this.path, ...args], { env: gitEnv, encoding: "utf8" });
  }

  /** The commit the checkout is at. */
  head(): string {
    return this.git(["rev-parse", "HEAD"]).trim();
  }

  /** Writes `files` and commits them on the current branch; returns the commit's SHA. */
  commit(files: Record<string, string>, message: string): string {
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(this.path, path)), { recursive: true });
      writeFileSync(join(this.path, path), text);
    }
    this.git(["add", "--all"]);
    this.git(["commit", "--quiet", "--allow-empty", "-m", message]);
    return this.git(["rev-parse", "HEAD"]).trim();
  }
}

/** HashiCorp's third-generation library layout: sets in subfolders, shared functions and imports two levels up. */
export const thirdGenerationLibrary: Record<string, string> = {
  "common-functions/tfplan-functions/tfplan-functions.sentinel": "find_resources = func(t) { return [] }\n",
  "imports/regions.json": '{ "allowed": ["eu-west-1"] }\n',
  "policies/aws/sentinel.hcl":
    'module "tfplan-functions" {\n  source = "../../common-functions/tfplan-functions/tfplan-functions.sentinel"\n}\n\n' +
    'import "static" "regions" {\n  source = "../../imports/regions.json"\n  format = "json"\n}\n\n' +
    'policy "restrict-ec2" {\n  source            = "./restrict-ec2.sentinel"\n  enforcement_level = "hard-mandatory"\n}\n',
  "policies/aws/restrict-ec2.sentinel":
    'import "tfplan-functions" as plan\nimport "regions"\n\nmain = rule { length(plan.find_resources("aws_instance")) >= 0 }\n',
  "README.md": "A policy library laid out for sets read from version control.\n",
};

export { writeFileSync };
