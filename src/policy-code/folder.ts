import { readdirSync, statSync } from "node:fs";
import { basename, join, relative, resolve } from "node:path";
import { enforcementLevelsByKind, maxPolicyCodeBytes, type PolicyKind, policyNamePattern } from "../contract/policies";
import { packageDoc } from "../process/package-version";
import { FileAccess } from "./file-access";
import { blockAddress, type HclBlock, lineOf, literalString, parseBlocks } from "./hcl";
import { Opa, OpaError, type OpaProblem, type RegoModule, type RegoVersion } from "./opa";
import { isRemoteSource } from "./policy-set-folder";
import { dialectAdvice, queryPath, referencePath, regoVersionWords } from "./rego";
import { decodeUtf8, importsOf, sentinelCodeProblems, sentinelFmtCheck } from "./sentinel";

/**
 * A policy-set folder as the service reads it from version control (`sentinel.hcl` or `policies.hcl` beside the
 * code), turned into the policies the policies API can hold: one file of code each, a level, a query for OPA.
 * Everything the API cannot express fails here, before any request, with the block and the fix.
 */

/** Per-block settings that win over the folder's (keyed by the block's label). */
export interface PolicyOverride {
  /** The policy's name on the service; needed where a label holds characters a name may not (`.`, `/`). */
  name?: string;
  description?: string;
  enforcementLevel?: string;
}

export interface ReadPolicyFolderOptions {
  /**
   * The Rego the policy sets' OPA runtime evaluates: `v0` (default) for sets on `latest` (the service runs OPA 0.61.x
   * for it) or a 0.x runtime, `v1` for sets pinned to OPA 1.x.
   */
  regoVersion?: RegoVersion;
  /** The `opa` binary to check Rego with; default: `opa` on PATH. */
  opaPath?: string;
  overrides?: Record<string, PolicyOverride>;
  /** Blocks to leave out knowingly, as written in the file: `module "report"`, `param "limit"`, `sentinel`. */
  skipBlocks?: string[];
}

export interface FolderPolicy {
  /** The block's label in the configuration file. */
  block: string;
  name: string;
  kind: PolicyKind;
  /** Absolute path of the policy's code. */
  codeFile: string;
  enforcementLevel: string;
  query?: string;
  description?: string;
}

export interface PolicyFolderContents {
  kind: PolicyKind;
  configFile: string;
  policies: FolderPolicy[];
  /** Blocks that are not sent and why: CLI-only blocks, `skipBlocks`, files the service does not read. */
  notes: string[];
  /** Things worth fixing that do not stop the folder (code `sentinel fmt` would reformat). */
  warnings: string[];
  /** Whether Rego was checked with a real `opa` (false: there was none to run). */
  regoChecked: boolean;
}

export class PolicyFolderError extends Error {
  constructor(
    readonly configFile: string,
    readonly problems: string[],
  ) {
    super(`${configFile} cannot be declared as policies:\n${problems.map((problem) => `  - ${problem}`).join("\n")}`);
    this.name = "PolicyFolderError";
  }
}

const configFiles: Record<PolicyKind, string> = { sentinel: "sentinel.hcl", opa: "policies.hcl" };
/** Sentinel's `sentinel.hcl` leaves a policy without `enforcement_level` advisory; so does OPA's `policies.hcl`. */
const defaultLevel = "advisory";
const policyAttributes: Record<PolicyKind, string[]> = {
  sentinel: ["source", "enforcement_level"],
  opa: ["query", "enforcement_level", "description"],
};
const cliOnlyBlocks = ["mock", "test"];
const moduleFix =
  "the policies API holds one file per policy and no modules: copy the functions the policies use into them, " +
  "or list the block in skipBlocks when no policy imports it";
const unsupportedBlockFixes: Record<string, string> = {
  module: moduleFix,
  "import module": moduleFix,
  "import static":
    "the policies API takes no data files: put the data in the policies that import it, or list the block in " +
    "skipBlocks when no policy imports it",
  "import plugin": "the policies API cannot deliver plugins: list the block in skipBlocks when no policy imports it",
  param:
    "the policies API takes no parameter values: give the parameter a default in the policy (param x default ...), " +
    "or set it as a parameter of the policy set, then list the block in skipBlocks",
  sentinel: "the policies API takes no runtime settings: list the block in skipBlocks to leave it out knowingly",
};

export async function readPolicyFolder(
  directory: string,
  options: ReadPolicyFolderOptions = {},
): Promise<PolicyFolderContents> {
  const folder = resolve(directory);
  const { kind, configFile } = findConfigFile(folder, directory);
  const shownConfig = join(directory, configFiles[kind]);
  const access = FileAccess.forFolder(folder);
  const config = access.check(configFile, shownConfig);
  if ("problem" in config) throw new PolicyFolderError(shownConfig, [config.problem]);
  const text = access.read(configFile, shownConfig).toString("utf8");
  let blocks: HclBlock[];
  try {
    blocks = await parseBlocks(configFiles[kind], text);
  } catch (error) {
    throw new PolicyFolderError(shownConfig, [(error as Error).message]);
  }
  const reader = new FolderReader(folder, kind, text, options, access);
  const policies = await reader.read(blocks);
  for (const file of readdirSync(folder)) {
    if (file.endsWith(".hcl") && file !== configFiles[kind]) {
      reader.notes.push(`${file} is not read: the service reads only ${configFiles[kind]} of a policy set`);
    }
  }
  if (reader.needsVersionedSet) {
    reader.problems.push(
      `or declare the folder as a PolicySet ({ directory: ${JSON.stringify(directory)} }): it uploads the folder whole, ` +
        "as the service reads it from version control, where modules, imports, parameters, Rego shared across " +
        `files and remote sources all work (${packageDoc("policy-sets.md")})`,
    );
  }
  if (reader.problems.length > 0) throw new PolicyFolderError(shownConfig, reader.problems);
  return {
    kind,
    configFile,
    policies,
    notes: reader.notes,
    warnings: reader.warnings,
    regoChecked: kind !== "opa" || reader.opa !== undefined,
  };
}

function findConfigFile(folder: string, shown: string): { kind: PolicyKind; configFile: string } {
  const isFile = (path: string) => statSync(path, { throwIfNoEntry: false })?.isFile() ?? false;
  if (!statSync(folder, { throwIfNoEntry: false })?.isDirectory()) {
    throw new PolicyFolderError(shown, [
      `directory ${shown} does not exist (resolved to ${folder}, relative to the program's directory)`,
    ]);
  }
  const found = (Object.keys(configFiles) as PolicyKind[]).filter((kind) => isFile(join(folder, configFiles[kind])));
  if (found.length === 1) {
    const kind = found[0] as PolicyKind;
    return { kind, configFile: join(folder, configFiles[kind]) };
  }
  if (found.length > 1) {
    throw new PolicyFolderError(shown, [
      "both sentinel.hcl and policies.hcl are here; a policy set is of one kind: split the folder in two",
    ]);
  }
  const jsonForm = isFile(join(folder, "policies.json"))
    ? ": policies.json (the JSON form) is not read, write it as policies.hcl"
    : "";
  // Terraform policy has no individual policies, so no PolicyFolder: its files go up whole as a set's version.
  const terraformPolicy = readdirSync(folder).some((name) => name.endsWith(".policy.hcl"))
    ? ": its .policy.hcl files are Terraform policy, which has no individual policies; declare a PolicySet with " +
      "this directory instead"
    : "";
  throw new PolicyFolderError(shown, [`no sentinel.hcl or policies.hcl in ${shown}${jsonForm}${terraformPolicy}`]);
}

class FolderReader {
  readonly problems: string[] = [];
  readonly notes: string[] = [];
  readonly warnings: string[] = [];
  opa: Opa | undefined;
  /** Whether a problem is one that only a versioned set (the folder uploaded whole) can carry. */
  needsVersionedSet = false;
  private readonly configName: string;
  private readonly regoVersion: RegoVersion;
  private readonly overrides: Record<string, PolicyOverride>;

  constructor(
    private readonly folder: string,
    private readonly kind: PolicyKind,
    private readonly text: string,
    private readonly options: ReadPolicyFolderOptions,
    private readonly access: FileAccess,
  ) {
    this.configName = configFiles[kind];
    // The service runs OPA sets on `latest` (OPA 0.61.x) unless a set pins another runtime: Rego v0.
    this.regoVersion = options.regoVersion ?? "v0";
    this.overrides = options.overrides ?? {};
  }

  /** A problem the policies API cannot carry and an uploaded folder can. */
  private versionedOnly(problem: string): void {
    this.needsVersionedSet = true;
    this.problems.push(problem);
  }

  /** Where a block (or one of its attributes) is, for messages: `policies.hcl:7: policy "x"`. */
  private at(block: HclBlock, attribute?: string): string {
    const line = lineOf(this.text, block, attribute);
    return `${this.configName}${line ? `:${line}` : ""}: ${blockAddress(block)}`;
  }

  async read(blocks: HclBlock[]): Promise<FolderPolicy[]> {
    if (this.options.regoVersion !== undefined && !["v0", "v1"].includes(this.options.regoVersion)) {
      this.problems.push(`regoVersion ${JSON.stringify(this.options.regoVersion)} is not valid: use "v0" or "v1"`);
    }
    const skip = new Set(this.options.skipBlocks ?? []);
    const policyBlocks: HclBlock[] = [];
    const declaredImports = new Map<string, HclBlock>();
    for (const block of blocks) {
      const address = blockAddress(block);
      if (block.type === "policy" && block.labels.length === 1) {
        policyBlocks.push(block);
        continue;
      }
      const group = block.type === "import" ? `import ${block.labels[0]}` : block.type;
      const importName = block.type === "import" ? block.labels[1] : block.labels[0];
      if (this.kind === "sentinel" && ["module", "import module", "import static", "import plugin"].includes(group)) {
        if (importName !== undefined) declaredImports.set(importName, block);
      }
      if (skip.delete(address)) {
        this.notes.push(`${address} is left out, as skipBlocks asks`);
      } else if (this.kind === "sentinel" && cliOnlyBlocks.includes(block.type)) {
        this.notes.push(`${address} is not sent: it configures the Sentinel CLI (sentinel apply, sentinel test) only`);
      } else if (this.kind === "sentinel" && unsupportedBlockFixes[group]) {
        this.versionedOnly(`${this.at(block)}: ${unsupportedBlockFixes[group]}`);
      } else {
        this.problems.push(
          `${this.at(block)}: not a block of ${this.configName} this library knows (${this.kind === "opa" ? "policy" : "policy, module, import, param, mock, test"}): ` +
            "remove it, or list it in skipBlocks to leave it out knowingly",
        );
      }
    }
    for (const address of skip) {
      this.problems.push(
        `skipBlocks names ${address}, which ${this.configName} does not have: remove it from skipBlocks`,
      );
    }
    const labels = policyBlocks.map((block) => block.labels[0] as string);
    for (const label of Object.keys(this.overrides)) {
      if (!labels.includes(label)) {
        this.problems.push(`overrides names "${label}", which is no policy of ${this.configName}: check the spelling`);
      }
    }
    const seen = new Set<string>();
    const policies: FolderPolicy[] = [];
    for (const block of policyBlocks) {
      const label = block.labels[0] as string;
      if (seen.has(label)) {
        this.problems.push(`${this.at(block)}: declared twice: each policy name may appear once`);
        continue;
      }
      seen.add(label);
      const policy = this.policyOf(block);
      if (policy) policies.push(policy);
    }
    if (this.kind === "sentinel") await this.checkSentinel(policies, policyBlocks, declaredImports);
    else await this.checkRego(policies, policyBlocks);
    return policies;
  }

  /** The block's own settings, checked; its code is checked afterwards, by kind. */
  private policyOf(block: HclBlock): FolderPolicy | undefined {
    const label = block.labels[0] as string;
    // Own entries only: a label is any text, and `constructor` would otherwise find Object.prototype's.
    const override = (Object.hasOwn(this.overrides, label) ? this.overrides[label] : undefined) ?? {};
    const before = this.problems.length;
    for (const attribute of Object.keys(block.body)) {
      if (policyAttributes[this.kind].includes(attribute)) continue;
      const fix =
        attribute === "params"
          ? "the policies API takes no parameter values: give the parameters defaults in the policy (param x default ...) or set them on the policy set, then remove params"
          : `${this.configName} policies take ${policyAttributes[this.kind].join(", ")}: remove it`;
      const problem = `${this.at(block, attribute)}: ${attribute} is not supported: ${fix}`;
      if (attribute === "params") this.versionedOnly(problem);
      else this.problems.push(problem);
    }
    const name = override.name ?? label;
    if (!policyNamePattern.test(name)) {
      this.versionedOnly(
        `${this.at(block)}: "${name}" is not a valid policy name (letters, digits, '-' and '_' only): rename the block, ` +
          `or set overrides: { ${JSON.stringify(label)}: { name: "${name.replace(/[^A-Za-z0-9_-]+/g, "-")}" } }`,
      );
    }
    const level = override.enforcementLevel ?? this.stringAttribute(block, "enforcement_level") ?? defaultLevel;
    const levels: readonly string[] = enforcementLevelsByKind[this.kind];
    if (!levels.includes(level)) {
      this.problems.push(
        `${this.at(block, "enforcement_level")}: enforcement level "${level}" is not one of ${this.kind}'s: ${levels.join(", ")}`,
      );
    }
    const policy: FolderPolicy = { block: label, name, kind: this.kind, codeFile: "", enforcementLevel: level };
    const description = override.description ?? this.stringAttribute(block, "description");
    if (description !== undefined) policy.description = description;
    if (this.kind === "opa") {
      const query = this.stringAttribute(block, "query");
      if (query === undefined) {
        if (!("query" in block.body)) {
          this.problems.push(
            `${this.at(block)}: query is missing: name the rule to evaluate, e.g. data.terraform.deny`,
          );
        }
      } else policy.query = query;
    } else {
      policy.codeFile = this.sentinelSource(block);
    }
    return this.problems.length === before ? policy : undefined;
  }

  /** A literal string attribute; anything else is a problem (HCP evaluates no expressions in these files). */
  private stringAttribute(block: HclBlock, attribute: string): string | undefined {
    const value = literalString(block, attribute);
    if (typeof value !== "object") return value;
    this.problems.push(`${this.at(block, attribute)}: ${value.problem}`);
    return undefined;
  }

  /** The policy's file: `source`, or `./<label>.sentinel` as the service takes when there is none. */
  private sentinelSource(block: HclBlock): string {
    const label = block.labels[0] as string;
    const source = this.stringAttribute(block, "source") ?? `./${label}.sentinel`;
    if (isRemoteSource(source)) {
      this.versionedOnly(
        `${this.at(block, "source")}: source ${source} is remote, and the policies API takes the code itself: ` +
          "download the file into the folder and set source to its path",
      );
      return "";
    }
    return this.codeFileAt(block, "source", resolve(this.folder, source), source) ?? "";
  }

  /** The path, if it is a readable file within the service's size limit. */
  private codeFileAt(block: HclBlock, attribute: string, path: string, shown: string): string | undefined {
    const file = this.access.check(path, shown);
    if ("problem" in file) {
      this.problems.push(`${this.at(block, attribute)}: ${file.problem}`);
      return undefined;
    }
    const size = statSync(file.path).size;
    if (size > maxPolicyCodeBytes) {
      this.problems.push(
        `${this.at(block, attribute)}: ${shown} is ${size} bytes; the service accepts at most ${maxPolicyCodeBytes} (10 MB)`,
      );
      return undefined;
    }
    return path;
  }

  private async checkSentinel(policies: FolderPolicy[], blocks: HclBlock[], imports: Map<string, HclBlock>) {
    await Promise.all(
      policies.map(async (policy) => {
        const block = blocks.find((candidate) => candidate.labels[0] === policy.block) as HclBlock;
        const shown = relative(this.folder, policy.codeFile);
        const code = decodeUtf8(this.access.read(policy.codeFile, shown));
        const declared = { configName: this.configName, names: imports };
        for (const problem of sentinelCodeProblems(code, shown, declared))
          this.problems.push(`${this.at(block)}: ${problem}`);
        if (code === undefined) return;
        for (const { name, line } of importsOf(code)) {
          const declared = imports.get(name);
          if (declared) {
            this.versionedOnly(
              `${this.at(block)}: ${shown}:${line} imports "${name}", which ${this.configName} declares as ${blockAddress(declared)}; ` +
                "the policies API holds one file per policy and cannot deliver it: copy what the policy uses into it",
            );
          }
        }
        const formatted = await sentinelFmtCheck(policy.codeFile);
        if (formatted && "error" in formatted) {
          this.problems.push(`${this.at(block)}: sentinel fmt -check: ${formatted.error}`);
        } else if (formatted) {
          this.warnings.push(`${shown} is not formatted as sentinel fmt writes it`);
        }
      }),
    );
  }

  private async checkRego(policies: FolderPolicy[], blocks: HclBlock[]) {
    this.opa = await Opa.find(this.options.opaPath);
    if (!this.opa && this.options.opaPath !== undefined) {
      this.problems.push(`opaPath ${this.options.opaPath} cannot be run: give the path of an opa binary`);
      return;
    }
    const files = regoFilesUnder(this.folder);
    const modules = await this.modulesOf(files);
    const blockOf = (policy: FolderPolicy) => blocks.find((block) => block.labels[0] === policy.block) as HclBlock;
    const chosen = new Map<string, FolderPolicy[]>();
    for (const policy of policies) {
      const file = this.fileForQuery(blockOf(policy), policy.query as string, modules);
      if (!file) continue;
      policy.codeFile = join(this.folder, file);
      chosen.set(file, [...(chosen.get(file) ?? []), policy]);
    }
    if (!this.opa) return;
    // The query's rule and the file's needs come from `opa parse`; a file that did not parse gets OPA's syntax
    // errors from `opa check` below. A file that needs another one is reported as that, not as OPA's "undefined".
    for (const [file, users] of chosen) {
      if (!modules.get(file)?.rules) continue;
      const before = this.problems.length;
      for (const policy of users) this.checkQueryTarget(blockOf(policy), policy.query as string, file, modules);
      if (this.problems.length > before) chosen.delete(file);
    }
    const found = await this.opa.check([...chosen.keys()], this.regoVersion, this.folder);
    for (const problem of found) {
      const users = chosen.get(problem.location?.file ?? "") ?? [...chosen.values()].flat();
      for (const policy of users) this.problems.push(`${this.at(blockOf(policy))}: ${describe(problem)}`);
    }
    const words = regoVersionWords(this.regoVersion);
    this.problems.push(
      ...(await dialectAdvice(this.opa, [...chosen.keys()], found, this.regoVersion, this.folder, words)),
    );
  }

  /** Each .rego file's module as `opa parse` gives it; without opa, or where it fails, the package line only. */
  private async modulesOf(files: string[]): Promise<Map<string, Partial<RegoModule> & { packagePath: string[] }>> {
    const modules = new Map<string, Partial<RegoModule> & { packagePath: string[] }>();
    const queue = [...files];
    const worker = async () => {
      for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
        if (this.opa) {
          try {
            modules.set(file, await this.opa.parse(file, this.regoVersion, this.folder));
            continue;
          } catch (error) {
            if (!(error instanceof OpaError)) throw error;
          }
        }
        const packagePath = packageLineOf(this.access.read(join(this.folder, file), file).toString("utf8"));
        if (packagePath) modules.set(file, { packagePath });
      }
    };
    await Promise.all([worker(), worker(), worker(), worker()]);
    return modules;
  }

  /** The one file whose package the query reaches into: the longest package that starts the query's path. */
  private fileForQuery(
    block: HclBlock,
    query: string,
    modules: Map<string, { packagePath: string[] }>,
  ): string | undefined {
    const path = queryPath(query);
    if (!path) {
      const hint = query.startsWith("data.") ? "" : `; did you mean data.${query}?`;
      this.problems.push(
        `${this.at(block, "query")}: query "${query}" is not a reference into data like data.<package>.<rule>${hint}`,
      );
      return undefined;
    }
    let best: string[] = [];
    let files: string[] = [];
    for (const [file, module] of modules) {
      const pkg = module.packagePath;
      if (pkg.length >= path.length || !startsWith(path, pkg)) continue;
      if (pkg.length > best.length) [best, files] = [pkg, [file]];
      else if (pkg.length === best.length && pkg.length > 0) files.push(file);
    }
    if (files.length === 0) {
      const packages = [...new Set([...modules.values()].map((module) => `data.${module.packagePath.join(".")}`))];
      this.problems.push(
        `${this.at(block, "query")}: query ${query} names no package of the .rego files in this folder` +
          (packages.length ? ` (they define ${packages.sort().join(", ")})` : " (it has none)") +
          ": fix the query, or add the file",
      );
      return undefined;
    }
    if (files.length > 1) {
      this.versionedOnly(
        `${this.at(block, "query")}: package data.${best.join(".")} is split over ${files.sort().join(", ")}, and ` +
          "the policies API holds one file per policy: merge them into one file",
      );
      return undefined;
    }
    return files[0];
  }

  /** The query's rule is defined in the file, and the file needs no other file of the folder. */
  private checkQueryTarget(
    block: HclBlock,
    query: string,
    file: string,
    modules: Map<string, Partial<RegoModule> & { packagePath: string[] }>,
  ) {
    const module = modules.get(file) as RegoModule;
    const path = queryPath(query) as string[];
    const rest = path.slice(module.packagePath.length);
    const rule = rest[0] as string;
    const defined = module.rules.some((head) => head[0] === rule && (startsWith(rest, head) || startsWith(head, rest)));
    if (!defined) {
      const rules = [...new Set(module.rules.map((head) => head[0]))].sort();
      this.problems.push(
        `${this.at(block, "query")}: query ${query}: ${file} (package data.${module.packagePath.join(".")}) defines no rule "${rule}"` +
          (rules.length ? `; its rules: ${rules.join(", ")}` : "") +
          ": fix the query or the rule's name",
      );
    }
    const needed = new Set<string>();
    for (const reference of module.dataReferences) {
      if (startsWith(reference, module.packagePath) || startsWith(module.packagePath, reference)) continue;
      for (const [other, otherModule] of modules) {
        const pkg = otherModule.packagePath;
        if (other !== file && (startsWith(pkg, reference) || startsWith(reference, pkg))) {
          needed.add(`${other} (data.${reference.join(".")})`);
        }
      }
    }
    if (needed.size > 0) {
      this.versionedOnly(
        `${this.at(block)}: ${file} uses ${[...needed].sort().join(", ")}, but the policies API holds one file per ` +
          `policy, so it would not be there: copy what ${basename(file)} uses into it`,
      );
    }
  }
}

/** OPA's own words with the file and line: `policies/deny.rego:3: rego_parse_error: ...`. */
function describe(problem: OpaProblem): string {
  const where = problem.location ? `${problem.location.file}:${problem.location.row}: ` : "";
  return `${where}${problem.code}: ${problem.message} (opa check)`;
}

/** The .rego files under the folder, relative to it; tests (`*_test.rego`) are for `opa test`, not policies. */
function regoFilesUnder(folder: string): string[] {
  return readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(".rego") && !entry.name.endsWith("_test.rego"))
    .map((entry) => relative(folder, join(entry.parentPath, entry.name)))
    .filter((file) => !file.split(/[\\/]/).some((part) => part.startsWith(".") || part === "node_modules"))
    .sort();
}

/** `package a.b["c-d"]` as a path, for mapping files without opa; the package clause comes first in every file. */
function packageLineOf(code: string): string[] | undefined {
  const match = /^[ \t]*package[ \t]+([^\s#]+)/m.exec(code);
  return match ? referencePath(`data.${match[1]}`) : undefined;
}

function startsWith(path: string[], prefix: string[]): boolean {
  return prefix.length <= path.length && prefix.every((part, index) => path[index] === part);
}
