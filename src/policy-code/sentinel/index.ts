import { execFile } from "node:child_process";
import { parseSentinel, SentinelSyntaxError } from "./parser";
import { standardSentinelImports } from "./standard-imports";

/**
 * What can be checked of Sentinel code without the (proprietary) Sentinel CLI: text checks (a file that is not
 * UTF-8, one with no `main` rule, imports of modules the policies API cannot deliver), a parse with the parser of
 * this folder (syntax errors with their line and column), and, where a `sentinel` binary is on PATH, what its
 * formatter says.
 */

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** The code as text, or undefined when it is not valid UTF-8 (the service reads policies as UTF-8). */
export function decodeUtf8(bytes: Uint8Array): string | undefined {
  try {
    return utf8.decode(bytes);
  } catch {
    return undefined;
  }
}

/** The code with comments and string contents blanked, keeping line breaks so that line numbers still hold. */
function withoutCommentsAndStrings(code: string): string {
  return code.replace(/\/\*[\s\S]*?\*\/|(?:#|\/\/)[^\n]*|"(?:[^"\\\n]|\\.)*"|`[^`]*`/g, (match) =>
    match.startsWith('"') || match.startsWith("`")
      ? `"${match.slice(1, -1).replace(/[^\n]/g, " ")}"`
      : match.replace(/[^\n]/g, " "),
  );
}

/** Whether the policy assigns `main` at the start of a line, as every Sentinel policy must. */
export function definesMain(code: string): boolean {
  return /^[ \t]*main[ \t]*=/m.test(withoutCommentsAndStrings(code));
}

/**
 * What the service would refuse or never evaluate in a Sentinel policy's code, whichever resource carries it (a
 * `Policy`, a `PolicyFolder`'s file, a `PolicySet`'s folder): code that is not UTF-8 (`undefined` here), or no `main`
 * rule. Each names `shown`, the file as the user wrote it.
 */
export function sentinelPolicyProblems(code: string | undefined, shown: string): string[] {
  if (code === undefined) return [`${shown} is not valid UTF-8: save it as UTF-8`];
  if (!definesMain(code)) return [`${shown} defines no main rule: every Sentinel policy needs main = rule { ... }`];
  return [];
}

/** The names the policy imports (`import "tfplan/v2" as tfplan` gives `tfplan/v2`), each with its line. */
export function importsOf(code: string): { name: string; line: number }[] {
  const imports: { name: string; line: number }[] = [];
  const lines = code.split("\n");
  const blanked = withoutCommentsAndStrings(code).split("\n");
  for (const [index, line] of blanked.entries()) {
    if (!/^[ \t]*import[ \t]+"/.test(line)) continue;
    const name = /^[ \t]*import[ \t]+"((?:[^"\\]|\\.)*)"/.exec(lines[index] as string)?.[1];
    if (name !== undefined) imports.push({ name, line: index + 1 });
  }
  return imports;
}

/**
 * `sentinel fmt -check=true` on the file, when a `sentinel` binary is on PATH. It prints the files that need
 * formatting and exits non-zero; a file it cannot parse gets its parse error instead. `undefined`: no binary, or
 * the file is as the formatter would write it.
 */
export function sentinelFmtCheck(
  file: string,
  binary = "sentinel",
): Promise<{ unformatted: true } | { error: string } | undefined> {
  return new Promise((resolve) => {
    execFile(binary, ["fmt", "-check=true", file], (error, stdout, stderr) => {
      if (!error || (error as NodeJS.ErrnoException).code === "ENOENT") return resolve(undefined);
      const output = `${stdout}\n${stderr}`.trim();
      resolve(output === "" || output === file ? { unformatted: true } : { error: output });
    });
  });
}

/**
 * A Sentinel file's syntax errors, each as `shown:line:column: syntax error: expected ..., found ...` (none: it
 * parses). The parser is written from the language specification; see ./parser.ts.
 */
export function sentinelSyntaxProblems(code: string, shown: string): string[] {
  try {
    parseSentinel(code);
    return [];
  } catch (error) {
    if (!(error instanceof SentinelSyntaxError)) throw error;
    const place =
      shown === ""
        ? `line ${error.at.line}, column ${error.at.column}`
        : `${shown}:${error.at.line}:${error.at.column}`;
    return [`${place}: syntax error: ${error.detail}`];
  }
}

/**
 * What preview refuses in a Sentinel policy's code, whichever resource carries it: what the service would refuse or
 * never evaluate ({@link sentinelPolicyProblems}), its syntax errors, and its imports that are neither the runtime's
 * nor declared ({@link unknownImportProblems}). `shown` "" names places by line and column only (code given inline).
 */
export function sentinelCodeProblems(code: string | undefined, shown: string, declared?: DeclaredImports): string[] {
  const problems = sentinelPolicyProblems(code, shown || "the code");
  if (code === undefined) return problems;
  return [...problems, ...sentinelSyntaxProblems(code, shown), ...unknownImportProblems(code, shown, declared)];
}

/** The imports a folder's configuration file declares (module, import blocks): its name and theirs. */
export interface DeclaredImports {
  configName: string;
  names: { has(name: string): boolean };
}

/**
 * Each import of the code that is no Sentinel import ({@link standardSentinelImports}) and that `declared` does not
 * hold: the runtime fails such a policy ("import not found") at every run it guards. Without `declared` the code is a
 * Policy of its own, which has no sentinel.hcl to declare one. `imports` default: read from the parse where the code
 * parses, else from its text.
 */
export function unknownImportProblems(
  code: string,
  shown: string,
  declared?: DeclaredImports,
  imports = parsedImportsOf(code) ?? importsOf(code),
): string[] {
  return imports
    .filter(({ name }) => !standardSentinelImports.has(name) && !declared?.names.has(name))
    .map(({ name, line }) => {
      const imported = `${shown === "" ? `line ${line}` : `${shown}:${line}`} imports "${name}", which is no Sentinel import`;
      return declared
        ? `${imported} and which ${declared.configName} does not declare: add a module or import block for it, or fix the name`
        : `${imported}, and a policy of its own has no sentinel.hcl to declare it: fix the name, or keep the policy ` +
            "in a PolicyFolder or PolicySet whose sentinel.hcl declares the import";
    });
}

/** The imports a file that parses declares, each with its line; undefined where it does not parse. */
export function parsedImportsOf(code: string): { name: string; line: number }[] | undefined {
  try {
    return parseSentinel(code).imports.map((entry) => ({ name: entry.name, line: entry.at.line }));
  } catch (error) {
    if (error instanceof SentinelSyntaxError) return undefined;
    throw error;
  }
}
