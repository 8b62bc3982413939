import { closestName } from "../contract/names";
import { Opa, OpaError, type OpaProblem, type RegoModule, type RegoVersion } from "./opa";

/**
 * Rego as the service's OPA runtime reads it. HCP Terraform runs an OPA policy set on the runtime its
 * `policy-tool-version` names; since October 2025 its documentation says `latest` for OPA is pinned to the 0.61.x
 * runtime (and recommends pinning a version), so `latest` and every `0.x` read Rego v0 (where `import rego.v1` or
 * `future.keywords` allow the newer keywords), and a pinned `1.x` reads Rego v1.
 */
export function regoVersionOfRuntime(policyToolVersion: string | undefined): RegoVersion {
  return /^v?([1-9]\d*)\./.test(policyToolVersion ?? "latest") ? "v1" : "v0";
}

/** What the runtime is called in messages: `latest (OPA 0.61.x)`, `1.2.0`. */
export function runtimeLabel(policyToolVersion: string | undefined): string {
  const version = policyToolVersion ?? "latest";
  return version === "latest" ? "latest (the service runs OPA 0.61.x for it)" : version;
}

/**
 * For files that failed to parse in `dialect`: the ones the other dialect reads, each with the file, the line and
 * both fixes (pin another runtime, or change the syntax). A file that neither reads gets nothing here: OPA's own
 * errors say what is wrong with it.
 */
export async function dialectAdvice(
  opa: Opa,
  files: readonly string[],
  problems: readonly OpaProblem[],
  dialect: RegoVersion,
  cwd: string,
  runtime: RuntimeWords,
): Promise<string[]> {
  const unparsed = (found: readonly OpaProblem[]) =>
    new Set(found.filter((problem) => problem.code === "rego_parse_error").map((problem) => problem.location?.file));
  const failed = unparsed(problems);
  if (failed.size === 0) return [];
  // All files together, as the set reads them: a file may use another's package.
  const other: RegoVersion = dialect === "v0" ? "v1" : "v0";
  const failedThere = unparsed(await opa.check([...files], other, cwd));
  const advice: string[] = [];
  for (const file of [...failed].sort()) {
    if (file === undefined || failedThere.has(file)) continue;
    const line = problems.find((problem) => problem.location?.file === file)?.location?.row;
    const where = `${file}${line ? `:${line}` : ""}`;
    advice.push(
      dialect === "v0"
        ? `${where}: written as Rego v1 (if, contains), which ${runtime.reads} does not read: add ` +
            `"import rego.v1" to the file (the 0.x runtime then reads it), or ${runtime.otherFix}`
        : `${where}: written as Rego v0, which ${runtime.reads} does not read: write it as Rego v1 (if before ` +
            `rule bodies, contains for partial sets; opa fmt --v0-v1 rewrites it), or ${runtime.otherFix}`,
    );
  }
  return advice;
}

/** How messages name the runtime a file was read for, and how to choose the other one. */
export interface RuntimeWords {
  /** `policyToolVersion latest (the service runs OPA 0.61.x for it)`. */
  reads: string;
  /** `pin policyToolVersion to a 1.x runtime`. */
  otherFix: string;
}

/** The words for a set's `policyToolVersion`. */
export function policyToolVersionWords(policyToolVersion: string | undefined): RuntimeWords {
  const dialect = regoVersionOfRuntime(policyToolVersion);
  return {
    reads: `policyToolVersion ${runtimeLabel(policyToolVersion)}${dialect === "v1" ? " (an OPA 1.x runtime)" : ""}`,
    otherFix: `pin policyToolVersion to a ${dialect === "v0" ? "1.x" : "0.x"} runtime`,
  };
}

/** The words for a `regoVersion` argument (PolicyFolder, Policy): the dialect of the sets the policies join. */
export function regoVersionWords(regoVersion: RegoVersion): RuntimeWords {
  return regoVersion === "v0"
    ? {
        reads: 'regoVersion "v0" (sets on OPA latest, which the service runs as 0.61.x, or on any 0.x)',
        otherFix: 'set regoVersion: "v1" for sets pinned to an OPA 1.x runtime',
      }
    : {
        reads: 'regoVersion "v1" (sets pinned to an OPA 1.x runtime)',
        otherFix: 'set regoVersion: "v0" for sets on latest or 0.x',
      };
}

/** A policy block's query, with where it is written for messages (`policies.hcl:3: policy "deny-public"`). */
export interface RegoQuery {
  at: string;
  query: string;
}

/**
 * Each query names a rule that the Rego defines (all files together, as a set evaluates them): a typo is reported
 * with the closest rule there is. Files that do not parse are left to `opa check`.
 */
export async function queryProblems(
  opa: Opa,
  files: readonly string[],
  dialect: RegoVersion,
  cwd: string,
  queries: readonly RegoQuery[],
  whose = "the set's Rego",
): Promise<string[]> {
  const modules: RegoModule[] = [];
  for (const file of files) {
    try {
      modules.push(await opa.parse(file, dialect, cwd));
    } catch (error) {
      if (!(error instanceof OpaError)) throw error;
    }
  }
  const rules = [
    ...new Set(modules.flatMap((module) => module.rules.map((rule) => [...module.packagePath, ...rule].join(".")))),
  ];
  const packages = new Set(modules.map((module) => module.packagePath.join(".")));
  const problems: string[] = [];
  for (const { at, query } of queries) {
    const path = queryPath(query);
    if (!path) {
      const hint = query.startsWith("data.") ? "" : `; did you mean data.${query}?`;
      problems.push(`${at}: query "${query}" is not a reference into data like data.<package>.<rule>${hint}`);
      continue;
    }
    const named = path.join(".");
    // A query may name a rule, a part of one (data.p.deny[x] style heads), or a package's whole document.
    const found =
      packages.has(named) ||
      rules.some((rule) => named === rule || named.startsWith(`${rule}.`) || rule.startsWith(`${named}.`));
    if (found) continue;
    const closest = closestRule(named, rules);
    problems.push(
      `${at}: query ${query} names no rule of ${whose}` +
        (closest
          ? `: did you mean data.${closest}?`
          : rules.length
            ? `; its rules: ${rules
                .slice(0, 10)
                .map((rule) => `data.${rule}`)
                .join(", ")}`
            : " (it defines none)"),
    );
  }
  return problems;
}

/** The rule a typo most likely meant: the fewest edits, at most a quarter of the name (and at least 2). */
function closestRule(name: string, rules: readonly string[]): string | undefined {
  return closestName(name, rules, Math.max(2, Math.floor(name.length / 4)));
}

/** A query's path: `data.a.b` as `["a", "b"]`; undefined for anything but a plain reference into data. */
export function queryPath(query: string): string[] | undefined {
  return query.startsWith("data.") ? referencePath(query) : undefined;
}

/** `data.a.b["c-d"]` as `["a", "b", "c-d"]`; undefined for anything but such a plain reference. */
export function referencePath(reference: string): string[] | undefined {
  if (!reference.startsWith("data")) return undefined;
  const parts: string[] = [];
  const pattern = /\.([A-Za-z_][A-Za-z0-9_]*)|\["((?:[^"\\]|\\.)*)"\]/y;
  pattern.lastIndex = "data".length;
  while (pattern.lastIndex < reference.length) {
    const match = pattern.exec(reference);
    if (!match) return undefined;
    parts.push((match[1] ?? match[2]) as string);
  }
  return parts.length > 0 ? parts : undefined;
}

export { Opa };
