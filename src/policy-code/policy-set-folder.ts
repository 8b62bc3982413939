import { posix } from "node:path";
import {
  enforcementLevelsByKind,
  kindPhrase,
  type PolicyKind,
  type PolicySetKind,
  policyKinds,
} from "../contract/policies";
import { type FolderFiles, normalizedPoliciesPath } from "./folder-files";
import { blockAddress, type HclBlock, lineOf, literalString, parseBlocks } from "./hcl";
import {
  decodeUtf8,
  importsOf,
  parsedImportsOf,
  sentinelPolicyProblems,
  sentinelSyntaxProblems,
  unknownImportProblems,
} from "./sentinel";
import { policyFileSuffix, readTfPolicyFolder } from "./tfpolicy";

/**
 * A policy-set folder as a versioned policy set holds it: read the way the service reads an uploaded version (or a
 * version-control checkout), not the way the policies API would. Modules, static imports, parameters, Rego shared
 * across files and remote sources are all fine here; what fails is what would make the service's version
 * `errored`. One reading for both sides: the local server ingests uploads with it, and `PolicySet` checks its folder
 * with it at preview, so the two cannot disagree.
 */

export type { FolderFiles } from "./folder-files";

export const configFileOfKind: Record<PolicyKind, string> = { sentinel: "sentinel.hcl", opa: "policies.hcl" };

/**
 * The kind a folder's files say: its configuration file (`sentinel.hcl`, `policies.hcl`), or Terraform policy files
 * (`*.policy.hcl`) at its root with neither. Undefined where they say nothing, or both configuration files.
 */
export function kindOfFolder(files: FolderFiles, policiesPath = ""): PolicySetKind | undefined {
  const base = normalizedPoliciesPath(policiesPath);
  const prefix = base ? `${base}/` : "";
  const found = policyKinds.filter((kind) => files.has(`${prefix}${configFileOfKind[kind]}`));
  if (found.length === 1) return found[0];
  const atRoot = (path: string) => path.startsWith(prefix) && !path.slice(prefix.length).includes("/");
  if (found.length === 0 && [...files.keys()].some((path) => atRoot(path) && path.endsWith(policyFileSuffix))) {
    return "tfpolicy";
  }
  return undefined;
}

export interface PolicySetFolderSummary {
  /** Each policy block's label and level: what a later change is compared with to see a weakening. */
  policies: Record<string, string>;
  /** The names of the `param` blocks: the parameters the folder's configuration knows. */
  params: string[];
  /** OPA: each policy block's query, with where it is written (`policies.hcl:3: policy "deny"`). */
  queries: { at: string; query: string }[];
}

export class PolicySetFolderError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join("\n"));
    this.name = "PolicySetFolderError";
  }
}

export interface ReadPolicySetFolderOptions {
  /**
   * Sentinel: parse every policy and module the configuration names, and check each one's imports (a preview's
   * check; the service itself finds a syntax error only when a run evaluates the policy, so its ingress does not).
   */
  parseSentinel?: boolean;
}

/** A `source` that the service fetches itself (a URL, a go-getter address), rather than a file of the folder. */
export function isRemoteSource(source: string): boolean {
  return /^[A-Za-z][A-Za-z0-9+.-]*::|^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(source);
}

/**
 * Reads the folder as a set of `kind` would: the configuration file, each local file it names, each policy's
 * imports. Throws {@link PolicySetFolderError} with every problem, each naming the file, line and block.
 *
 * `policiesPath` is where the set's folder is within `files`: "" for an uploaded version (the archive is the
 * folder), a repository's policies path for a set read from version control, whose `../` sources reach the rest of
 * the repository (the service ingests it whole) but never above it.
 */
export async function readPolicySetFolder(
  files: FolderFiles,
  kind: PolicySetKind,
  policiesPath = "",
  options: ReadPolicySetFolderOptions = {},
): Promise<PolicySetFolderSummary> {
  if (kind === "tfpolicy") {
    // What the service refuses at ingress; PolicySet checks the rest of the schema at preview.
    const folder = await readTfPolicyFolder(files, { policiesPath });
    if (folder.unreadable.length > 0) throw new PolicySetFolderError(folder.unreadable);
    return {
      policies: Object.fromEntries(folder.blocks.map((block) => [block.address, block.level])),
      params: [...folder.inputs.keys()],
      queries: [],
    };
  }
  const base = normalizedPoliciesPath(policiesPath);
  const configName = base ? `${base}/${configFileOfKind[kind]}` : configFileOfKind[kind];
  const otherKind: PolicyKind = kind === "sentinel" ? "opa" : "sentinel";
  const configBytes = files.get(configName);
  if (!configBytes) {
    const other = files.has(base ? `${base}/${configFileOfKind[otherKind]}` : configFileOfKind[otherKind])
      ? `; it has ${configFileOfKind[otherKind]}, the file of ${kindPhrase(otherKind)} set: set kind to "${otherKind}"`
      : "";
    throw new PolicySetFolderError([
      base
        ? `no ${configName} in the repository (policies path ${base}), which ${kindPhrase(kind)} set reads${other}`
        : `no ${configName} at the root of the folder, which ${kindPhrase(kind)} set reads${other}`,
    ]);
  }
  const text = decodeUtf8(configBytes);
  if (text === undefined) throw new PolicySetFolderError([`${configName} is not valid UTF-8: save it as UTF-8`]);
  let blocks: HclBlock[];
  try {
    blocks = await parseBlocks(configName, text);
  } catch (error) {
    throw new PolicySetFolderError([(error as Error).message]);
  }
  const reader = new ConfigReader(files, kind, configName, text, base, options.parseSentinel === true);
  const summary = reader.read(blocks);
  if (reader.problems.length > 0) throw new PolicySetFolderError(reader.problems);
  return summary;
}

class ConfigReader {
  readonly problems: string[] = [];

  constructor(
    private readonly files: FolderFiles,
    private readonly kind: PolicyKind,
    private readonly configName: string,
    private readonly text: string,
    /** The set's folder within `files` ("" for the root). */
    private readonly base: string,
    private readonly parse: boolean,
  ) {}

  private at(block: HclBlock, attribute?: string): string {
    const line = lineOf(this.text, block, attribute);
    return `${this.configName}${line ? `:${line}` : ""}: ${blockAddress(block)}`;
  }

  read(blocks: HclBlock[]): PolicySetFolderSummary {
    // By label in a Map: a label is any text (`constructor`, `__proto__`), never a member of an object's prototype.
    const policies = new Map<string, string>();
    const queries: { at: string; query: string }[] = [];
    const params: string[] = [];
    const declaredImports = new Set<string>();
    const sentinelPolicies: { block: HclBlock; file: string }[] = [];
    const modules: { block: HclBlock; file: string }[] = [];
    for (const block of blocks) {
      const label = block.labels[0];
      if (block.type === "policy" && label !== undefined) {
        if (policies.has(label)) {
          this.problems.push(`${this.at(block)}: declared twice: each policy label may appear once`);
          continue;
        }
        policies.set(label, this.level(block));
        if (this.kind === "opa") {
          const query = this.requireString(block, "query", "name the rule to evaluate, e.g. data.terraform.deny");
          if (query !== undefined) queries.push({ at: this.at(block, "query"), query });
        } else {
          const file = this.localFile(block, this.optionalString(block, "source") ?? `./${label}.sentinel`);
          if (file) sentinelPolicies.push({ block, file });
        }
      } else if (this.kind === "sentinel" && block.type === "module" && label !== undefined) {
        declaredImports.add(label);
        const file = this.localFile(block, this.requireString(block, "source", "give the module's file"));
        if (file) modules.push({ block, file });
      } else if (this.kind === "sentinel" && block.type === "import" && block.labels[1] !== undefined) {
        declaredImports.add(block.labels[1]);
        const source = this.optionalString(block, "source");
        // A plugin may name a binary the service provides; a static import always names data of the folder.
        if (source !== undefined || label === "static") {
          this.localFile(block, source ?? this.requireString(block, "source", "give the data file"));
        }
      } else if (this.kind === "sentinel" && block.type === "param" && label !== undefined) {
        params.push(label);
      }
    }
    for (const { block, file } of sentinelPolicies) this.checkImports(block, file, declaredImports);
    if (this.parse) for (const { block, file } of modules) this.checkImports(block, file, declaredImports, false);
    return { policies: Object.fromEntries(policies), params, queries };
  }

  private level(block: HclBlock): string {
    const level = this.optionalString(block, "enforcement_level") ?? "advisory";
    const levels: readonly string[] = enforcementLevelsByKind[this.kind];
    if (!levels.includes(level)) {
      this.problems.push(
        `${this.at(block, "enforcement_level")}: enforcement level "${level}" is not one of ${this.kind}'s: ${levels.join(", ")}`,
      );
    }
    return level;
  }

  private optionalString(block: HclBlock, attribute: string): string | undefined {
    const value = literalString(block, attribute);
    if (typeof value !== "object") return value;
    this.problems.push(`${this.at(block, attribute)}: ${value.problem}`);
    return undefined;
  }

  private requireString(block: HclBlock, attribute: string, fix: string): string | undefined {
    const value = this.optionalString(block, attribute);
    if (value === undefined && !(attribute in block.body)) {
      this.problems.push(`${this.at(block)}: ${attribute} is missing: ${fix}`);
    }
    return value;
  }

  /** The folder's file a local `source` names; remote sources are the service's to fetch and pass unread. */
  private localFile(block: HclBlock, source: string | undefined): string | undefined {
    if (source === undefined || isRemoteSource(source)) return undefined;
    const path = posix.normalize(posix.join(this.base, source.replace(/\\/g, "/")));
    if (posix.isAbsolute(source) || path === ".." || path.startsWith("../")) {
      this.problems.push(
        this.base
          ? `${this.at(block, "source")}: ${source} leaves the repository`
          : `${this.at(block, "source")}: ${source} leaves the folder, and a version holds only the folder: copy the ` +
              "file in, or link it from inside the folder (links are followed when the folder is packed); " +
              "PolicySet brings such files in itself",
      );
      return undefined;
    }
    if (!this.files.has(path)) {
      this.problems.push(`${this.at(block, "source")}: ${source} is not in the folder: fix the path, or add the file`);
      return undefined;
    }
    return path;
  }

  /**
   * Every import of the policy (or module) is the runtime's own or one the configuration declares; with `parse`, the
   * file parses, and its imports are read from the parse.
   */
  private checkImports(block: HclBlock, file: string, declared: Set<string>, isPolicy = true): void {
    const code = decodeUtf8(this.files.get(file) as Uint8Array);
    if (isPolicy)
      for (const problem of sentinelPolicyProblems(code, file)) this.problems.push(`${this.at(block)}: ${problem}`);
    if (code === undefined) return;
    let imports = importsOf(code);
    if (this.parse) {
      const syntax = sentinelSyntaxProblems(code, file);
      for (const problem of syntax) this.problems.push(`${this.at(block)}: ${problem}`);
      imports = parsedImportsOf(code) ?? imports;
    }
    for (const problem of unknownImportProblems(code, file, { configName: this.configName, names: declared }, imports))
      this.problems.push(`${this.at(block)}: ${problem}`);
  }
}
