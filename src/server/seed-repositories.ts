import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { cp, mkdir, mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

// A seed's version-control repository may be made by the server: `from` names a folder whose files become the first
// commit of a new git repository, so that a seed shows sets read from version control with nothing prepared by hand.
// It is made once: where the repository exists (a restart on the same --data), its commits since are kept.

export interface SeedRepository {
  identifier: string;
  /** The local git repository the identifier stands for; where it is not given, one under the data's folder. */
  path?: string | undefined;
  /** A folder whose files become the repository's first commit, where the repository does not exist yet. */
  from?: string | undefined;
}

function git(cwd: string, args: string[]): Promise<void> {
  return new Promise((done, fail) => {
    execFile("git", args, { cwd }, (error, _stdout, stderr) =>
      error ? fail(new Error(`git ${args[0]} in ${cwd}: ${stderr.trim() || error.message}`)) : done(),
    );
  });
}

/**
 * Gives each repository without a path one under `dataFile`'s folder (`repositories/<identifier>`; a temporary
 * folder for data in memory, which it returns so that the server removes it with the data), and makes the
 * repositories that have a `from` and do not exist yet.
 */
export async function makeSeedRepositories(
  repositories: SeedRepository[],
  dataFile: string,
): Promise<string | undefined> {
  let home: string | undefined;
  let temporary: string | undefined;
  for (const repository of repositories) {
    if (!repository.path) {
      if (dataFile === ":memory:") home = temporary ??= await mkdtemp(join(tmpdir(), "tfe-governance-repositories-"));
      else home ??= join(dirname(dataFile), "repositories");
      repository.path = join(home, ...repository.identifier.split("/"));
    }
    if (!repository.from || existsSync(join(repository.path, ".git"))) continue;
    try {
      await mkdir(repository.path, { recursive: true });
      await cp(repository.from, repository.path, { recursive: true });
      const author = ["-c", "user.name=tfe-governance-server", "-c", "user.email=tfe-governance-server@localhost"];
      await git(repository.path, ["init", "--quiet", "--initial-branch=main"]);
      await git(repository.path, ["add", "--all"]);
      await git(repository.path, [
        ...author,
        "commit",
        "--quiet",
        "-m",
        `Made by tfe-governance-server from ${repository.from}`,
      ]);
    } catch (error) {
      // Without git the server still serves everything else; a set read from this repository errors, saying why.
      console.warn(
        `could not make repository ${repository.identifier} at ${repository.path}: ${(error as Error).message}`,
      );
    }
  }
  return temporary;
}
