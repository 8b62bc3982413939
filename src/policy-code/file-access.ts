import { readFileSync, realpathSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { workTreeRoot } from "./git";

// The one rule for every byte this library packs, uploads or compares from the local disk: a PolicySet's folder
// (and the files its sources bring in from outside it), a PolicyFolder, a Policy's codeFile, a vcsCheckout and
// `check-folder`. A file becomes policy code on the service, so a link or a `source` that leads elsewhere would
// upload whatever it names: `/proc/self/environ` (the provider's environment, tokens included), the Terraform CLI's
// credentials, the stack's own config. Each byte read comes from a regular file whose real path (every link followed,
// in any position of the path) is inside the repository (its git work tree, else the Pulumi project's directory)
// or the folder the program names; never under /proc, /sys or /dev, never git's own files, never a file of the
// credentials this tool, Terraform or Pulumi read, even where those lie inside a repository (a home directory kept in
// git). What breaks the rule is refused before anything is read from it, naming the path and where it leads.

/** Folders of the machine's own state, never policy code, whatever repository they seem to be in. */
const systemFolders = ["/proc", "/sys", "/dev"];

/** The repository a path belongs to: its git work tree, else the Pulumi project's directory (the program's). */
export function repositoryOf(path: string): string {
  return workTreeRoot(path) ?? process.cwd();
}

export class FileAccessError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "FileAccessError";
  }
}

/** What may be read: the real paths of the roots, and the credentials the rule keeps out wherever they are. */
export class FileAccess {
  private readonly roots: string[];

  private constructor(roots: string[]) {
    this.roots = [...new Set(roots.map(realpathOrSelf))];
  }

  /** For a folder the program names: its files, and files of its repository that its links and sources name. */
  static forFolder(folder: string): FileAccess {
    const absolute = resolve(folder);
    return new FileAccess([repositoryOf(absolute), absolute]);
  }

  /** For one file the program names (a Policy's codeFile): a file of its repository. */
  static forFile(path: string): FileAccess {
    return new FileAccess([repositoryOf(dirname(resolve(path)))]);
  }

  /** Where reads may lead, for messages. */
  describeRoots(): string {
    return this.roots.join(" or ");
  }

  /**
   * The real path of `path` when the rule lets it be read (a regular file, or a folder when `folder` is set); else
   * why not, naming `shown` (how the caller's user wrote it: a link, a source) and where it leads.
   */
  check(path: string, shown: string, options: { folder?: boolean } = {}): { path: string } | { problem: string } {
    let real: string;
    try {
      real = realpathSync(path);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      return code === "ELOOP"
        ? { problem: `${shown} is a loop of links (resolved from ${resolve(path)}): remove the link` }
        : { problem: `${shown} does not exist (resolved to ${resolve(path)}): fix the path, or add the file` };
    }
    const via = real === resolve(path) ? `${real}` : `${real} (through a link)`;
    if (systemFolders.some((folder) => within(folder, real))) {
      return {
        problem:
          `${shown} leads to ${via}, which the kernel serves (process and device data, the environment with its ` +
          "tokens among it) and which is never read: remove the link or fix the path",
      };
    }
    const credentials = credentialsOf(real);
    if (credentials) {
      return {
        problem: `${shown} leads to ${via}, ${credentials}, which is never read as policy code: remove the link or fix the path`,
      };
    }
    if (!this.roots.some((root) => within(root, real))) {
      return {
        problem:
          `${shown} leads to ${via}, outside the repository (${this.describeRoots()}): only files of the ` +
          "repository are read; copy the file into it",
      };
    }
    const stat = statSync(real, { throwIfNoEntry: false });
    if (!(stat?.isFile() || (options.folder && stat?.isDirectory()))) {
      return {
        problem: `${shown} leads to ${via}, which is no regular file${options.folder ? " or folder" : ""} (a device, a pipe or a socket): only regular files are read`,
      };
    }
    return { path: real };
  }

  /** The bytes of `path`, once the rule allows it; throws {@link FileAccessError} naming `shown` otherwise. */
  read(path: string, shown: string): Buffer {
    const checked = this.check(path, shown);
    if ("problem" in checked) throw new FileAccessError(checked.problem);
    return readFileSync(checked.path);
  }
}

/** Whether `path` is `folder` or lies under it. */
export function within(folder: string, path: string): boolean {
  const rest = relative(folder, path);
  return rest === "" || (rest !== ".." && !rest.startsWith(`..${sep}`) && !isAbsolute(rest));
}

/** The real path of `path` (every link followed), or the path resolved where it does not exist. */
export function realpathOrSelf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

/**
 * Why `real` is a credentials file (or in a folder of them) of this tool, Terraform, Pulumi or git, or undefined.
 * Read when asked, as the environment names some of them.
 */
function credentialsOf(real: string): string | undefined {
  const home = homedir();
  const folders: [string, string][] = [
    [join(home, ".terraform.d"), "a file of the Terraform CLI's own folder (its credentials.tfrc.json holds tokens)"],
    [process.env.PULUMI_HOME ?? join(home, ".pulumi"), "a file of Pulumi's own folder (credentials, stack state)"],
  ];
  for (const [folder, why] of folders) if (within(realpathOrSelf(folder), real)) return why;
  const files: [string | undefined, string][] = [
    [process.env.TF_CLI_CONFIG_FILE, "the Terraform CLI's configuration (TF_CLI_CONFIG_FILE), which may hold tokens"],
    [join(home, ".terraformrc"), "the Terraform CLI's configuration, which may hold tokens"],
  ];
  for (const [file, why] of files) if (file && realpathOrSelf(file) === real) return why;
  const name = basename(real);
  if (name === "credentials.tfrc.json") return "a Terraform credentials file";
  if (name === ".terraformrc" || name === "terraform.rc") return "a Terraform CLI configuration, which may hold tokens";
  if (/^Pulumi\.[^/\\]+\.ya?ml$/.test(name)) return "a Pulumi stack's configuration, which holds its secrets";
  if (real.split(sep).includes(".git")) return "a file of git's own folder (a remote's URL may hold a token)";
  return undefined;
}
