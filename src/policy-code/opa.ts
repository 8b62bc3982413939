import { execFile } from "node:child_process";
import { resolve } from "node:path";

/**
 * The Rego dialect a policy set evaluates. HCP Terraform runs each OPA policy set on the OPA runtime version chosen
 * in its settings: OPA 1.x parses Rego v1 (`if` before rule bodies, `contains` for partial sets), OPA 0.x parses v0.
 */
export type RegoVersion = "v0" | "v1";

export interface OpaLocation {
  file: string;
  row: number;
}

export interface OpaProblem {
  message: string;
  code: string;
  location?: OpaLocation;
}

/** What `opa parse` tells of one file: its package, the rules it defines, and the `data` paths it refers to. */
export interface RegoModule {
  /** Package path without the leading `data`, e.g. `["terraform", "policies", "deny_public"]`. */
  packagePath: string[];
  /** Each rule's head as a path (`deny`, `x.y.z`); functions left out, since a query cannot name them. */
  rules: string[][];
  /** The static start of every `data...` reference in imports and rule bodies. */
  dataReferences: string[][];
}

/** Runs a real `opa` binary: the one given, else the one on PATH. */
export class Opa {
  private constructor(
    readonly path: string,
    readonly version: string,
  ) {}

  /** The binary, or undefined when there is none to run. */
  static async find(given = "opa"): Promise<Opa | undefined> {
    // A path with a directory is the program's; OPA later runs inside the policy folder.
    const path = /[\\/]/.test(given) ? resolve(given) : given;
    try {
      const { stdout } = await run(path, ["version"]);
      const version = /^Version:\s*(\S+)/m.exec(stdout)?.[1];
      return version ? new Opa(path, version) : undefined;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw new Error(`running ${path} version failed: ${(error as Error).message}`);
    }
  }

  /** The flags that make this binary read the given dialect: OPA 1.x reads v1 by default, OPA 0.x reads v0. */
  private dialectFlags(rego: RegoVersion): string[] {
    const major = Number(this.version.split(".")[0]);
    if (major >= 1) return rego === "v0" ? ["--v0-compatible"] : [];
    return rego === "v1" ? ["--v1-compatible"] : [];
  }

  /** `opa check` of the files together: syntax, and what the compiler finds (unsafe variables, type errors). */
  async check(files: string[], rego: RegoVersion, cwd: string): Promise<OpaProblem[]> {
    if (files.length === 0) return [];
    try {
      await run(this.path, ["check", "--format", "json", ...this.dialectFlags(rego), ...files], cwd);
      return [];
    } catch (error) {
      return problemsOf(error);
    }
  }

  /**
   * `opa test` of a folder (every .rego and data file under it): each test's result. Throws OpaError where OPA
   * cannot load the folder (a syntax error in a test file).
   */
  async test(rego: RegoVersion, cwd: string): Promise<OpaTestResult[]> {
    let stdout: string;
    try {
      ({ stdout } = await run(this.path, ["test", "--format", "json", ...this.dialectFlags(rego), "."], cwd));
    } catch (error) {
      // Exit status 2: some test failed, and the results are on stdout all the same.
      const output = (error as { stdout?: string }).stdout ?? "";
      if ((error as { code?: number }).code !== 2 || !output.trim().startsWith("["))
        throw new OpaError(problemsOf(error));
      stdout = output;
    }
    return JSON.parse(stdout.trim() || "[]") as OpaTestResult[];
  }

  /** `file` relative to `cwd`, as OPA then names it in its messages. */
  async parse(file: string, rego: RegoVersion, cwd: string): Promise<RegoModule> {
    let stdout: string;
    try {
      ({ stdout } = await run(this.path, ["parse", "--format", "json", ...this.dialectFlags(rego), file], cwd));
    } catch (error) {
      throw new OpaError(problemsOf(error));
    }
    return moduleOf(JSON.parse(stdout));
  }
}

/** One test's result from `opa test --format json`. */
export interface OpaTestResult {
  location?: OpaLocation & { col?: number };
  /** `data.terraform.deny` */
  package: string;
  name: string;
  fail?: boolean;
  skip?: boolean;
  error?: { message?: string; code?: string } | string;
  /** What the test printed, base64 (Go's []byte in JSON). */
  output?: string;
}

export class OpaError extends Error {
  constructor(readonly problems: OpaProblem[]) {
    super(problems.map((problem) => problem.message).join("; "));
  }
}

function run(path: string, args: string[], cwd?: string): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(path, args, { cwd, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) reject(Object.assign(error, { stdout, stderr }));
      else resolve({ stdout, stderr });
    });
  });
}

/** OPA's `--format json` errors (`{ errors: [{ message, code, location }] }`), or its plain output otherwise. */
function problemsOf(error: unknown): OpaProblem[] {
  const { stdout = "", stderr = "", message } = error as { stdout?: string; stderr?: string; message: string };
  for (const output of [stderr, stdout]) {
    try {
      const document = JSON.parse(output) as { errors?: OpaProblem[] };
      if (Array.isArray(document.errors) && document.errors.length > 0) return document.errors;
    } catch {
      // Not JSON: OPA failed before it could format its answer.
    }
  }
  return [{ message: (stderr || stdout || message).trim(), code: "opa_error" }];
}

interface Term {
  type: string;
  value: unknown;
}

function moduleOf(ast: {
  package: { path: Term[] };
  rules?: { head: { ref?: Term[]; name?: string; args?: unknown } }[];
}) {
  const rules = (ast.rules ?? [])
    .filter((rule) => rule.head.args === undefined)
    .map((rule) => staticPath(rule.head.ref ?? [{ type: "var", value: rule.head.name }]));
  const dataReferences: string[][] = [];
  const { package: _package, ...rest } = ast as Record<string, unknown>;
  walk(rest, (term) => {
    const terms = term.value as Term[];
    if (terms[0]?.type === "var" && terms[0].value === "data") dataReferences.push(staticPath(terms.slice(1)));
  });
  return { packagePath: staticPath(ast.package.path.slice(1)), rules: uniquePaths(rules), dataReferences };
}

/** The leading names of a reference, up to its first computed part (`data.x[i]` gives `x`). */
function staticPath(terms: Term[]): string[] {
  const path: string[] = [];
  for (const [index, term] of terms.entries()) {
    if (term.type === "string" || (index === 0 && term.type === "var")) path.push(String(term.value));
    else break;
  }
  return path;
}

function walk(node: unknown, onRef: (term: Term) => void): void {
  if (Array.isArray(node)) {
    for (const item of node) walk(item, onRef);
    return;
  }
  if (typeof node !== "object" || node === null) return;
  const term = node as Term;
  if (term.type === "ref" && Array.isArray(term.value)) onRef(term);
  for (const value of Object.values(node)) walk(value, onRef);
}

function uniquePaths(paths: string[][]): string[][] {
  return [...new Map(paths.map((path) => [path.join("."), path])).values()];
}
