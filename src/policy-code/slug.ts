import { lstatSync, readdirSync, readlinkSync, realpathSync, statSync } from "node:fs";
import { dirname, isAbsolute, join, posix, relative, resolve, sep } from "node:path";
import { maxPolicySetFiles, maxPolicySetUnpackedBytes } from "../contract/policy-sets";
import { FileAccess, FileAccessError } from "./file-access";
import { globRegExp } from "./glob";

/**
 * A policy-set folder read the way HashiCorp's go-slug packs it for go-tfe's `PolicySetVersions.Upload` (and so for
 * the Terraform provider): `slug.Pack(dir, w, true)`, which applies `.terraformignore` and dereferences links. What
 * is written here is what go-slug does, checked against go-slug itself by `test/conformance/go-slug.test.ts`:
 *
 * - go-slug's three default rules always come first (`.terraform/` out, `.terraform/modules/` back in, `.git/` out),
 *   then the lines of a root `.terraformignore` (a link to one is read through the link, as go-slug opens it); a
 *   pattern without a leading `/` matches at any depth (go-slug puts `**` + `/` before it, even when it holds a `/`,
 *   unlike gitignore), one ending in `/` matches what is under it.
 * - A directory a rule excludes is still walked when a later `!` rule may take part of it back.
 * - A link inside the folder stays a link (the service reads its target); a link that leaves the folder is followed,
 *   and the walk under a linked directory matches rules against paths relative to that directory, as go-slug does.
 * - Files that are not regular (devices, pipes, sockets) are left out, as go-slug leaves them.
 *
 * One departure, on purpose: every file is read under the one file-access rule (file-access.ts). A link that leads
 * outside the repository, into `/proc`, `/sys` or `/dev`, to a credentials file or to anything but a regular file or
 * a folder is refused, naming the link and where it leads, before anything is read from it. go-slug would copy such
 * a target's bytes into the upload (`/proc/self/environ` is the process's environment, tokens included) or hang on a
 * pipe. The same holds for `.terraformignore`: one that cannot be read so (a link to nothing, or out of the
 * repository) is refused, where go-slug warns on stderr and packs with its defaults alone, uploading whatever the
 * file meant to leave out.
 */

/** One `.terraformignore` rule, as go-slug keeps it. */
interface IgnoreRule {
  /** The pattern after go-slug's rewriting (`**` + `/` before a relative pattern, `**` after a trailing `/`). */
  pattern: string;
  negated: boolean;
  /** A `!` rule comes after this one: an excluded directory must still be walked. */
  negationsAfter: boolean;
  regex: RegExp | null;
}

/** go-slug's defaults, as they would read in a `.terraformignore`: `.terraform/`, `!.terraform/modules/`, `.git/`. */
function defaultRules(): IgnoreRule[] {
  return [
    rule("**/.terraform/**", false, true),
    rule("**/.terraform/modules/**", true, false),
    rule("**/.git/**", false, false),
  ];
}

function rule(pattern: string, negated: boolean, negationsAfter: boolean): IgnoreRule {
  return { pattern, negated, negationsAfter, regex: globRegExp(pattern) };
}

/** go-slug's rules for a folder: its defaults, then each line of `.terraformignore` (when there is one). */
export function ignoreRules(terraformIgnore: string | undefined): IgnoreRule[] {
  const rules = defaultRules();
  if (terraformIgnore === undefined) return rules;
  // bufio.ScanLines: lines end at \n, and a \r before it is dropped.
  for (const line of terraformIgnore.split("\n").map((text) => text.replace(/\r$/, ""))) {
    if (line.length === 0) continue;
    let pattern = line.trim();
    // go-slug indexes the first character of what is left; a line of spaces, or a lone "!", would make it panic.
    if (pattern === "" || pattern.startsWith("#")) continue;
    const negated = pattern.startsWith("!");
    if (negated) {
      pattern = pattern.slice(1);
      if (pattern === "") continue;
      for (let index = rules.length - 1; index >= 0 && !(rules[index] as IgnoreRule).negationsAfter; index--) {
        (rules[index] as IgnoreRule).negationsAfter = true;
      }
    }
    if (pattern.endsWith("/")) pattern += "**";
    pattern = pattern.startsWith("/") ? pattern.slice(1) : `**/${pattern}`;
    rules.push(rule(pattern, negated, false));
  }
  return rules;
}

interface Exclusion {
  excluded: boolean;
  /** Excluded with no `!` rule after the one that matched: a directory's content can be skipped whole. */
  dominating: boolean;
}

/** Whether the rules leave `path` out: the last rule that matches decides. */
export function excludes(rules: readonly IgnoreRule[], path: string): Exclusion {
  let excluded = false;
  let dominating = false;
  for (const { regex, negated, negationsAfter } of rules) {
    if (regex?.test(path)) {
      excluded = !negated;
      dominating = excluded && !negationsAfter;
    }
  }
  return { excluded, dominating };
}

/** A policy-set folder as the service will read it once the upload is unpacked. */
export interface SlugFolder {
  /** Each regular file by its path in the folder (`/`-separated), links inside the folder resolved. */
  files: Map<string, Uint8Array>;
  /** What go-slug's archive holds: regular files (links leaving the folder as their content), and links kept. */
  packed: { files: Map<string, Uint8Array>; links: Map<string, string> };
  /** Links that leave the folder, followed: their content is in `files`, and preview names each. */
  externalLinks: { path: string; target: string }[];
}

export class SlugError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SlugError";
  }
}

/** Walks `directory` as go-slug packs it; throws {@link SlugError} naming the path for what cannot be packed. */
export function readSlugFolder(directory: string): SlugFolder {
  const root = resolve(directory);
  const access = FileAccess.forFolder(root);
  const read = (file: string, shown: string) => {
    try {
      return access.read(file, shown);
    } catch (error) {
      if (error instanceof FileAccessError) throw new SlugError(error.message);
      throw error;
    }
  };
  // go-slug opens the file, following a link wherever it leads. A link is read through the file-access rule like
  // any other: one that leads nowhere, or somewhere the rule refuses, is refused rather than taken as no file,
  // which would pack and upload everything the file leaves out (go-slug would, silently).
  const ignoreFile = join(root, ".terraformignore");
  const ignoreEntry = lstatSync(ignoreFile, { throwIfNoEntry: false });
  const rules = ignoreRules(
    ignoreEntry
      ? read(
          ignoreFile,
          ignoreEntry.isSymbolicLink()
            ? `.terraformignore (a link to ${readlinkSync(ignoreFile)})`
            : ".terraformignore",
        ).toString("utf8")
      : undefined,
  );
  const files = new Map<string, Uint8Array>();
  const links = new Map<string, string>();
  const externalLinks: { path: string; target: string }[] = [];

  /** go-slug's walk of `source`, written under `destination` (a folder path; "" for the root). */
  const walk = (source: string, destination: string, walking: ReadonlySet<string>) => {
    const visit = (absolute: string, relativePath: string) => {
      // filepath.Walk: entries in lexical order of their names, without following links.
      for (const name of readdirSync(absolute).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))) {
        const full = join(absolute, name);
        const matchPath = relativePath ? `${relativePath}/${name}` : name;
        const path = destination ? `${destination}/${matchPath}` : matchPath;
        const stat = lstatSync(full);
        if (excludes(rules, matchPath).excluded) {
          // A rule matching the bare path leaves the entry out; the walk still goes into a folder.
          if (stat.isDirectory()) visit(full, matchPath);
          continue;
        }
        if (stat.isDirectory()) {
          const asFolder = excludes(rules, `${matchPath}/`);
          if (!asFolder.excluded || !asFolder.dominating) visit(full, matchPath);
        } else if (stat.isFile()) {
          files.set(path, read(full, path));
        } else if (stat.isSymbolicLink()) {
          followLink(full, path, walking);
        }
        // Devices, pipes and sockets in the folder itself: go-slug leaves them out.
      }
    };
    visit(source, "");
  };

  const followLink = (linkFile: string, path: string, walking: ReadonlySet<string>) => {
    const target = readlinkSync(linkFile);
    const absoluteTarget = isAbsolute(target) ? resolve(target) : resolve(dirname(linkFile), target);
    const resolvedTarget = tryRealpath(linkFile);
    if (resolvedTarget === undefined) {
      // A link to nothing inside the folder is packed as a link, and reads as nothing; one leaving it fails go-slug.
      if (isWithin(root, absoluteTarget)) {
        links.set(path, posix.normalize(toPosix(relative(root, absoluteTarget))));
        return;
      }
      throw new SlugError(`${path} is a link to ${target}, which does not exist: remove it, or fix its target`);
    }
    const allowed = access.check(linkFile, `${path} (a link to ${target})`, { folder: true });
    if ("problem" in allowed) throw new SlugError(allowed.problem);
    const stat = statSync(resolvedTarget);
    if (isWithin(root, absoluteTarget)) {
      // Kept as a link by go-slug: the service reads the target, as the folder's own content.
      links.set(path, posix.normalize(toPosix(relative(root, absoluteTarget))));
      return;
    }
    externalLinks.push({ path, target: resolvedTarget });
    if (stat.isDirectory()) {
      if (walking.has(resolvedTarget)) throw new SlugError(`${path} links back to a folder above it: remove the loop`);
      walk(resolvedTarget, path, new Set([...walking, resolvedTarget]));
    } else files.set(path, read(linkFile, `${path} (a link to ${target})`));
  };

  walk(root, "", new Set([tryRealpath(root) ?? root]));
  let resolved: Map<string, Uint8Array>;
  try {
    resolved = resolveLinks(files, links);
  } catch (error) {
    if (error instanceof LinkExpansionError) throw new SlugError(`the folder ${error.message}`);
    throw error;
  }
  return { files: resolved, packed: { files, links }, externalLinks };
}

function tryRealpath(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

function toPosix(path: string): string {
  return sep === "/" ? path : path.split(sep).join("/");
}

/** Whether `path` is `folder` or lies under it (by their text, as go-slug compares). */
function isWithin(folder: string, path: string): boolean {
  const rest = relative(folder, path);
  return rest === "" || (!rest.startsWith("..") && !isAbsolute(rest));
}

/**
 * The folder as a reader sees it once links inside it are followed: each link to a file reads as that file, each
 * link to a folder as that folder's files under the link's path. Chains of links and links through linked folders
 * resolve whatever their order; a link to nothing, or to a folder above itself, adds nothing. Shared by the packer
 * and the server's unpacking, so both read an archive the same way.
 */
const maxLinkedDepth = 64;

/** Links that would read as more files or bytes than a version may hold: counted as they resolve, never past it. */
export class LinkExpansionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "LinkExpansionError";
  }
}

export function resolveLinks(
  files: ReadonlyMap<string, Uint8Array>,
  links: ReadonlyMap<string, string>,
  limits: { files: number; bytes: number } = { files: maxPolicySetFiles, bytes: maxPolicySetUnpackedBytes },
): Map<string, Uint8Array> {
  const view = new Map(files);
  let bytesRead = 0;
  for (const bytes of files.values()) bytesRead += bytes.byteLength;
  const add = (path: string, bytes: Uint8Array) => {
    view.set(path, bytes);
    bytesRead += bytes.byteLength;
    if (view.size > limits.files || bytesRead > limits.bytes) {
      throw new LinkExpansionError(
        `its links read as more than ${view.size > limits.files ? `${limits.files} files` : `${limits.bytes} bytes`} ` +
          "(a link to a folder reads as every file of it): a version holds no more; remove links that repeat folders",
      );
    }
  };
  // Each pass adds what one more step of following gives; a pass that adds nothing ends it. A link to a folder
  // above it would add paths forever, and is skipped.
  for (let added = true; added; ) {
    added = false;
    for (const [link, target] of links) {
      if (`${link}/`.startsWith(`${target}/`)) continue;
      const file = view.get(target);
      if (file !== undefined) {
        if (!view.has(link)) {
          add(link, file);
          added = true;
        }
        continue;
      }
      for (const [path, bytes] of [...view]) {
        if (!path.startsWith(`${target}/`)) continue;
        const linked = `${link}/${path.slice(target.length + 1)}`;
        // Two folders linked into each other would nest without end: no reader goes that deep.
        if (!view.has(linked) && linked.split("/").length <= maxLinkedDepth) {
          add(linked, bytes);
          added = true;
        }
      }
    }
  }
  return view;
}
