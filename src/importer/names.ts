/**
 * Turning service names into the names a generated project needs: TypeScript identifiers for the program's
 * constants, and file names for the policies' code. Policy names may hold letters, digits, `-` and `_`, so
 * `require-tags`, `1st-check` and `delete` are all names the service accepts and none is an identifier.
 */

// Words a `const` may not be named (reserved words, strict-mode and contextual ones that would read badly), the
// names CommonJS gives every module (TypeScript reserves them at a module's top level: TS2441), Python's keywords
// (the same identifiers name the variables of a Python program), and the names the generated programs declare or
// import themselves. Identifiers here start lowercase, so only lowercase words matter.
const unusableIdentifiers = new Set(
  [
    "break case catch class const continue debugger default delete do else enum export extends false finally for",
    "function if import in instanceof new null return super switch this throw true try typeof var void while with",
    "yield let static implements interface package private protected public await arguments eval undefined",
    "require exports module",
    "and as assert async def del elif except from global is lambda nonlocal not or pass raise match case",
    "organization config pulumi tfegov",
  ].flatMap((words) => words.split(" ")),
);

/** Why an identifier is not the plain camel-case form of its name. */
export type IdentifierChange =
  | "the name does not start with a letter"
  | "the name is a reserved word"
  | "another name has the same camel-case form";

export interface AllocatedIdentifier {
  identifier: string;
  /** Set when the identifier had to differ from the name's camel-case form. */
  change?: IdentifierChange;
}

/** `require-tags` → `requireTags`, `["vpc", "aws"]` → `vpcAws`: words joined in camel case. */
export function camelCase(words: readonly string[]): string {
  const parts = words.flatMap((word) => word.split(/[^A-Za-z0-9]+/)).filter((part) => part !== "");
  return parts
    .map((part, index) => (index === 0 ? part.charAt(0).toLowerCase() : part.charAt(0).toUpperCase()) + part.slice(1))
    .join("");
}

/** Hands out distinct identifiers, in the order asked. */
export class IdentifierAllocator {
  private readonly taken = new Set<string>();

  /** `candidate` is the name's camel-case form; `fallbackPrefix` makes a word of it where it is not one. */
  allocate(candidate: string, fallbackPrefix: string): AllocatedIdentifier {
    let identifier = candidate;
    let change: IdentifierChange | undefined;
    if (identifier === "" || /^[0-9]/.test(identifier)) {
      identifier = `${fallbackPrefix}${identifier}`;
      change = "the name does not start with a letter";
    } else if (unusableIdentifiers.has(identifier)) {
      identifier = `${identifier}${fallbackPrefix.charAt(0).toUpperCase()}${fallbackPrefix.slice(1)}`;
      change = "the name is a reserved word";
    }
    if (this.taken.has(identifier)) {
      let suffix = 2;
      while (this.taken.has(`${identifier}${suffix}`)) suffix++;
      identifier = `${identifier}${suffix}`;
      change = "another name has the same camel-case form";
    }
    this.taken.add(identifier);
    return change ? { identifier, change } : { identifier };
  }
}

/** Why a code file is not named exactly after its policy. */
export type FileNameChange =
  | "another file name differs only in letter case"
  | "the name is a reserved device name on Windows"
  | "a .rego file ending in _test is an OPA test, which a folder does not load as a policy";

export interface AllocatedFileName {
  fileName: string;
  change?: FileNameChange;
}

// `con.sentinel` cannot be created on Windows, whatever the extension.
const windowsDeviceName = /^(con|prn|aux|nul|com[0-9]|lpt[0-9])$/i;

/**
 * Hands out file names that stay distinct on case-insensitive file systems (macOS, Windows): `Require-Tags` and
 * `require-tags` are two policies but would be one file there.
 */
export class FileNameAllocator {
  private readonly taken = new Set<string>();

  allocate(baseName: string, extension: string): AllocatedFileName {
    let base = baseName;
    let change: FileNameChange | undefined;
    if (windowsDeviceName.test(base)) {
      base = `${base}-policy`;
      change = "the name is a reserved device name on Windows";
    } else if (extension === "rego" && base.endsWith("_test")) {
      base = `${base}-policy`;
      change = "a .rego file ending in _test is an OPA test, which a folder does not load as a policy";
    }
    let fileName = `${base}.${extension}`;
    for (let suffix = 2; this.taken.has(fileName.toLowerCase()); suffix++) {
      fileName = `${base}-${suffix}.${extension}`;
      change = "another file name differs only in letter case";
    }
    this.taken.add(fileName.toLowerCase());
    return change ? { fileName, change } : { fileName };
  }
}

/**
 * A policy set's name as a folder name on every file system: letters, digits, `.`, `-` and `_`, and no leading dot.
 * A set named `..` would otherwise put its files at the project's root (and upload the whole project), `.git` would
 * be left out of every upload (go-slug skips it), and `.terraform` too.
 */
export function folderNameOf(name: string): string {
  return name.replace(/[^A-Za-z0-9_.-]/g, "-").replace(/^\./, "-");
}

/**
 * Hands out names distinct on case-insensitive file systems and config stores: the first of a base as it is, the next
 * `<base>-2`, `<base>-3`...
 */
export class DistinctNames {
  private readonly taken = new Set<string>();

  take(base: string): string {
    let name = base;
    for (let suffix = 2; this.taken.has(name.toLowerCase()); suffix++) name = `${base}-${suffix}`;
    this.taken.add(name.toLowerCase());
    return name;
  }
}
