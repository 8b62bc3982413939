import { statSync } from "node:fs";
import { resolve } from "node:path";
import * as pulumi from "@pulumi/pulumi";
import type { TfeClient } from "../client/client";
import { TfeApiError } from "../client/errors";
import type { CreatePolicySetOptions, PolicySetScope, PolicySet as ServicePolicySet } from "../client/policy-sets";
import { maxNameLength } from "../contract/limits";
import { type PolicyKind, policyKinds, policyNamePattern, weakensEnforcement } from "../contract/policies";
import { policySetArchiveSizeProblem } from "../contract/policy-sets";
import { archiveSize, collectFolder, hashFiles, packFiles } from "../policy-code/archive";
import { Opa } from "../policy-code/opa";
import { bringInOutsideSources, type WithOutsideSources } from "../policy-code/outside-sources";
import {
  configFileOfKind,
  type FolderFiles,
  PolicySetFolderError,
  type PolicySetFolderSummary,
  readPolicySetFolder,
} from "../policy-code/policy-set-folder";
import { dialectAdvice, policyToolVersionWords, queryProblems, regoVersionOfRuntime } from "../policy-code/rego";
import {
  changeSet,
  createSetWithoutDuplicate,
  findSetByName,
  type ParameterState,
  PartialChange,
  type SetShape,
  scopeOptions,
  shapeOf,
  storedParameter,
  syncParameters,
  uploadVersion,
} from "./policy-set-requests";
import { argumentFailures, outputSlots, propertiesThat, propertyTable } from "./property-table";
import {
  answersNotFound,
  type CheckFailure,
  ContextProvider,
  changedProperties,
  checkIdList,
  checkOrganization,
  defaultOrganization,
  deleteConfirmingGone,
  type IdShape,
  isUnknown,
  type ObjectAccess,
  partialFailure,
  sameValue,
} from "./provider-context";
import { ShimResource } from "./shim";

export { hashParameterValue, type ParameterState } from "./policy-set-requests";

export interface PolicySetArgs {
  /** Organization of the set; default: stack config `tfe:organization`, then `TFE_ORGANIZATION`. */
  organization?: pulumi.Input<string>;
  /** The set's name (letters, digits, `-`, `_`), unique in the organization; default: the resource's name. */
  name?: pulumi.Input<string>;
  description?: pulumi.Input<string>;
  /** `"sentinel"` or `"opa"`; default: what `directory` holds (`sentinel.hcl` or `policies.hcl`), else sentinel. */
  kind?: pulumi.Input<PolicyKind>;
  /**
   * A versioned set: the folder, laid out as the service reads it from version control (`sentinel.hcl` or
   * `policies.hcl` at its root, modules, static imports and parameters beside it), uploaded as a version whenever
   * its content changes. Relative to the program's directory. Not with `policyIds`; once a set holds versions it
   * keeps its `directory`.
   */
  directory?: pulumi.Input<string>;
  /**
   * A set of individual policies (`Policy` resources' `policyId`). Not with `directory`. The set owns these
   * memberships: a policy another resource put in the set is not drift here, and one taken out outside Pulumi is.
   */
  policyIds?: pulumi.Input<pulumi.Input<string>[]>;
  /** Enforce on every workspace of the organization (`excludedWorkspaceIds` and `excludedProjectIds` still apply). */
  global?: pulumi.Input<boolean>;
  workspaceIds?: pulumi.Input<pulumi.Input<string>[]>;
  projectIds?: pulumi.Input<pulumi.Input<string>[]>;
  /** Workspaces the set never applies to; an exclusion wins over any inclusion. */
  excludedWorkspaceIds?: pulumi.Input<pulumi.Input<string>[]>;
  excludedProjectIds?: pulumi.Input<pulumi.Input<string>[]>;
  /**
   * Sentinel parameters by key. A value given as a Pulumi secret (`pulumi.secret(...)`, `config.requireSecret`) is
   * sent as sensitive: the service never shows it again, and state holds only its SHA-256.
   */
  parameters?: pulumi.Input<Record<string, pulumi.Input<string>>>;
  /** Sentinel: run in the agent (policy evaluations); OPA sets always do. */
  agentEnabled?: pulumi.Input<boolean>;
  /** Whether a failed policy may be overridden (OPA sets, and Sentinel sets with `agentEnabled`). */
  overridable?: pulumi.Input<boolean>;
  /** The Sentinel or OPA runtime version; default `latest`. An OPA `0.x` version means the folder's Rego is v0. */
  policyToolVersion?: pulumi.Input<string>;
  /** Take over a set that already has this name instead of failing. */
  adoptExisting?: pulumi.Input<boolean>;
  /**
   * Allow a change that weakens the set (a policy of the folder removed or its level lowered, scope narrowed,
   * `overridable` turned on, a policy taken out, a replacement that enforces less), which otherwise fails `pulumi
   * preview`. Stack config `tfe:allowWeakening: true` allows it for every resource, `TFE_ALLOW_WEAKENING=true` for
   * one command.
   */
  allowWeakening?: pulumi.Input<boolean>;
}

export interface PolicySetInputs extends Required<PolicySetScope> {
  organization: string;
  name: string;
  description: string | null;
  kind: PolicyKind;
  directory?: string;
  /** SHA-256 over the folder's paths and bytes (what a version holds); null for a set of policies. */
  contentHash: string | null;
  /** Each policy block's label and level: what a later change is compared with. */
  folderPolicies: Record<string, string>;
  policyIds: string[];
  global: boolean;
  parameters: Record<string, ParameterState>;
  agentEnabled: boolean;
  overridable: boolean | null;
  policyToolVersion: string;
  adoptExisting: boolean;
  allowWeakening: boolean;
}

export interface PolicySetOutputs extends PolicySetInputs {
  policySetId: string;
  currentVersionId: string | null;
  parameterIds: Record<string, string>;
  /** What Pulumi last made the service hold: a refresh that finds otherwise knows the service changed outside. */
  applied?: AppliedScope;
}

/** The part of a set a weakening is judged on, as Pulumi last applied it. */
type AppliedScope = Pick<SetShape, "global" | "overridable" | "policyIds" | keyof PolicySetScope>;
const appliedProperties = ["global", "overridable", "policyIds", ...scopeOptions] as const;

const scopeArgument = { argument: "string list", change: "updates", output: true } as const;
/**
 * Every property of a set, once. `directory` counts by its content hash (the same folder at another path changes
 * nothing on the service); `kind` alone replaces the set, as the service cannot change it.
 */
const policySetProperties = propertyTable<PolicySetArgs>()({
  organization: { argument: "string", change: "replaces", output: true },
  name: { argument: "string", change: "updates", output: true },
  description: { argument: "string", change: "updates", output: true },
  kind: { argument: "string", change: "replaces", output: true },
  directory: { argument: "string", change: "none", output: true },
  contentHash: { change: "updates", output: true },
  folderPolicies: { change: "none", output: true },
  policyIds: { argument: "string list", change: "updates", output: true },
  global: { argument: "boolean", change: "updates", output: true },
  workspaceIds: scopeArgument,
  projectIds: scopeArgument,
  excludedWorkspaceIds: scopeArgument,
  excludedProjectIds: scopeArgument,
  parameters: { argument: "object", change: "updates", output: true },
  agentEnabled: { argument: "boolean", change: "updates", output: true },
  overridable: { argument: "boolean", change: "updates", output: true },
  policyToolVersion: { argument: "string", change: "updates", output: true },
  adoptExisting: { argument: "boolean", change: "none", output: false },
  allowWeakening: { argument: "boolean", change: "none", output: false },
  policySetId: { change: "none", output: true },
  currentVersionId: { change: "none", output: true },
  parameterIds: { change: "none", output: true },
  applied: { change: "none", output: false },
});
const replacingProperties = propertiesThat(policySetProperties, "replaces");
const updatableProperties = propertiesThat(policySetProperties, "updates");

/**
 * Parameter names that hold credentials, word by word (`github_pat`, `webhookUrl`, `api-key`; not `max_tokens`,
 * `author`). Sentinel's configuration cannot mark a parameter sensitive, so the name is what tells: such a value
 * must come as a secret, or it would sit in plain text in the set and in state.
 */
const credentialWords = new Set([
  "token",
  "secret",
  "password",
  "passwd",
  "pwd",
  "passphrase",
  "credential",
  "credentials",
  "pat",
  "auth",
  "bearer",
  "webhook",
  "dsn",
  "apikey",
  "privatekey",
  "accesskey",
  "secretkey",
]);
const keyQualifiers = new Set(["api", "access", "secret", "private", "ssh", "signing", "encryption", "client"]);

export function namesCredential(key: string): boolean {
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
  return words.some(
    (word, index) =>
      credentialWords.has(word) || (word === "key" && index > 0 && keyQualifiers.has(words[index - 1] as string)),
  );
}

/** What checking the folder found: whether it could be read (a weakening can be judged only then), and what. */
interface FolderCheck {
  readable: boolean;
  kind?: PolicyKind;
  summary?: PolicySetFolderSummary;
}

export class PolicySetProvider extends ContextProvider implements pulumi.dynamic.ResourceProvider {
  /** Ids of workspaces and projects found this operation: each is read once however many sets name it. */
  private readonly foundScopeIds = new Map<string, Promise<boolean>>();
  /**
   * Archives packed at check, by content hash: `up` uploads exactly what its check hashed and sized, however the
   * folder changes meanwhile. The provider process lives for one operation, so nothing here outlives it.
   */
  private readonly packedArchives = new Map<string, Buffer>();

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
    const kindKnown = news.kind === undefined || isUnknown(news.kind) || policyKinds.includes(news.kind as PolicyKind);
    if (!kindKnown) {
      failures.push({
        property: "kind",
        reason: `kind ${JSON.stringify(news.kind)} is not valid: use "sentinel" or "opa"`,
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
    checkDirectoryKept(failures, olds, news);
    const folder: FolderCheck = kindKnown ? await this.checkFolder(failures, olds, news, inputs) : { readable: false };
    const kind = (news.kind ?? folder.kind ?? "sentinel") as PolicyKind;
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
    inputs.overridable = kind === "sentinel" && !inputs.agentEnabled ? null : news.overridable === true;
    inputs.parameters = this.checkParameters(failures, kind, news.parameters, folder.summary);
    await this.checkScopeIdsExist(failures, olds, inputs);
    await this.checkWeakening(failures, olds, inputs, folder.readable);
    return { inputs, failures };
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
    inputs.contentHash = null;
    inputs.folderPolicies = {};
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
      prepared = await prepareFolder(path, news.kind as PolicyKind | undefined);
    } catch (error) {
      fail((error as Error).message);
      return { readable: false };
    }
    for (const problem of prepared.problems) fail(problem);
    if (prepared.problems.length > 0) return { readable: false };
    const { files, kind } = prepared;
    inputs.contentHash = prepared.contentHash;
    if (prepared.contentHash !== olds.contentHash) {
      // What a reviewer should see: the upload carries these files from outside the folder.
      const label = `policy set "${String(news.name)}": directory ${directory}`;
      for (const link of prepared.externalLinks) {
        console.error(
          `note: ${label}: ${link.path} links out of the folder, to ${link.target}; its content is uploaded`,
        );
      }
      for (const brought of prepared.broughtIn) {
        console.error(
          `note: ${label}: source ${brought.source} is outside the folder; ${brought.from} is uploaded as ${brought.path}`,
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
    try {
      const summary = await readPolicySetFolder(files, kind);
      inputs.folderPolicies = summary.policies;
      if (kind === "opa") {
        await this.checkRego(fail, path, files, String(news.policyToolVersion ?? "latest"), summary.queries);
      }
      return { readable: true, kind, summary };
    } catch (error) {
      if (!(error instanceof PolicySetFolderError)) throw error;
      for (const problem of error.problems) fail(problem);
      return { readable: false, kind };
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
    kind: PolicyKind,
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
        console.error(
          `warning: policy set: parameters.${key}: the folder declares no param "${key}" in sentinel.hcl, so no policy reads it`,
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
    folderReadable: boolean,
  ) {
    if (olds.kind === undefined || isUnknown(inputs.kind)) return;
    const [fromKind, toKind] = [olds.kind as PolicyKind, inputs.kind as PolicyKind];
    const weakenings: string[] = [];
    if (fromKind !== toKind) weakenings.push(`kind goes from ${fromKind} to ${toKind}, which replaces the set`);
    const oldPolicies = (olds.folderPolicies ?? {}) as Record<string, string>;
    const newPolicies = (inputs.folderPolicies ?? {}) as Record<string, string>;
    // A folder that cannot be read says so on its own; its policies are not "removed".
    if (folderReadable && inputs.contentHash !== null && !isUnknown(inputs.contentHash)) {
      for (const [label, level] of Object.entries(oldPolicies)) {
        const now = Object.hasOwn(newPolicies, label) ? newPolicies[label] : undefined;
        if (now === undefined) weakenings.push(`policy "${label}" is removed from the folder`);
        else if (weakensEnforcement(fromKind, level, now, toKind)) {
          weakenings.push(`policy "${label}" goes from ${level} to ${now}`);
        }
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
    this.context.refuseWeakeningUnlessAllowed(failures, {
      subject: `policy set "${String(inputs.name)}"`,
      weakenings,
      allowedOnResource: inputs.allowWeakening === true,
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

  /** The archive check packed for this content, or the folder packed now when it still holds that content. */
  private async archiveFor(inputs: PolicySetInputs): Promise<Buffer> {
    const packed = inputs.contentHash ? this.packedArchives.get(inputs.contentHash) : undefined;
    if (packed) return packed;
    const { files, contentHash } = await prepareFolder(resolve(inputs.directory as string), inputs.kind);
    if (contentHash !== inputs.contentHash) {
      throw new Error(
        `directory ${inputs.directory} changed after preview checked it: run up again, which checks and uploads what ` +
          "it holds then",
      );
    }
    return packFiles(files);
  }

  async diff(_id: string, olds: PolicySetOutputs, news: PolicySetInputs): Promise<pulumi.dynamic.DiffResult> {
    const comparable = {
      ...news,
      parameters: isUnknown(news.parameters) ? news.parameters : storedParameters(news.parameters ?? {}),
    };
    const replaces = changedProperties(olds, comparable, replacingProperties);
    const updates = changedProperties(olds, comparable, updatableProperties);
    // Names are unique in an organization: a replacement that keeps the name must delete the old one first.
    const deleteBeforeReplace =
      replaces.length > 0 && olds.name === news.name && olds.organization === news.organization;
    if (deleteBeforeReplace) {
      console.error(
        `warning: policy set "${news.name}" is replaced (${replaces.join(", ")} changed): the service holds one set ` +
          "of a name, so the old set is deleted before the new one is made, and no set of that name enforces in " +
          "between. To make the new set first, give it another name in the same change",
      );
    }
    return { changes: replaces.length + updates.length > 0, replaces, deleteBeforeReplace };
  }

  async create(inputs: PolicySetInputs): Promise<pulumi.dynamic.CreateResult> {
    const client = this.context.client;
    const { policySet, createdHere } = await this.createOrAdopt(client, inputs);
    const held = {
      shape: shapeOf(policySet, inputs.policyToolVersion),
      parameters: {} as Record<string, ParameterState>,
      parameterIds: {} as Record<string, string>,
      currentVersionId: policySet.currentVersionId,
      contentHash: null as string | null,
      folderPolicies: {} as Record<string, string>,
    };
    try {
      if (!createdHere) {
        // An adopted set's memberships that this resource does not declare belong to whoever put them there.
        const from = { ...held.shape, policyIds: held.shape.policyIds.filter((id) => inputs.policyIds.includes(id)) };
        held.shape = await changeSet(client, policySet.id, from, shapeOfInputs(inputs));
      }
      const onService = createdHere ? [] : await client.policySets.listParameters(policySet.id);
      Object.assign(held, await syncParameters(client, policySet.id, onService, {}, inputs.parameters));
      if (inputs.directory !== undefined) {
        held.currentVersionId = await uploadVersion(
          client,
          policySet.id,
          await this.archiveFor(inputs),
          labelOf(inputs),
        );
        held.contentHash = inputs.contentHash;
        held.folderPolicies = inputs.folderPolicies;
      }
      return { id: policySet.id, outs: outputsOf(inputs, policySet.id, held) };
    } catch (failure) {
      const error = absorb(held, failure);
      if (!createdHere) throw partialFailure(error, policySet.id, outputsOf(inputs, policySet.id, held));
      // A set made by this create that could not be made whole goes again, so nothing is left behind; where the
      // delete fails too, the state keeps the set, so nothing is orphaned either.
      try {
        await client.policySets.delete(policySet.id);
      } catch (deleteError) {
        throw partialFailure(
          new Error(
            `policy set "${inputs.name}": ${error.message}; deleting the set just created failed too ` +
              `(${(deleteError as Error).message}), so the state keeps it and the next up completes it`,
          ),
          policySet.id,
          outputsOf(inputs, policySet.id, held),
        );
      }
      throw new Error(
        `policy set "${inputs.name}": ${error.message}; the policy set just created was deleted again, so nothing is left behind`,
      );
    }
  }

  private async createOrAdopt(
    client: TfeClient,
    inputs: PolicySetInputs,
  ): Promise<{ policySet: ServicePolicySet; createdHere: boolean }> {
    if (!inputs.adoptExisting) {
      try {
        const policySet = await createSetWithoutDuplicate(client, inputs.organization, createOptions(inputs));
        this.context.claimed.set(policySet.id, "created");
        return { policySet, createdHere: true };
      } catch (error) {
        if (!(error instanceof TfeApiError && error.status === 422 && error.invalidAttributes.includes("name")))
          throw error;
        const existing = await findSetByName(client, inputs.organization, inputs.name);
        throw new Error(
          `a policy set named "${inputs.name}" already exists in organization "${inputs.organization}"` +
            `${existing ? ` (${existing.id})` : ""}, and this resource did not create it. If the resource was renamed, ` +
            "give it its old name with the aliases resource option; to manage that set here, set adoptExisting: true; " +
            "if a killed pulumi up created it, run npx tfe-governance pending-creates --apply; else choose another name",
        );
      }
    }
    const existing = await findSetByName(client, inputs.organization, inputs.name);
    if (!existing) return this.createOrAdopt(client, { ...inputs, adoptExisting: false });
    if (this.context.claimed.has(existing.id)) {
      throw new Error(
        `policy set "${inputs.name}" (${existing.id}) is already managed by another resource of this stack`,
      );
    }
    if (existing.kind !== inputs.kind) {
      throw new Error(
        `cannot adopt policy set "${inputs.name}": it is a ${existing.kind} set and kind is ${inputs.kind}`,
      );
    }
    this.context.claimed.set(existing.id, "adopted");
    // A list answer may leave relationships out: read the set whole before comparing.
    return { policySet: await client.policySets.read(existing.id), createdHere: false };
  }

  async read(id: string, props: Partial<PolicySetOutputs>): Promise<pulumi.dynamic.ReadResult> {
    const client = this.context.client;
    let policySet: ServicePolicySet;
    try {
      policySet = await client.policySets.read(id);
    } catch (error) {
      if (!(error instanceof TfeApiError && error.status === 404)) throw error;
      if (await answersNotFound(policySetAccess(client), props.organization)) return {};
      throw new Error(
        `reading policy set ${id} failed: the service answered 404, and this token cannot list the policy sets of ` +
          `organization "${props.organization}" either, so the token may lack access rather than the set be gone; ` +
          "it stays in state. Check tfe:token, TFE_TOKEN or the credentials file",
      );
    }
    const parameters = policySet.kind === "sentinel" ? await client.policySets.listParameters(id) : [];
    const declared = props as PolicySetOutputs;
    const shape = shapeOf(policySet, declared.policyToolVersion ?? "latest");
    // The set owns the memberships it declares: a policy another resource (a Policy's policySetIds) put in the set
    // is not drift here; one the set declared and that left it outside Pulumi is.
    if (Array.isArray(declared.policyIds))
      shape.policyIds = shape.policyIds.filter((policyId) => declared.policyIds.includes(policyId));
    const recorded = declared.parameters ?? {};
    const held = {
      shape,
      parameters: Object.fromEntries(
        parameters.map(({ key, value, sensitive }) => [
          key,
          // A sensitive value never comes back: the state's hash stands for it, or nothing where state had none.
          sensitive ? { value: recorded[key]?.sensitive ? recorded[key].value : "", sensitive } : { value, sensitive },
        ]),
      ),
      parameterIds: Object.fromEntries(parameters.map(({ key, id: parameterId }) => [key, parameterId])),
      currentVersionId: policySet.currentVersionId,
      // The folder's hash and policies stand for the version Pulumi uploaded; a version uploaded outside Pulumi
      // moves the hash (the next up uploads the folder again) and keeps the policies as the base of comparison.
      contentHash:
        declared.currentVersionId !== undefined && policySet.currentVersionId !== declared.currentVersionId
          ? `changed outside Pulumi: current version ${policySet.currentVersionId ?? "none"}`
          : (declared.contentHash ?? null),
      folderPolicies: declared.folderPolicies ?? {},
    };
    const declaredInputs = { ...declared, kind: policySet.kind } as PolicySetInputs;
    const outs = outputsOf(declaredInputs, id, held, declared.applied);
    const { policySetId: _id, currentVersionId: _version, parameterIds: _ids, ...inputs } = outs;
    return { id, props: outs, inputs };
  }

  async update(id: string, olds: PolicySetOutputs, news: PolicySetInputs): Promise<pulumi.dynamic.UpdateResult> {
    const client = this.context.client;
    const held = {
      shape: shapeOfInputs(olds),
      parameters: olds.parameters ?? {},
      parameterIds: olds.parameterIds ?? {},
      currentVersionId: olds.currentVersionId,
      contentHash: olds.contentHash,
      folderPolicies: olds.folderPolicies ?? {},
    };
    try {
      // The folder goes first: an errored version fails the update before anything else changed, and state keeps
      // the last ready version.
      if (news.directory !== undefined && olds.contentHash !== news.contentHash) {
        held.currentVersionId = await uploadVersion(client, id, await this.archiveFor(news), labelOf(news));
        held.contentHash = news.contentHash;
        held.folderPolicies = news.folderPolicies;
      }
      held.shape = await changeSet(client, id, held.shape, shapeOfInputs(news));
      if (
        !sameValue(held.parameters, storedParameters(news.parameters)) ||
        !sameValue(Object.keys(held.parameterIds).sort(), Object.keys(held.parameters).sort())
      ) {
        const onService = await client.policySets.listParameters(id);
        Object.assign(held, await syncParameters(client, id, onService, held.parameters, news.parameters));
      }
      return { outs: outputsOf(news, id, held) };
    } catch (failure) {
      const error = absorb(held, failure);
      // What went through is in the state: the next up reads from there and sends only what is left.
      throw partialFailure(error, id, outputsOf(news, id, held));
    }
  }

  async delete(id: string, props: Partial<PolicySetOutputs> = {}): Promise<void> {
    if (this.context.adoptedThisOperation(id)) return;
    await deleteConfirmingGone(policySetAccess(this.context.client), id, props.organization);
  }
}

/**
 * Removing `directory` from a set that holds versions would send nothing (the service keeps evaluating its current
 * version) and blank the record a later weakening is compared with. Refused, with what to do instead.
 */
function checkDirectoryKept(failures: CheckFailure[], olds: Record<string, unknown>, news: Record<string, unknown>) {
  const versioned = typeof olds.contentHash === "string" || typeof olds.directory === "string";
  if (!versioned || news.directory !== undefined) return;
  failures.push({
    property: "directory",
    reason:
      `directory cannot be removed from a set that holds versions: the service keeps evaluating its current ` +
      `version (from ${String(olds.directory ?? "the folder")}) whatever the program says. To change its policies, ` +
      "change the folder; to stop enforcing it, remove the PolicySet resource (which deletes the set); to hold " +
      "individual policies instead, declare a new PolicySet",
  });
}

/** A list of service ids, with what it must look like. */
const idShapes: Record<"policyIds" | keyof PolicySetScope, IdShape> = {
  policyIds: { what: "policy", pattern: /^pol-[A-Za-z0-9]+$/, example: "pol-u3S5p2Uwk21keu1s" },
  workspaceIds: { what: "workspace", pattern: /^ws-[A-Za-z0-9]+$/, example: "ws-3yVQZvHzf5j3WRJ1" },
  excludedWorkspaceIds: { what: "workspace", pattern: /^ws-[A-Za-z0-9]+$/, example: "ws-3yVQZvHzf5j3WRJ1" },
  projectIds: { what: "project", pattern: /^prj-[A-Za-z0-9]+$/, example: "prj-3yVQZvHzf5j3WRJ1" },
  excludedProjectIds: { what: "project", pattern: /^prj-[A-Za-z0-9]+$/, example: "prj-3yVQZvHzf5j3WRJ1" },
};

function createOptions(inputs: PolicySetInputs): CreatePolicySetOptions {
  return {
    name: inputs.name,
    kind: inputs.kind,
    description: inputs.description,
    global: inputs.global,
    ...(inputs.overridable !== null ? { overridable: inputs.overridable } : {}),
    agentEnabled: inputs.agentEnabled,
    policyToolVersion: inputs.policyToolVersion,
    policyIds: inputs.policyIds,
    ...Object.fromEntries(scopeOptions.map((option) => [option, inputs[option]])),
  };
}

function shapeOfInputs(inputs: Partial<PolicySetInputs>): SetShape {
  const list = (ids: string[] | undefined) => [...(ids ?? [])].sort();
  return {
    name: inputs.name as string,
    description: inputs.description ?? null,
    global: inputs.global ?? false,
    agentEnabled: inputs.agentEnabled ?? false,
    overridable: inputs.overridable ?? null,
    policyToolVersion: inputs.policyToolVersion ?? "latest",
    policyIds: list(inputs.policyIds),
    workspaceIds: list(inputs.workspaceIds),
    projectIds: list(inputs.projectIds),
    excludedWorkspaceIds: list(inputs.excludedWorkspaceIds),
    excludedProjectIds: list(inputs.excludedProjectIds),
  };
}

/** Declared parameters as state keeps them: each sensitive value as its hash. */
function storedParameters(parameters: Record<string, ParameterState>): Record<string, ParameterState> {
  return Object.fromEntries(Object.entries(parameters).map(([key, parameter]) => [key, storedParameter(parameter)]));
}

/** The state of a set: the declaration's own settings, with what the service holds for everything it reports. */
function outputsOf(
  declared: PolicySetInputs,
  policySetId: string,
  held: {
    shape: SetShape;
    parameters: Record<string, ParameterState>;
    parameterIds: Record<string, string>;
    currentVersionId: string | null;
    contentHash: string | null;
    folderPolicies: Record<string, string>;
  },
  applied?: AppliedScope,
): PolicySetOutputs {
  return {
    organization: declared.organization,
    kind: declared.kind,
    ...(declared.directory !== undefined ? { directory: declared.directory } : {}),
    ...held.shape,
    contentHash: held.contentHash,
    folderPolicies: held.folderPolicies,
    parameters: held.parameters,
    adoptExisting: declared.adoptExisting ?? false,
    allowWeakening: declared.allowWeakening ?? false,
    policySetId,
    currentVersionId: held.currentVersionId,
    parameterIds: held.parameterIds,
    applied: applied ?? pickApplied(held.shape),
  };
}

function pickApplied(shape: SetShape): AppliedScope {
  return Object.fromEntries(appliedProperties.map((property) => [property, shape[property]])) as AppliedScope;
}

type Held = Parameters<typeof outputsOf>[2];

/** Takes into `held` what a failed sequence of requests made the service hold; answers the failure's cause. */
function absorb(held: Held, failure: unknown): Error {
  if (!(failure instanceof PartialChange)) return failure as Error;
  if ("name" in failure.held) held.shape = failure.held as SetShape;
  else Object.assign(held, failure.held);
  return failure.cause as Error;
}

/** A folder as it is uploaded: the files go-slug packs, with sources outside the folder brought in. */
interface PreparedFolder extends WithOutsideSources {
  kind: PolicyKind;
  contentHash: string;
  externalLinks: { path: string; target: string }[];
}

async function prepareFolder(path: string, declared: PolicyKind | undefined): Promise<PreparedFolder> {
  const collected = collectFolder(path);
  const found = policyKinds.filter((kind) => collected.files.has(configFileOfKind[kind]));
  const kind = declared ?? (found.length === 1 ? (found[0] as PolicyKind) : "sentinel");
  const withOutside = await bringInOutsideSources(path, collected.files, kind);
  return { ...withOutside, kind, contentHash: hashFiles(withOutside.files), externalLinks: collected.externalLinks };
}

function labelOf(inputs: PolicySetInputs) {
  return { name: inputs.name, directory: inputs.directory as string };
}

/** The policy sets API, as {@link deleteConfirmingGone} and {@link answersNotFound} reach it. */
function policySetAccess(client: TfeClient): ObjectAccess {
  return {
    what: "policy set",
    remove: (id) => client.policySets.delete(id),
    read: (id) => client.policySets.read(id),
    listOne: (organization) => client.policySets.list(organization, { pageSize: 1 }),
  };
}

/**
 * Each parameter with whether it is a secret, so the provider (which sees plain values) sends secrets as sensitive.
 * Parameters given as one output are all sensitive when that output is a secret.
 */
function parametersWithSensitivity(
  parameters: PolicySetArgs["parameters"],
): pulumi.Input<Record<string, ParameterState>> | undefined {
  if (parameters === undefined) return undefined;
  const secretness = (value: pulumi.Input<unknown>) =>
    pulumi.Output.isInstance(value) ? pulumi.output(pulumi.isSecret(value as pulumi.Output<unknown>)) : false;
  if (pulumi.Output.isInstance(parameters) || parameters instanceof Promise) {
    const whole = pulumi.output(parameters);
    return pulumi
      .all([whole, secretness(whole)])
      .apply(([values, sensitive]) =>
        Object.fromEntries(Object.entries(values ?? {}).map(([key, value]) => [key, { value, sensitive }])),
      );
  }
  return pulumi.all(
    Object.fromEntries(
      Object.entries(parameters).map(([key, value]) => [
        key,
        pulumi.all([value, secretness(value)]).apply(([text, sensitive]) => ({ value: text, sensitive })),
      ]),
    ),
  );
}

/**
 * A policy set of HCP Terraform / Terraform Enterprise, managed by Pulumi: a folder uploaded as a versioned set, or a
 * set of individual policies, with its scope, parameters and runtime. Type token `pulumi-nodejs:dynamic/tfe:PolicySet`.
 */
export class PolicySet extends ShimResource {
  declare readonly organization: pulumi.Output<string>;
  declare readonly name: pulumi.Output<string>;
  declare readonly description: pulumi.Output<string | null>;
  declare readonly kind: pulumi.Output<PolicyKind>;
  declare readonly directory: pulumi.Output<string | undefined>;
  /** SHA-256 over the folder's paths and bytes: what the current version holds. */
  declare readonly contentHash: pulumi.Output<string | null>;
  declare readonly policyIds: pulumi.Output<string[]>;
  declare readonly global: pulumi.Output<boolean>;
  declare readonly workspaceIds: pulumi.Output<string[]>;
  declare readonly projectIds: pulumi.Output<string[]>;
  declare readonly excludedWorkspaceIds: pulumi.Output<string[]>;
  declare readonly excludedProjectIds: pulumi.Output<string[]>;
  declare readonly agentEnabled: pulumi.Output<boolean>;
  declare readonly overridable: pulumi.Output<boolean | null>;
  declare readonly policyToolVersion: pulumi.Output<string>;
  /**
   * The service's id of the set (`polset-...`); also the resource's id, and known at preview whenever the set is
   * not being replaced, so a `Policy.policySetIds` that names it previews exactly.
   */
  declare readonly policySetId: pulumi.Output<string>;
  /** The version the set evaluates now (the last ready one); null for a set of policies. */
  declare readonly currentVersionId: pulumi.Output<string | null>;

  constructor(name: string, args: PolicySetArgs, opts?: pulumi.CustomResourceOptions) {
    const outputs = outputSlots(policySetProperties);
    const props = opts?.id
      ? outputs
      : {
          ...outputs,
          ...args,
          organization: args.organization ?? defaultOrganization(),
          name: args.name ?? name,
          parameters: parametersWithSensitivity(args.parameters),
        };
    super("PolicySet", name, props, opts);
    // The engine previews an update of a dynamic resource with its inputs as its outputs, so an output such as
    // policySetId would be unknown there; the resource's id is not.
    (this as { policySetId: pulumi.Output<string> }).policySetId = this.id;
  }

  /** Reads an existing policy set by id into the program, without managing it. */
  static get(name: string, id: pulumi.Input<string>, opts?: pulumi.CustomResourceOptions): PolicySet {
    return new PolicySet(name, {}, { ...opts, id });
  }
}
