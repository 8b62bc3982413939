import { lstatSync, realpathSync } from "node:fs";
import { resolve, sep } from "node:path";
import { workTreeRoot } from "./git";

// Where a folder's local `source` may lead: a policy-set folder is uploaded (or its policies' code is), so a file it
// names becomes policy code on the service. A source may leave the folder (libraries share files two levels up) but
// never the repository the folder belongs to, and only to a regular file: `../../../../proc/self/environ` would
// otherwise upload the provider's environment, tokens included.

/** Folders of the machine's own state, never policy code, whatever repository they seem to be in. */
const systemFolders = ["/proc", "/sys", "/dev"];

/** The repository a folder belongs to: its git work tree, else the Pulumi project's directory (the program's). */
export function repositoryOf(folder: string): string {
  return workTreeRoot(folder) ?? process.cwd();
}

/**
 * The file `source` names from `folder`, followed through links, when it is a regular file inside the folder or the
 * folder's repository; else the problem, naming the path and what to do.
 */
export function localSourceFile(folder: string, source: string): { path: string } | { problem: string } {
  const path = resolve(folder, source);
  let real: string;
  try {
    real = realpathSync(path);
  } catch {
    return { problem: `${source} does not exist (resolved to ${path}): fix the path, or add the file` };
  }
  const repository = realpathOrSelf(repositoryOf(folder));
  const inside = (root: string) => real === root || real.startsWith(root.endsWith(sep) ? root : `${root}${sep}`);
  if (systemFolders.some(inside) || !(inside(repository) || inside(realpathOrSelf(folder)))) {
    return {
      problem:
        `${source} leads outside the repository the folder belongs to (resolved to ${real}; the repository is ` +
        `${repository}): a source may name files of that repository only. Copy the file into it`,
    };
  }
  if (!lstatSync(real).isFile()) return { problem: `${source} is not a regular file (resolved to ${real})` };
  return { path: real };
}

function realpathOrSelf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
