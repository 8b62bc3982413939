import { statSync } from "node:fs";
import { resolve } from "node:path";
import type * as pulumi from "@pulumi/pulumi";
import type { TfeClient } from "../client/client";
import { TfeApiError } from "../client/errors";
import { maxNameLength } from "../contract/limits";
import { type PolicySetKind, policyNamePattern, policySetKinds, weakensEnforcement } from "../contract/policies";
import { policySetArchiveSizeProblem } from "../contract/policy-sets";
import { archiveSize, collectFolder, fileDigests, hashFiles, packFiles } from "../policy-code/archive";
import { normalizedPoliciesPath } from "../policy-code/folder-files";
import { Opa } from "../policy-code/opa";
import { bringInOutsideSources, type WithOutsideSources } from "../policy-code/outside-sources";
import {
  type FolderFiles,
  kindOfFolder,
  PolicySetFolderError,
  type PolicySetFolderSummary,
  readPolicySetFolder,
} from "../policy-code/policy-set-folder";
import { dialectAdvice, policyToolVersionWords, queryProblems, regoVersionOfRuntime } from "../policy-code/rego";
import { checkDirectoryKept, checkVcs, idShapes, namesCredential, setNameTakenMessage } from "./policy-set-arguments";
import { type AppliedScope, type appliedProperties, policySetProperties } from "./policy-set-properties";
import { type ParameterState, scopeOptions } from "./policy-set-requests";
import {
  checkTfPolicyFolder,
  type PolicyBlockShape,
  terraformPolicyArgumentFailures,
  tfPolicyWeakenings,
} from "./policy-set-tfpolicy";
import { argumentFailures } from "./property-table";
import {
  type CheckFailure,
  checkIdList,
  checkOrganization,
  isUnknown,
  NameListings,
  type ProviderContext,
  sameValue,
  takenNameHolder,
} from "./provider-context";

/** What checking the folder found: whether it could be read (a weakening can be judged only then), and what. */
interface FolderCheck {
  readable: boolean;
  /** A folder was read (a directory, or a checkout of the repository): its policies are what a change compares. */
  compared?: boolean;
  kind?: PolicySetKind;
  summary?: PolicySetFolderSummary;
}

/** The preview checks of a PolicySet: every argument, the whole folder, the scope's ids, every weakening. */
export class PolicySetChecker {
  /** Ids of workspaces and projects found this operation: each is read once however many sets name it. */
  private readonly foundScopeIds = new Map<string, Promise<boolean>>();
  /**
   * Archives packed at check, by content hash: `up` uploads exactly what its check hashed and sized, however the
   * folder changes meanwhile. The provider process lives for one operation, so nothing here outlives it.
   */
  readonly packedArchives = new Map<string, Buffer>();

  /** The names of each organization's sets, listed once however many sets are created or renamed. */
  private readonly names: NameListings;

  constructor(private readonly context: ProviderContext) {
    this.names = new NameListings((organization) => context.client.policySets.listAll(organization));
  }

  /** Every input rule and the whole folder, before any write; unknown values (preview) pass. */
  async check(olds: Record<string, unknown>, news: Record<string, unknown>): Promise<pulumi.dynamic.CheckResult> {
    const failures = argumentFailures(policySetProperties, news, "PolicySet");
    if (failures.length > 0) return { inputs: news, failures };
    const inputs: Record<string, unknown> = { ...news };
    checkOrganization(failures, news.organization);
    const name = news.name;
    if (
      !isUnknown(name) &&
      (typeof name !== "string" || !policyNamePattern.test(name) || name.length > maxNameLength)
    ) {
      failures.push({
        property: "name",
        reason: `name ${JSON.stringify(name)} may hold only letters, digits, '-' and '_' (at most ${maxNameLength}): e.g. "baseline"`,
      });
    }
    const kindKnown =
      news.kind === undefined || isUnknown(news.kind) || policySetKinds.includes(news.kind as PolicySetKind);
    if (!kindKnown) {
      failures.push({
        property: "kind",
        reason: `kind ${JSON.stringify(news.kind)} is not valid: use "sentinel", "opa" or "tfpolicy"`,
      });
    }
    inputs.description = news.description ?? null;
    inputs.global = news.global === true;
    inputs.adoptExisting = news.adoptExisting === true;
    inputs.allowWeakening = news.allowWeakening === true;
    inputs.policyToolVersion = news.policyToolVersion ?? "latest";
    for (const property of ["policyIds", ...scopeOptions] as const) {
      inputs[property] = checkIdList(failures, property, news[property], idShapes[property]);
    }
    if (
      news.directory !== undefined &&
      (isUnknown(news.policyIds) || (Array.isArray(news.policyIds) && news.policyIds.length > 0))
    ) {
      failures.push({
        property: "policyIds",
        reason:
          "a set holds either a folder (directory) or individual policies (policyIds), never both: declare two sets",
      });
    }
    if (inputs.global === true) {
      for (const property of ["workspaceIds", "projectIds"] as const) {
        if (Array.isArray(inputs[property]) && (inputs[property] as unknown[]).length > 0) {
          failures.push({
            property,
            reason: `${property} cannot go with global: true, which applies the set to every workspace: remove one (exclusions still apply)`,
          });
        }
      }
    }
    checkVcs(failures, news, inputs);
    checkDirectoryKept(failures, olds, news);
    const folder: FolderCheck = !kindKnown
      ? { readable: false }
      : news.vcsCheckout !== undefined && !isUnknown(news.vcsCheckout)
        ? await this.checkCheckout(failures, news, inputs)
        : await this.checkFolder(failures, olds, news, inputs);
    const kind = (news.kind ?? folder.kind ?? "sentinel") as PolicySetKind;
    inputs.kind = kind;
    inputs.agentEnabled = kind === "opa" || news.agentEnabled === true;
    if (kind === "opa" && news.agentEnabled === false) {
      failures.push({
        property: "agentEnabled",
        reason: "agentEnabled cannot be false for an OPA set: OPA always runs in the agent",
      });
    }
    if (kind === "sentinel" && !inputs.agentEnabled && news.overridable === true) {
      failures.push({
        property: "overridable",
        reason: "overridable applies to OPA sets and to Sentinel sets with agentEnabled: true: set agentEnabled too",
      });
    }
    if (kind === "tfpolicy") failures.push(...terraformPolicyArgumentFailures(news));
    inputs.overridable =
      kind === "tfpolicy" || (kind === "sentinel" && !inputs.agentEnabled) ? null : news.overridable === true;
    const notes: string[] = [];
    inputs.parameters = this.checkParameters(failures, notes, kind, news.parameters, folder.summary);
    for (const note of notes) await this.context.warn(news.__urn, note);
    await this.checkScopeIdsExist(failures, olds, inputs);
    await this.checkWeakening(failures, olds, inputs, folder.compared === true);
    const holder = await takenNameHolder(failures, olds, inputs, this.names);
    if (holder && !inputs.adoptExisting) {
      failures.push({
        property: "name",
        reason: setNameTakenMessage(inputs as { name: string; organization: string }, holder.id),
      });
    } else if (holder && holder.kind !== kind) {
      failures.push({
        property: "kind",
        reason: `cannot adopt policy set "${String(inputs.name)}" (${holder.id}): its kind is ${holder.kind}, and this resource declares kind ${kind}`,
      });
    }
    return { inputs, failures };
  }

  /**
   * A set read from version control, with a local checkout of its repository: the policies path there is read as
   * the service reads the repository (whole, so `../` sources resolve), with every check a `directory` gets. What is
   * uploaded comes from commits, so nothing is hashed or packed.
   */
  private async checkCheckout(
    failures: CheckFailure[],
    news: Record<string, unknown>,
    inputs: Record<string, unknown>,
  ): Promise<FolderCheck> {
    clearFolderRecord(inputs);
    const checkout = String(news.vcsCheckout);
    const fail = (reason: string) =>
      failures.push({ property: "vcsCheckout", reason: `vcsCheckout ${checkout}: ${reason}` });
    if (inputs.vcsRepo === null) {
      fail("goes with vcsRepo: it is a local checkout of the repository a set reads from version control");
      return { readable: false };
    }
    const root = resolve(checkout);
    if (!statSync(root, { throwIfNoEntry: false })?.isDirectory()) {
      fail(`does not exist (resolved to ${root}, relative to the program's directory)`);
      return { readable: false };
    }
    const policiesPath = normalizedPoliciesPath(typeof inputs.policiesPath === "string" ? inputs.policiesPath : "");
    let files: FolderFiles;
    try {
      files = collectFolder(root).files;
    } catch (error) {
      fail((error as Error).message);
      return { readable: false };
    }
    const kind = (news.kind as PolicySetKind | undefined) ?? kindOfFolder(files, policiesPath) ?? "sentinel";
    const base = resolve(root, policiesPath);
    const underPath = new Map(
      [...files].flatMap(([path, bytes]) =>
        !policiesPath
          ? [[path, bytes]]
          : path.startsWith(`${policiesPath}/`)
            ? [[path.slice(policiesPath.length + 1), bytes]]
            : [],
      ),
    ) as FolderFiles;
    const toolVersion = String(news.policyToolVersion ?? "latest");
    return this.readFolder(
      fail,
      inputs,
      { files, kind, policiesPath, parameters: news.parameters, urn: news.__urn },
      { folder: base, files: underPath, toolVersion },
    );
  }

  /**
   * Reads the folder as the service will, checks its Rego with `opa`, and packs it when its content changed (the
   * size the service counts is the archive's); sets `contentHash` and `folderPolicies`.
   */
  private async checkFolder(
    failures: CheckFailure[],
    olds: Record<string, unknown>,
    news: Record<string, unknown>,
    inputs: Record<string, unknown>,
  ): Promise<FolderCheck> {
    clearFolderRecord(inputs);
    const directory = news.directory;
    if (directory === undefined || isUnknown(directory)) {
      if (isUnknown(directory)) inputs.contentHash = directory;
      return { readable: directory === undefined };
    }
    const fail = (reason: string) =>
      failures.push({ property: "directory", reason: `directory ${String(directory)}: ${reason}` });
    if (typeof directory !== "string" || directory === "") {
      fail("must be the path of the policy set's folder");
      return { readable: false };
    }
    const path = resolve(directory);
    if (!statSync(path, { throwIfNoEntry: false })?.isDirectory()) {
      fail(`does not exist (resolved to ${path}, relative to the program's directory)`);
      return { readable: false };
    }
    let prepared: PreparedFolder;
    try {
      prepared = await prepareFolder(path, news.kind as PolicySetKind | undefined);
    } catch (error) {
      fail((error as Error).message);
      return { readable: false };
    }
    for (const problem of prepared.problems) fail(problem);
    if (prepared.problems.length > 0) return { readable: false };
    const { files, kind } = prepared;
    inputs.contentHash = prepared.contentHash;
    inputs.contentFiles = fileDigests(files);
    if (prepared.contentHash !== olds.contentHash) {
      // What a reviewer should see: the upload carries these files from outside the folder.
      const label = `policy set "${String(news.name)}": directory ${directory}`;
      for (const link of prepared.externalLinks) {
        await this.context.warn(
          news.__urn,
          `${label}: ${link.path} links out of the folder, to ${link.target}; its content is uploaded`,
        );
      }
      for (const brought of prepared.broughtIn) {
        await this.context.warn(
          news.__urn,
          `${label}: source ${brought.source} is outside the folder; ${brought.from} is uploaded as ${brought.path}`,
        );
      }
      const archive = packFiles(files);
      const tooLarge = policySetArchiveSizeProblem(archiveSize(files, archive));
      if (tooLarge) {
        fail(tooLarge);
        return { readable: false };
      }
      this.packedArchives.set(prepared.contentHash, archive);
    }
    const recorded = olds.folderPolicies;
    if (
      kind === "sentinel" &&
      prepared.contentHash === olds.contentHash &&
      olds.kind === kind &&
      typeof recorded === "object" &&
      recorded !== null &&
      Object.keys(recorded).length > 0
    ) {
      // The content an earlier up read and recorded: reading it again (its HCL parsed, every source resolved) finds
      // the same policies, so a no-change preview costs a hash of the folder. OPA sets are read every time: their
      // Rego check depends on the opa installed.
      inputs.folderPolicies = recorded;
      return { readable: true, compared: true, kind };
    }
    const toolVersion = String(news.policyToolVersion ?? "latest");
    return this.readFolder(
      fail,
      inputs,
      { files, kind, policiesPath: "", parameters: news.parameters, urn: news.__urn },
      { folder: path, files, toolVersion },
    );
  }

  /**
   * The set's folder read as the service reads it, and its Rego checked: its policies are then what a later change
   * is compared with; a folder that cannot be read says so and is compared with nothing.
   */
  private async readFolder(
    fail: (reason: string) => void,
    inputs: Record<string, unknown>,
    set: { files: FolderFiles; kind: PolicySetKind; policiesPath: string; parameters: unknown; urn: unknown },
    rego: { folder: string; files: FolderFiles; toolVersion: string },
  ): Promise<FolderCheck> {
    if (set.kind === "tfpolicy") {
      const read = await checkTfPolicyFolder(set.files, set.policiesPath, set.parameters, fail, (warning) =>
        this.context.warn(set.urn, warning),
      );
      if (!read) return { readable: false, kind: set.kind };
      inputs.folderPolicies = read.summary.policies;
      inputs.policyBlocks = read.blocks;
      return { readable: true, compared: true, kind: set.kind, summary: read.summary };
    }
    try {
      const summary = await readPolicySetFolder(set.files, set.kind, set.policiesPath);
      inputs.folderPolicies = summary.policies;
      if (set.kind === "opa") await this.checkRego(fail, rego.folder, rego.files, rego.toolVersion, summary.queries);
      return { readable: true, compared: true, kind: set.kind, summary };
    } catch (error) {
      if (!(error instanceof PolicySetFolderError)) throw error;
      for (const problem of error.problems) fail(problem);
      return { readable: false, kind: set.kind };
    }
  }

  /**
   * `opa check` of every Rego file of the folder together (so packages shared across files resolve) in the dialect
   * the set's runtime reads, then each policy block's query against the rules they define. A file only the other
   * dialect reads is named with both fixes.
   */
  private async checkRego(
    fail: (reason: string) => void,
    folder: string,
    files: FolderFiles,
    toolVersion: string,
    queries: { at: string; query: string }[],
  ) {
    const opa = await Opa.find();
    if (!opa) {
      this.context.missingChecker(fail, "Rego", "no opa binary on PATH");
      return;
    }
    const rego = [...files.keys()].filter((path) => path.endsWith(".rego") && !path.endsWith("_test.rego"));
    const dialect = regoVersionOfRuntime(toolVersion);
    const problems = await opa.check(rego, dialect, folder);
    for (const problem of problems) {
      const where = problem.location ? `${problem.location.file}:${problem.location.row}: ` : "";
      fail(
        `${where}${problem.code}: ${problem.message} (opa check, Rego ${dialect} for policyToolVersion ${toolVersion})`,
      );
    }
    const words = policyToolVersionWords(toolVersion);
    for (const advice of await dialectAdvice(opa, rego, problems, dialect, folder, words)) fail(advice);
    if (problems.length > 0) return;
    for (const problem of await queryProblems(opa, rego, dialect, folder, queries)) fail(problem);
  }

  /**
   * Each parameter with whether it is sensitive. A refusal names the key and never the value: it is reported on no
   * property, since Pulumi prints the value of a property that a failure names.
   */
  private checkParameters(
    failures: CheckFailure[],
    warnings: string[],
    kind: PolicySetKind,
    given: unknown,
    folder: PolicySetFolderSummary | undefined,
  ): unknown {
    if (given === undefined || given === null) return {};
    if (isUnknown(given)) return given;
    const parameters = given as Record<string, unknown>;
    if (kind === "opa" && Object.keys(parameters).length > 0) {
      failures.push({ property: "", reason: "parameters are for Sentinel sets: OPA sets take none" });
    }
    const checked: Record<string, unknown> = {};
    for (const [key, entry] of Object.entries(parameters)) {
      const { value, sensitive } = (entry ?? {}) as Partial<ParameterState>;
      if (isUnknown(entry) || isUnknown(value)) {
        checked[key] = entry;
        continue;
      }
      if (typeof value !== "string") {
        failures.push({ property: "", reason: `parameters.${key} must be a string` });
        continue;
      }
      checked[key] = { value, sensitive: sensitive === true };
      if (folder && !folder.params.includes(key)) {
        warnings.push(
          kind === "tfpolicy"
            ? `policy set: parameters.${key}: no policy file declares input "${key}", so no policy reads it`
            : `policy set: parameters.${key}: the folder declares no param "${key}" in sentinel.hcl, so no policy reads it`,
        );
      }
      if (namesCredential(key) && sensitive !== true) {
        failures.push({
          property: "",
          reason:
            `parameters.${key} names a credential, and its value is no secret: pass it as pulumi.secret(...) or ` +
            "config.requireSecret(...), so it is sent as sensitive and never stored in plain text",
        });
      }
    }
    return checked;
  }

  /**
   * Every workspace and project id the change adds to the scope exists and is visible to this token: one read
   * each, so a typo fails preview naming the id rather than a 422 half-way through `up`.
   */
  private async checkScopeIdsExist(
    failures: CheckFailure[],
    olds: Record<string, unknown>,
    inputs: Record<string, unknown>,
  ) {
    if (failures.length > 0) return;
    const reads: Promise<void>[] = [];
    for (const property of scopeOptions) {
      const ids = inputs[property];
      if (!Array.isArray(ids)) continue;
      const before = Array.isArray(olds[property]) ? (olds[property] as string[]) : [];
      const kind = property === "workspaceIds" || property === "excludedWorkspaceIds" ? "workspaces" : "projects";
      for (const id of ids) {
        if (isUnknown(id) || before.includes(id)) continue;
        reads.push(
          this.scopeIdExists(kind, id).then((exists) => {
            if (exists) return;
            failures.push({
              property,
              reason:
                `${property}: ${kind === "workspaces" ? "workspace" : "project"} ${id} does not exist in organization ` +
                `"${String(inputs.organization)}", or this token cannot see it: check the id (a name is not an id)`,
            });
          }),
        );
      }
    }
    await Promise.all(reads);
  }

  private scopeIdExists(kind: "workspaces" | "projects", id: string): Promise<boolean> {
    let found = this.foundScopeIds.get(id);
    if (!found) {
      found = this.context.client[kind].read(id).then(
        () => true,
        (error: unknown) => {
          if (error instanceof TfeApiError && error.status === 404) return false;
          throw error;
        },
      );
      this.foundScopeIds.set(id, found);
    }
    return found;
  }

  /**
   * Every weakening of the change at once, refused unless allowed. The base is what the set enforces now: for a
   * versioned set, the policies of its current version as `up` recorded them (never blanked, see
   * {@link checkDirectoryKept}); for a replacement (`kind` changed), the old set against the new one.
   */
  private async checkWeakening(
    failures: CheckFailure[],
    olds: Record<string, unknown>,
    inputs: Record<string, unknown>,
    folderCompared: boolean,
  ) {
    if (olds.kind === undefined || isUnknown(inputs.kind)) return;
    const [fromKind, toKind] = [olds.kind as PolicySetKind, inputs.kind as PolicySetKind];
    const weakenings: string[] = [];
    if (fromKind !== toKind) weakenings.push(`kind goes from ${fromKind} to ${toKind}, which replaces the set`);
    const oldPolicies = (olds.folderPolicies ?? {}) as Record<string, string>;
    const newPolicies = (inputs.folderPolicies ?? {}) as Record<string, string>;
    // A folder that cannot be read says so on its own; its policies are not "removed". A set read from version
    // control without a checkout has no folder here to compare.
    if (folderCompared && !isUnknown(inputs.contentHash)) {
      for (const [label, level] of Object.entries(oldPolicies)) {
        const now = Object.hasOwn(newPolicies, label) ? newPolicies[label] : undefined;
        if (now === undefined) weakenings.push(`policy "${label}" is removed from the folder`);
        else if (weakensEnforcement(fromKind, level, now, toKind)) {
          weakenings.push(`policy "${label}" goes from ${level} to ${now}`);
        }
      }
      if (fromKind === "tfpolicy" && toKind === "tfpolicy") {
        weakenings.push(
          ...tfPolicyWeakenings(
            (olds.policyBlocks ?? {}) as Record<string, PolicyBlockShape>,
            (inputs.policyBlocks ?? {}) as Record<string, PolicyBlockShape>,
          ),
        );
      }
    }
    const restoring = (property: (typeof appliedProperties)[number]) => {
      const applied = (olds.applied as AppliedScope | undefined)?.[property];
      return applied !== undefined && !sameValue(olds[property], applied) && sameValue(inputs[property], applied)
        ? " (this puts back what Pulumi last applied: the service was changed outside Pulumi since)"
        : "";
    };
    const removed = (property: string) => {
      const [before, after] = [olds[property], inputs[property]];
      if (!Array.isArray(before) || !Array.isArray(after)) return [];
      return before.filter((id) => !after.includes(id));
    };
    if (olds.global === true && inputs.global === false) weakenings.push(`global is turned off${restoring("global")}`);
    for (const property of ["workspaceIds", "projectIds"] as const) {
      const gone = removed(property);
      if (gone.length > 0) weakenings.push(`${property} loses ${gone.join(", ")}${restoring(property)}`);
    }
    const leaving = removed("policyIds");
    if (leaving.length > 0) {
      const replaced = Array.isArray(inputs.policyIds) && inputs.policyIds.some(isUnknown);
      weakenings.push(
        `policyIds loses ${await this.describePolicies(leaving)}${restoring("policyIds")}` +
          (replaced
            ? ": a Policy that is replaced (renamed without aliases, or its name, organization or kind changed) gets " +
              "a new id, and its old one leaves the set; to keep the policy, a renamed Policy keeps its name " +
              '(name: "<its name>") and gives its old resource name with the aliases resource option'
            : ""),
      );
    }
    for (const property of ["excludedWorkspaceIds", "excludedProjectIds"] as const) {
      const before = Array.isArray(olds[property]) ? (olds[property] as string[]) : [];
      const after = Array.isArray(inputs[property]) ? (inputs[property] as unknown[]) : [];
      const added = after.filter((id) => !isUnknown(id) && !before.includes(id as string));
      if (added.length > 0) weakenings.push(`${property} gains ${added.join(", ")}${restoring(property)}`);
    }
    if (olds.overridable !== true && inputs.overridable === true) {
      weakenings.push(`overridable is turned on${restoring("overridable")}`);
    }
    // A replacement of another kind that loses nothing (an empty set) weakens nothing.
    if (weakenings.length === 1 && fromKind !== toKind) return;
    await this.context.refuseWeakeningUnlessAllowed(failures, {
      subject: `policy set "${String(inputs.name)}"`,
      weakenings,
      allowedOnResource: inputs.allowWeakening === true,
      urn: inputs.__urn,
    });
  }

  /** Policy ids with their names where the service still has them (one read each; only when a refusal names them). */
  private async describePolicies(ids: string[]): Promise<string> {
    let client: TfeClient;
    try {
      client = this.context.client;
    } catch {
      return ids.join(", ");
    }
    const named = await Promise.all(
      ids.map((id) =>
        client.policies.read(id).then(
          (policy) => `${id} ("${policy.name}")`,
          () => id,
        ),
      ),
    );
    return named.join(", ");
  }
}

/** What a folder check records, empty until a folder is read: a set of policies has none of it. */
function clearFolderRecord(inputs: Record<string, unknown>): void {
  inputs.contentHash = null;
  inputs.contentFiles = {};
  inputs.folderPolicies = {};
  inputs.policyBlocks = {};
}

/** A folder as it is uploaded: the files go-slug packs, with sources outside the folder brought in. */
interface PreparedFolder extends WithOutsideSources {
  kind: PolicySetKind;
  contentHash: string;
  externalLinks: { path: string; target: string }[];
}

export async function prepareFolder(path: string, declared: PolicySetKind | undefined): Promise<PreparedFolder> {
  const collected = collectFolder(path);
  const kind = declared ?? kindOfFolder(collected.files) ?? "sentinel";
  const withOutside = await bringInOutsideSources(path, collected.files, kind);
  return { ...withOutside, kind, contentHash: hashFiles(withOutside.files), externalLinks: collected.externalLinks };
}
