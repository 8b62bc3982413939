import { createHash } from "node:crypto";
import { statSync } from "node:fs";
import { resolve } from "node:path";
import * as pulumi from "@pulumi/pulumi";
import type { TfeClient } from "../client/client";
import { TfeApiError } from "../client/errors";
import {
  type CreatePolicySetOptions,
  type PolicySetParameter,
  type PolicySetScope,
  type PolicySet as ServicePolicySet,
  scopeRelationshipOf,
  type UpdatePolicySetOptions,
} from "../client/policy-sets";
import { maxNameLength } from "../contract/limits";
import { type PolicyKind, policyKinds, policyNamePattern, weakensEnforcement } from "../contract/policies";
import { maxPolicySetFiles, maxPolicySetUnpackedBytes } from "../contract/policy-sets";
import { collectFolder, packFiles } from "../policy-code/archive";
import { Opa } from "../policy-code/opa";
import {
  configFileOfKind,
  type FolderFiles,
  PolicySetFolderError,
  type PolicySetFolderSummary,
  readPolicySetFolder,
} from "../policy-code/policy-set-folder";
import { argumentFailures, outputSlots, propertiesThat, propertyTable } from "./property-table";
import {
  type CheckFailure,
  ContextProvider,
  changedProperties,
  checkIdList,
  checkOrganization,
  defaultOrganization,
  type IdShape,
  isUnknown,
  sameValue,
} from "./provider-context";
import { ShimResource } from "./shim";

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
   * its content changes. Relative to the program's directory. Not with `policyIds`.
   */
  directory?: pulumi.Input<string>;
  /** A set of individual policies (`Policy` resources' `policyId`). Not with `directory`. */
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
   * `overridable` turned on, a policy taken out), which otherwise fails `pulumi preview`. Stack config
   * `tfe:allowWeakening: true` allows it for every resource.
   */
  allowWeakening?: pulumi.Input<boolean>;
}

/** A parameter as the provider holds it: state keeps a sensitive value as `sha256:<hex>` only. */
export interface ParameterState {
  value: string;
  sensitive: boolean;
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
}

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
});
const replacingProperties = propertiesThat(policySetProperties, "replaces");
const updatableProperties = propertiesThat(policySetProperties, "updates");
const scopeOptions = Object.keys(scopeRelationshipOf) as (keyof PolicySetScope)[];

/** How long `up` waits for an uploaded version to be read; `TFE_POLICY_SET_VERSION_TIMEOUT` (seconds) changes it. */
function versionTimeoutMs(): number {
  const seconds = Number(process.env.TFE_POLICY_SET_VERSION_TIMEOUT);
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : 10 * 60 * 1000;
}

/**
 * Parameter names that hold credentials. Sentinel's configuration cannot mark a parameter sensitive, so the name is
 * what tells: such a value must come as a secret, or it would sit in plain text in the set and in state.
 */
const credentialName = /token|secret|password|passwd|credential|private[_-]?key|api[_-]?key/i;

export function hashParameterValue(value: string): string {
  return `sha256:${createHash("sha256").update(value).digest("hex")}`;
}

/** Parameters as state keeps them: a sensitive value as its hash. */
function storedParameters(parameters: Record<string, ParameterState>): Record<string, ParameterState> {
  return Object.fromEntries(
    Object.entries(parameters).map(([key, { value, sensitive }]) => [
      key,
      { value: sensitive && !value.startsWith("sha256:") ? hashParameterValue(value) : value, sensitive },
    ]),
  );
}

/** The Rego dialect of the set's OPA runtime: `0.x` evaluates v0, anything else (`latest`, `1.x`) v1. */
function regoVersionOf(policyToolVersion: string): "v0" | "v1" {
  return /^v?0\./.test(policyToolVersion) ? "v0" : "v1";
}

export class PolicySetProvider extends ContextProvider implements pulumi.dynamic.ResourceProvider {
  /** Every input rule and the whole folder, before any request; unknown values (preview) pass. */
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
    if (news.kind !== undefined && !isUnknown(news.kind) && !policyKinds.includes(news.kind as PolicyKind)) {
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
    const folder = await this.checkFolder(failures, news, inputs);
    const kind = (news.kind ?? folder?.kind ?? "sentinel") as PolicyKind;
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
    inputs.parameters = this.checkParameters(failures, kind, news.parameters, folder?.summary);
    this.checkWeakening(failures, olds, inputs);
    return { inputs, failures };
  }

  /** Reads the folder as the service will, and checks its Rego with `opa`; sets `contentHash` and `folderPolicies`. */
  private async checkFolder(
    failures: CheckFailure[],
    news: Record<string, unknown>,
    inputs: Record<string, unknown>,
  ): Promise<{ kind: PolicyKind; summary: PolicySetFolderSummary } | undefined> {
    inputs.contentHash = null;
    inputs.folderPolicies = {};
    const directory = news.directory;
    if (directory === undefined || isUnknown(directory)) {
      if (isUnknown(directory)) inputs.contentHash = directory;
      return undefined;
    }
    const fail = (reason: string) =>
      failures.push({ property: "directory", reason: `directory ${String(directory)}: ${reason}` });
    if (typeof directory !== "string" || directory === "") {
      fail("must be the path of the policy set's folder");
      return undefined;
    }
    const path = resolve(directory);
    if (!statSync(path, { throwIfNoEntry: false })?.isDirectory()) {
      fail(`does not exist (resolved to ${path}, relative to the program's directory)`);
      return undefined;
    }
    let files: FolderFiles;
    try {
      const collected = collectFolder(path);
      files = collected.files;
      inputs.contentHash = collected.contentHash;
    } catch (error) {
      fail((error as Error).message);
      return undefined;
    }
    const bytes = [...files.values()].reduce((total, file) => total + file.byteLength, 0);
    if (bytes > maxPolicySetUnpackedBytes || files.size > maxPolicySetFiles) {
      fail(
        `holds ${files.size} files and ${bytes} bytes; a version holds at most ${maxPolicySetFiles} files and ` +
          `${maxPolicySetUnpackedBytes} bytes: leave the rest out with a .terraformignore`,
      );
      return undefined;
    }
    const declared = news.kind as PolicyKind | undefined;
    const found = policyKinds.filter((kind) => files.has(configFileOfKind[kind]));
    const kind = declared ?? (found.length === 1 ? (found[0] as PolicyKind) : "sentinel");
    try {
      const summary = await readPolicySetFolder(files, kind);
      inputs.folderPolicies = summary.policies;
      if (kind === "opa") await this.checkRego(fail, path, files, String(news.policyToolVersion ?? "latest"));
      return { kind, summary };
    } catch (error) {
      if (!(error instanceof PolicySetFolderError)) throw error;
      for (const problem of error.problems) fail(problem);
      return undefined;
    }
  }

  /** `opa check` of every Rego file of the folder together, so packages shared across files resolve. */
  private async checkRego(fail: (reason: string) => void, folder: string, files: FolderFiles, toolVersion: string) {
    const opa = await Opa.find();
    if (!opa) {
      console.error("warning: Rego was not checked: no opa binary on PATH. Install OPA to check it at preview");
      return;
    }
    const rego = [...files.keys()].filter((path) => path.endsWith(".rego") && !path.endsWith("_test.rego"));
    const regoVersion = regoVersionOf(toolVersion);
    for (const problem of await opa.check(rego, regoVersion, folder)) {
      const where = problem.location ? `${problem.location.file}:${problem.location.row}: ` : "";
      fail(
        `${where}${problem.code}: ${problem.message} (opa check, Rego ${regoVersion} for policyToolVersion ${toolVersion})`,
      );
    }
  }

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
      failures.push({ property: "parameters", reason: "parameters are for Sentinel sets: OPA sets take none" });
    }
    const checked: Record<string, unknown> = {};
    for (const [key, entry] of Object.entries(parameters)) {
      const { value, sensitive } = (entry ?? {}) as Partial<ParameterState>;
      if (isUnknown(entry) || isUnknown(value)) {
        checked[key] = entry;
        continue;
      }
      if (typeof value !== "string") {
        failures.push({ property: "parameters", reason: `parameters.${key} must be a string` });
        continue;
      }
      checked[key] = { value, sensitive: sensitive === true };
      if (folder && !folder.params.includes(key)) {
        console.error(
          `warning: parameters.${key}: the folder declares no param "${key}" in sentinel.hcl, so no policy reads it`,
        );
      }
      if (credentialName.test(key) && sensitive !== true) {
        failures.push({
          property: "parameters",
          reason: `parameters.${key} names a credential, and its value is no secret: pass it as pulumi.secret(...) or config.requireSecret(...), so it is sent as sensitive and never stored in plain text`,
        });
      }
    }
    return checked;
  }

  /** Every weakening of the change at once, refused unless allowed. */
  private checkWeakening(failures: CheckFailure[], olds: Record<string, unknown>, inputs: Record<string, unknown>) {
    if (olds.kind === undefined || olds.kind !== inputs.kind) return;
    const kind = inputs.kind as PolicyKind;
    const weakenings: string[] = [];
    const oldPolicies = (olds.folderPolicies ?? {}) as Record<string, string>;
    const newPolicies = (inputs.folderPolicies ?? {}) as Record<string, string>;
    if (inputs.contentHash !== null && !isUnknown(inputs.contentHash)) {
      for (const [label, level] of Object.entries(oldPolicies)) {
        const now = newPolicies[label];
        if (now === undefined) weakenings.push(`policy "${label}" is removed from the folder`);
        else if (weakensEnforcement(kind, level, now))
          weakenings.push(`policy "${label}" goes from ${level} to ${now}`);
      }
    }
    const removed = (property: string) => {
      const [before, after] = [olds[property], inputs[property]];
      if (!Array.isArray(before) || !Array.isArray(after) || after.some(isUnknown)) return [];
      return before.filter((id) => !after.includes(id));
    };
    if (olds.global === true && inputs.global === false) weakenings.push("global is turned off");
    for (const property of ["workspaceIds", "projectIds", "policyIds"]) {
      const gone = removed(property);
      if (gone.length > 0) weakenings.push(`${property} loses ${gone.join(", ")}`);
    }
    for (const property of ["excludedWorkspaceIds", "excludedProjectIds"]) {
      const added = addedIds(olds[property], inputs[property]);
      if (added.length > 0) weakenings.push(`${property} gains ${added.join(", ")}`);
    }
    if (olds.overridable !== true && inputs.overridable === true) weakenings.push("overridable is turned on");
    if (weakenings.length === 0) return;
    this.context.refuseWeakeningUnlessAllowed(failures, {
      property: "allowWeakening",
      change: `policy set "${String(inputs.name)}" is weakened: ${weakenings.join("; ")}`,
      allowedOnResource: inputs.allowWeakening === true,
      resource: "the resource",
    });
  }

  async diff(_id: string, olds: PolicySetOutputs, news: PolicySetInputs): Promise<pulumi.dynamic.DiffResult> {
    const comparable = {
      ...news,
      parameters: isUnknown(news.parameters) ? news.parameters : storedParameters(news.parameters ?? {}),
    };
    const replaces = changedProperties(olds, comparable, replacingProperties);
    const updates = changedProperties(olds, comparable, updatableProperties);
    return {
      changes: replaces.length + updates.length > 0,
      replaces,
      // Names are unique in an organization: a replacement that keeps the name must delete the old one first.
      deleteBeforeReplace: replaces.length > 0 && olds.name === news.name && olds.organization === news.organization,
    };
  }

  async create(inputs: PolicySetInputs): Promise<pulumi.dynamic.CreateResult> {
    const client = this.context.client;
    const { policySet, createdHere, parameters, parameterIds: heldIds } = await this.createOrAdopt(client, inputs);
    try {
      const parameterIds = await syncParameters(client, policySet.id, parameters, heldIds, inputs.parameters);
      const currentVersionId =
        inputs.directory === undefined ? policySet.currentVersionId : await uploadFolder(client, policySet.id, inputs);
      return { id: policySet.id, outs: toOutputs(inputs, policySet.id, currentVersionId, parameterIds) };
    } catch (error) {
      if (!createdHere) throw error;
      const outcome = await client.policySets.delete(policySet.id).then(
        () => "the policy set just created was deleted again, so nothing is left behind",
        (deleteError: Error) =>
          `deleting it again failed too (${deleteError.message}): delete policy set ${policySet.id}, or set adoptExisting: true`,
      );
      throw new Error(`policy set "${inputs.name}": ${(error as Error).message}; ${outcome}`);
    }
  }

  private async createOrAdopt(client: TfeClient, inputs: PolicySetInputs): Promise<Adopted> {
    if (!inputs.adoptExisting) {
      try {
        const policySet = await client.policySets.create(inputs.organization, createOptions(inputs));
        this.context.claimed.set(policySet.id, "created");
        return { policySet, createdHere: true, parameters: {}, parameterIds: {} };
      } catch (error) {
        if (!(error instanceof TfeApiError && error.status === 422 && error.invalidAttributes.includes("name")))
          throw error;
        const existing = await findByName(client, inputs.organization, inputs.name);
        throw new Error(
          `a policy set named "${inputs.name}" already exists in organization "${inputs.organization}"` +
            `${existing ? ` (${existing.id})` : ""}, and this resource did not create it. If the resource was renamed, ` +
            "give it its old name with the aliases resource option; to manage that set here, set adoptExisting: true; " +
            "else choose another name",
        );
      }
    }
    const existing = await findByName(client, inputs.organization, inputs.name);
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
    await syncSettingsAndScope(client, existing.id, heldInputs(existing, inputs, {}), inputs);
    // The set's parameters are taken over: the declared ones are written, the others deleted.
    const parameters = await client.policySets.listParameters(existing.id);
    return {
      policySet: existing,
      createdHere: false,
      parameters: parameterStates(parameters, {}),
      parameterIds: idsOf(parameters),
    };
  }

  async read(id: string, props: Partial<PolicySetOutputs>): Promise<pulumi.dynamic.ReadResult> {
    const client = this.context.client;
    let policySet: ServicePolicySet;
    try {
      policySet = await client.policySets.read(id);
    } catch (error) {
      if (error instanceof TfeApiError && error.status === 404) return {};
      throw error;
    }
    const parameters = policySet.kind === "sentinel" ? await client.policySets.listParameters(id) : [];
    const declared = props as PolicySetOutputs;
    const held = heldInputs(policySet, declared, parameterStates(parameters, declared.parameters ?? {}));
    // A version uploaded outside Pulumi: the folder's hash no longer says what the set holds, so the next up uploads
    // the folder again.
    if (props.currentVersionId !== undefined && policySet.currentVersionId !== props.currentVersionId) {
      held.contentHash = `changed outside Pulumi: current version ${policySet.currentVersionId ?? "none"}`;
    }
    const outs = toOutputs(held, id, policySet.currentVersionId, idsOf(parameters));
    const { policySetId: _id, currentVersionId: _version, parameterIds: _ids, ...inputs } = outs;
    return { id, props: outs, inputs };
  }

  async update(id: string, olds: PolicySetOutputs, news: PolicySetInputs): Promise<pulumi.dynamic.UpdateResult> {
    const client = this.context.client;
    // The folder goes first: an errored version fails the update before anything else changed, and state keeps the
    // last ready version.
    const currentVersionId =
      news.directory !== undefined && olds.contentHash !== news.contentHash
        ? await uploadFolder(client, id, news)
        : olds.currentVersionId;
    await syncSettingsAndScope(client, id, olds, news);
    const parameterIds = await syncParameters(
      client,
      id,
      olds.parameters ?? {},
      olds.parameterIds ?? {},
      news.parameters,
    );
    return { outs: toOutputs(news, id, currentVersionId, parameterIds) };
  }

  async delete(id: string): Promise<void> {
    if (this.context.adoptedThisOperation(id)) return;
    try {
      await this.context.client.policySets.delete(id);
    } catch (error) {
      if (!(error instanceof TfeApiError && error.status === 404)) throw error;
    }
  }
}

interface Adopted {
  policySet: ServicePolicySet;
  createdHere: boolean;
  parameters: Record<string, ParameterState>;
  parameterIds: Record<string, string>;
}

/** What the ids of each list argument look like. */
const idShapes: Record<"policyIds" | keyof PolicySetScope, IdShape> = {
  policyIds: { what: "policy", pattern: /^pol-[A-Za-z0-9]+$/, example: "pol-u3S5p2Uwk21keu1s" },
  workspaceIds: { what: "workspace", pattern: /^ws-[A-Za-z0-9]+$/, example: "ws-3yVQZvHzf5j3WRJ1" },
  excludedWorkspaceIds: { what: "workspace", pattern: /^ws-[A-Za-z0-9]+$/, example: "ws-3yVQZvHzf5j3WRJ1" },
  projectIds: { what: "project", pattern: /^prj-[A-Za-z0-9]+$/, example: "prj-3yVQZvHzf5j3WRJ1" },
  excludedProjectIds: { what: "project", pattern: /^prj-[A-Za-z0-9]+$/, example: "prj-3yVQZvHzf5j3WRJ1" },
};

function addedIds(before: unknown, after: unknown): string[] {
  if (!Array.isArray(before) || !Array.isArray(after) || after.some(isUnknown)) return [];
  return (after as string[]).filter((id) => !before.includes(id));
}

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

/** The PATCH for what changed, then each relationship's additions before its removals. */
async function syncSettingsAndScope(
  client: TfeClient,
  id: string,
  held: Omit<PolicySetInputs, "parameters">,
  declared: PolicySetInputs,
): Promise<void> {
  const patch: UpdatePolicySetOptions = {};
  if (held.name !== declared.name) patch.name = declared.name;
  if (!sameValue(held.description, declared.description)) patch.description = declared.description;
  if (held.global !== declared.global) patch.global = declared.global;
  if (held.agentEnabled !== declared.agentEnabled) patch.agentEnabled = declared.agentEnabled;
  if (!sameValue(held.overridable, declared.overridable) && declared.overridable !== null) {
    patch.overridable = declared.overridable;
  }
  if (held.policyToolVersion !== declared.policyToolVersion) patch.policyToolVersion = declared.policyToolVersion;
  if (Object.keys(patch).length > 0) await client.policySets.update(id, patch);
  for (const option of scopeOptions) {
    const relationship = scopeRelationshipOf[option];
    // A global set has no workspaces or projects: the PATCH above dropped them on the service.
    if (declared.global && (relationship === "workspaces" || relationship === "projects")) continue;
    const before = held.global && (relationship === "workspaces" || relationship === "projects") ? [] : held[option];
    const adds = addedIds(before, declared[option]);
    const removes = addedIds(declared[option], before);
    if (adds.length > 0) await client.policySets.addToScope(id, relationship, adds);
    if (removes.length > 0) await client.policySets.removeFromScope(id, relationship, removes);
  }
  const joins = addedIds(held.policyIds, declared.policyIds);
  const leaves = addedIds(declared.policyIds, held.policyIds);
  if (joins.length > 0) await client.policySets.addPolicies(id, joins);
  if (leaves.length > 0) await client.policySets.removePolicies(id, leaves);
}

/**
 * Makes the set's parameters the declared ones: new keys created, changed values updated, removed keys deleted. A
 * parameter that stops being sensitive is deleted and created again, as the service cannot turn that off.
 */
async function syncParameters(
  client: TfeClient,
  setId: string,
  held: Record<string, ParameterState>,
  heldIds: Record<string, string>,
  declared: Record<string, ParameterState>,
): Promise<Record<string, string>> {
  const ids = { ...heldIds };
  for (const [key, { value, sensitive }] of Object.entries(declared)) {
    const before = held[key];
    const id = ids[key];
    const stored = sensitive ? hashParameterValue(value) : value;
    if (before && id && before.value === stored && before.sensitive === sensitive) continue;
    if (before && id && !(before.sensitive && !sensitive)) {
      await client.policySets.updateParameter(setId, id, { value, sensitive });
      continue;
    }
    if (id) await client.policySets.deleteParameter(setId, id);
    ids[key] = (await client.policySets.createParameter(setId, { key, value, sensitive })).id;
  }
  for (const key of Object.keys(ids)) {
    if (key in declared) continue;
    await client.policySets.deleteParameter(setId, ids[key] as string);
    delete ids[key];
  }
  return ids;
}

/**
 * Packs the folder as it is now, uploads it as a new version, and waits for the service to read it: the version's
 * id once ready; the service's own `error-message` when it errors. Progress goes to the provider's output.
 */
async function uploadFolder(client: TfeClient, setId: string, inputs: PolicySetInputs): Promise<string> {
  const { files } = collectFolder(resolve(inputs.directory as string));
  const version = await client.policySets.createVersion(setId);
  await client.policySets.uploadVersion(version, packFiles(files));
  const started = Date.now();
  let reported = started;
  for (let delayMs = 100; ; delayMs = Math.min(delayMs * 2, 2000)) {
    const read = await client.policySets.readVersion(version.id);
    if (read.status === "ready") return read.id;
    if (read.status === "errored") {
      throw new Error(
        `the service could not read version ${read.id} of ${inputs.directory}: ${read.errorMessage ?? "no reason given"}. ` +
          "The set keeps its last ready version",
      );
    }
    const elapsed = Date.now() - started;
    if (elapsed > versionTimeoutMs()) {
      throw new Error(
        `version ${read.id} of ${inputs.directory} is still ${read.status} after ${Math.round(elapsed / 1000)} s ` +
          "(TFE_POLICY_SET_VERSION_TIMEOUT): the set keeps its last ready version; run up again to check on it",
      );
    }
    if (Date.now() - reported >= 10_000) {
      reported = Date.now();
      console.error(
        `policy set "${inputs.name}": version ${read.id} is ${read.status} (${Math.round(elapsed / 1000)} s)`,
      );
    }
    await new Promise((done) => setTimeout(done, delayMs));
  }
}

async function findByName(client: TfeClient, organization: string, name: string) {
  for await (const policySet of client.policySets.listAll(organization, { search: name })) {
    if (policySet.name === name) return policySet;
  }
  return undefined;
}

function parameterStates(
  parameters: readonly PolicySetParameter[],
  recorded: Record<string, ParameterState>,
): Record<string, ParameterState> {
  return Object.fromEntries(
    parameters.map(({ key, value, sensitive }) => [
      key,
      // A sensitive value never comes back: the state's hash stands for it, or nothing where state had none.
      { value: sensitive ? (recorded[key]?.sensitive ? (recorded[key]?.value ?? "") : "") : value, sensitive },
    ]),
  );
}

function idsOf(parameters: readonly PolicySetParameter[]): Record<string, string> {
  return Object.fromEntries(parameters.map(({ key, id }) => [key, id]));
}

/** The declaration, with what the service holds in place of each property it reports. */
function heldInputs(
  policySet: ServicePolicySet,
  declared: Partial<PolicySetInputs>,
  parameters: Record<string, ParameterState>,
): PolicySetInputs {
  return {
    organization: declared.organization as string,
    name: policySet.name,
    description: policySet.description,
    kind: policySet.kind,
    ...(declared.directory !== undefined ? { directory: declared.directory } : {}),
    contentHash: declared.contentHash ?? null,
    folderPolicies: declared.folderPolicies ?? {},
    policyIds: [...policySet.policyIds].sort(),
    global: policySet.global,
    workspaceIds: [...policySet.workspaceIds].sort(),
    projectIds: [...policySet.projectIds].sort(),
    excludedWorkspaceIds: [...policySet.excludedWorkspaceIds].sort(),
    excludedProjectIds: [...policySet.excludedProjectIds].sort(),
    parameters,
    agentEnabled: policySet.agentEnabled,
    overridable: policySet.overridable,
    policyToolVersion: policySet.policyToolVersion ?? declared.policyToolVersion ?? "latest",
    adoptExisting: declared.adoptExisting ?? false,
    allowWeakening: declared.allowWeakening ?? false,
  };
}

function toOutputs(
  inputs: PolicySetInputs,
  policySetId: string,
  currentVersionId: string | null,
  parameterIds: Record<string, string>,
): PolicySetOutputs {
  return { ...inputs, parameters: storedParameters(inputs.parameters), policySetId, currentVersionId, parameterIds };
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
  /** The service's id of the set (`polset-...`); also the resource's id. */
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
  }

  /** Reads an existing policy set by id into the program, without managing it. */
  static get(name: string, id: pulumi.Input<string>, opts?: pulumi.CustomResourceOptions): PolicySet {
    return new PolicySet(name, {}, { ...opts, id });
  }
}
