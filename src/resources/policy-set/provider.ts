// The `PolicySet` provider: check (through the checker), diff with the guard, and the ordered requests of create,
// update and delete, each leaving the service at least as strict as before when it fails half-way.

import { resolve } from "node:path";
import type * as pulumi from "@pulumi/pulumi";
import type { TfeClient } from "../../client/client";
import { TfeApiError } from "../../client/errors";
import type { CreatePolicySetOptions, PolicySet as ServicePolicySet } from "../../client/policy-sets";
import { packFiles } from "../../policy-code/archive";
import { type ContentBaseline, type Enforcement, type Finding, strongerBaseline } from "../guard";
import { declareMembership, ownerOf, twiceDeclared } from "../memberships";
import { checkedThisOperation } from "../operation";
import { argumentsOf, importing } from "../property-table";
import {
  answersNotFound,
  ContextProvider,
  changedProperties,
  type DiffWithChanges,
  deleteConfirmingGone,
  GovernanceRefusal,
  isUnknown,
  type ObjectAccess,
  partialFailure,
  sameValue,
} from "../provider-context";
import { setNameTakenMessage } from "./arguments";
import { baselineOf, emptyBaseline, withParametersHeld } from "./baseline";
import { PolicySetChecker } from "./check";
import { prepareFolder } from "./folder";
import {
  type PolicySetInputs,
  type PolicySetOutputs,
  policySetProperties,
  replacingProperties,
  setEnforcement,
  updatableProperties,
} from "./properties";
import {
  awaitVcsVersion,
  changeSet,
  createSetWithoutDuplicate,
  type ParameterState,
  PartialChange,
  type SetShape,
  scopeOptions,
  shapeOf,
  storedParameter,
  syncParameters,
  uploadVersion,
} from "./requests";
import { leavesSet, sayWhomSetBlocks } from "./stricter";
import { compareIngestedCommit, contentAtServiceCommit, warnOfUncheckedCommit } from "./vcs-commits";

export class PolicySetProvider extends ContextProvider implements pulumi.dynamic.ResourceProvider {
  /** The preview checks, with what they keep for this operation (the archives they packed). */
  private readonly checker = new PolicySetChecker(this.context);

  /** Every input rule and the whole folder, before any write; unknown values (preview) pass. */
  check(olds: Record<string, unknown>, news: Record<string, unknown>): Promise<pulumi.dynamic.CheckResult> {
    return this.checker.check(olds, news);
  }

  /** The archive check packed for this content, or the folder packed now when it still holds that content. */
  private async archiveFor(inputs: PolicySetInputs): Promise<Buffer> {
    const packed = inputs.contentHash ? this.checker.packedArchives.get(inputs.contentHash) : undefined;
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

  /**
   * The change against what the service enforces as the state records it (a refresh reads it anew, and keeps what
   * the service cannot show): every weakening at once, and what cannot be compared, fails here, at preview and
   * before any request, unless allowed.
   */
  async diff(id: string, olds: PolicySetOutputs, news: PolicySetInputs): Promise<DiffWithChanges> {
    const comparable = {
      ...news,
      parameters: isUnknown(news.parameters) ? news.parameters : storedParameters(news.parameters ?? {}),
    };
    const replaces = changedProperties(olds, comparable, replacingProperties);
    const updates = changedProperties(olds, comparable, updatableProperties);
    // The diff a refresh asks for, to show what changed outside, is no change to guard.
    if (checkedThisOperation(news)) {
      // The policies of this operation judge it as the program leaves it (a scope widened, members taken in).
      leavesSet(id, news);
      await this.guard(id, olds, news, [...replaces, ...updates]);
      await this.nameChangedSecrets(olds, comparable, (news as unknown as Record<string, unknown>).__urn);
      if (replaces.length + updates.length > 0) await sayWhomSetBlocks(this.context, id, olds, news);
    }
    // Names are unique in an organization: a replacement that keeps the name must delete the old one first.
    const deleteBeforeReplace =
      replaces.length > 0 && olds.name === news.name && olds.organization === news.organization;
    if (deleteBeforeReplace && checkedThisOperation(news)) {
      await this.context.warn(
        (news as unknown as Record<string, unknown>).__urn,
        `policy set "${news.name}" is replaced (${replaces.join(", ")} changed): the service holds one set ` +
          "of a name, so the old set is deleted before the new one is made, and no set of that name enforces in " +
          "between. To make the new set first, give it another name in the same change",
      );
    }
    // A parameter is named by its key: one rotated secret shows as itself, not as every parameter.
    const changed = [...replaces, ...updates].flatMap((property) =>
      property === "parameters" && !isUnknown(comparable.parameters)
        ? changedKeys(olds.parameters ?? {}, comparable.parameters as Record<string, unknown>).map((key) => [
            property,
            key,
          ])
        : [[property]],
    );
    return { changes: replaces.length + updates.length > 0, changed, replaces, deleteBeforeReplace };
  }

  /**
   * Pulumi shows a secret as `[secret]` on both sides of a diff, so a rotated sensitive parameter would be an update
   * with no property marked: each is named under the resource, its value never.
   */
  private async nameChangedSecrets(olds: PolicySetOutputs, news: { parameters?: unknown }, urn: unknown) {
    if (isUnknown(news.parameters)) return;
    const before = olds.parameters ?? {};
    const after = (news.parameters ?? {}) as Record<string, ParameterState>;
    for (const [key, parameter] of Object.entries(after)) {
      const old = before[key];
      if (!old || isUnknown(parameter.value) || (!old.sensitive && !parameter.sensitive)) continue;
      if (sameValue(old, parameter)) continue;
      await this.context.info(urn, `parameters.${key} (secret) changed`);
    }
  }

  /**
   * A change the program asks for, against what the service enforces as the state records it (a refresh reads it
   * anew, and keeps what the service cannot show): every weakening at once, and what cannot be compared, fails here,
   * at preview and before any request, unless allowed.
   */
  private async guard(id: string, olds: PolicySetOutputs, news: PolicySetInputs, changed: readonly string[]) {
    const here = ownerOf("PolicySet", "policyIds", news as unknown as Record<string, unknown>);
    for (const policyId of Array.isArray(news.policyIds) ? news.policyIds : []) {
      if (typeof policyId !== "string" || isUnknown(policyId)) continue;
      const other = declareMembership(policyId, id, here);
      if (other) throw new GovernanceRefusal(twiceDeclared(policyId, id, here, other));
    }
    // A change of what the set enforces is compared with the service too: scope, members, parameters or a version
    // changed outside since the last refresh are not the state's, and the update would undo them. Other changes
    // (a name, a description) read nothing.
    const enforcing = changed.some((property) => !unguardedProperties.includes(property));
    const onService = enforcing ? await this.held(id, olds, { warn: false, unseenSecrets: true }) : undefined;
    // A checkout at the commit the service evaluates shows what it enforces where the state cannot.
    const known = await contentAtServiceCommit(this.context, id, olds, news);
    // What the set reads its policies from is compared where the change touches it; where it does not (a scope, a
    // member, overridable), the policies before and after are the same ones, whatever they are, and are left out.
    // A Terraform policy's level may read a parameter: there, parameters are part of what it enforces too.
    const touched = changed.some(
      (property) => contentProperties.includes(property) || (property === "parameters" && news.kind === "tfpolicy"),
    );
    const enforcement = (props: Partial<PolicySetOutputs>) =>
      touched ? setEnforcement(props) : withoutContent(setEnforcement(props));
    const refusal = await this.context.judge({
      subject: `policy set "${news.name}"`,
      what: "policy set",
      before: enforcement({ ...olds, ...known }),
      onService: onService && enforcement({ ...onService, ...known }),
      after: enforcement(news),
      allowedOnResource: news.allowWeakening === true,
      urn: (news as unknown as Record<string, unknown>).__urn,
      describe: (findings) => this.namePolicies(findings),
    });
    if (refusal) throw new GovernanceRefusal(refusal);
  }

  /** Each policy id a finding names, with the policy's name where the service still has it (one read each). */
  private async namePolicies(findings: Finding[]): Promise<Finding[]> {
    const ids = [...new Set(findings.flatMap((finding) => finding.lostIds ?? []))];
    if (!ids.some((id) => id.startsWith("pol-"))) return findings;
    const names = new Map(
      await Promise.all(
        ids.map(async (id) => {
          const name = await this.context.client.policies.read(id).then(
            (policy) => policy.name,
            () => undefined,
          );
          return [id, name ? `${id} ("${name}")` : id] as const;
        }),
      ),
    );
    return findings.map((finding) =>
      finding.lostIds?.some((id) => id.startsWith("pol-"))
        ? { ...finding, text: finding.text.replace(/pol-[A-Za-z0-9]+/g, (id) => names.get(id) ?? id) }
        : finding,
    );
  }

  async create(inputs: PolicySetInputs): Promise<pulumi.dynamic.CreateResult> {
    const client = this.context.client;
    const { policySet, createdHere } = await this.createOrAdopt(client, inputs);
    const held: Held = {
      shape: shapeOf(policySet, inputs.policyToolVersion),
      parameters: {},
      parameterIds: {},
      currentVersionId: policySet.currentVersionId,
      contentHash: null,
      contentFiles: {},
      // What the set enforces before this create changes it: nothing for a new set; for an adopted one with
      // versions, what its adoption check could not read.
      baseline: createdHere
        ? emptyBaseline
        : {
            ...emptyBaseline,
            policiesUnknown: policySet.versioned
              ? `adopted with version ${policySet.currentVersionId ?? "none"}, whose files the service does not show`
              : null,
          },
    };
    try {
      let readsAnew = createdHere && inputs.vcsRepo !== null;
      if (!createdHere) {
        // An adopted set's memberships that this resource does not declare belong to whoever put them there.
        const from = { ...held.shape, policyIds: held.shape.policyIds.filter((id) => inputs.policyIds.includes(id)) };
        held.shape = await changeSet(client, policySet.id, from, shapeOfInputs(inputs));
        readsAnew = inputs.vcsRepo !== null && readsOtherContent(from, held.shape);
      }
      if (readsAnew) held.currentVersionId = await awaitVcsVersion(client, policySet.id, labelOf(inputs));
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
        held.contentFiles = inputs.contentFiles;
      }
      held.baseline = baselineOf(inputs);
      if (readsAnew) held.baseline = await compareIngestedCommit(this.context, held, inputs);
      return { id: policySet.id, outs: outputsOf(inputs, policySet.id, held) };
    } catch (failure) {
      const error = absorb(held, failure);
      // What went through may enforce the program's policies or the earlier ones: the state keeps the stronger.
      held.baseline = strongerBaseline(held.baseline, baselineOf(inputs), inputs.kind);
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
        const existing = await client.policySets.findByName(inputs.organization, inputs.name);
        throw new Error(setNameTakenMessage(inputs, existing?.id));
      }
    }
    const existing = await client.policySets.findByName(inputs.organization, inputs.name);
    if (!existing) return this.createOrAdopt(client, { ...inputs, adoptExisting: false });
    if (this.context.claimed.has(existing.id)) {
      throw new Error(
        `policy set "${inputs.name}" (${existing.id}) is already managed by another resource of this stack`,
      );
    }
    if (existing.kind !== inputs.kind) {
      throw new Error(
        `cannot adopt policy set "${inputs.name}": its kind is ${existing.kind}, and this resource declares kind ${inputs.kind}`,
      );
    }
    this.context.claimed.set(existing.id, "adopted");
    // A list answer may leave relationships out: read the set whole before comparing.
    return { policySet: await client.policySets.read(existing.id), createdHere: false };
  }

  async read(id: string, props: Partial<PolicySetOutputs>): Promise<pulumi.dynamic.ReadResult> {
    const outs = await this.held(id, props as PolicySetOutputs, { warn: true });
    if (!outs) return {};
    // The state's inputs are the program's arguments as the service holds them, never the baseline: that lives in
    // the outputs alone, so no refresh can blank it.
    const {
      policySetId: _id,
      currentVersionId: _version,
      parameterIds: _ids,
      folderPolicies: _policies,
      policyBlocks: _blocks,
      policiesUnknown: _unknown,
      checkedCommit: _commit,
      ...inputs
    } = outs;
    return {
      id,
      props: outs,
      inputs: importing(props) ? argumentsOf(policySetProperties, outs as unknown as Record<string, unknown>) : inputs,
    };
  }

  /**
   * The set as the service holds it, in the state's terms (the outputs a refresh records), or undefined when it is
   * gone: what the service cannot show (the files of a version) is kept from `declared`, or marked unknown.
   */
  private async held(
    id: string,
    given: PolicySetOutputs,
    /**
     * `unseenSecrets`: what the guard compares with, where a level read from a sensitive parameter is not known (the
     * service never shows its value, so a change made outside Pulumi cannot be seen); a refresh keeps state's.
     */
    options: { warn: boolean; unseenSecrets?: boolean },
  ): Promise<PolicySetOutputs | undefined> {
    const client = this.context.client;
    let declared = given;
    let policySet: ServicePolicySet;
    try {
      policySet = await client.policySets.read(id);
    } catch (error) {
      if (!(error instanceof TfeApiError && error.status === 404)) throw error;
      if (await answersNotFound(policySetAccess(client), declared.organization)) return undefined;
      throw new Error(
        `reading policy set ${id} failed: the service answered 404, and this token cannot list the policy sets of ` +
          `organization "${declared.organization}" either, so the token may lack access rather than the set be gone; ` +
          "it stays in state. Check tfe:token, TFE_TOKEN or the credentials file",
      );
    }
    // `pulumi import` hands over no state at all: every identifying field is the service's.
    const imported = importing(declared);
    if (imported) {
      declared = { ...declared, organization: policySet.organization ?? this.context.defaultOrganization ?? "" };
    }
    // Sentinel params and Terraform policy inputs take parameters; OPA sets have none.
    const parameters = policySet.kind !== "opa" ? await client.policySets.listParameters(id) : [];
    const shape = shapeOf(policySet, declared.policyToolVersion ?? "latest");
    // The set owns the memberships it declares: a policy another resource (a Policy's policySetIds) put in the set
    // is not drift here; one the set declared and that left it outside Pulumi is.
    if (Array.isArray(declared.policyIds))
      shape.policyIds = shape.policyIds.filter((policyId) => declared.policyIds.includes(policyId));
    const recorded = declared.parameters ?? {};
    const heldParameters = Object.fromEntries(
      parameters.map(({ key, value, sensitive }) => [
        key,
        // A sensitive value never comes back: the state's hash stands for it, or nothing where state had none.
        sensitive ? { value: recorded[key]?.sensitive ? recorded[key].value : "", sensitive } : { value, sensitive },
      ]),
    );
    const versionMoved =
      declared.currentVersionId !== undefined && policySet.currentVersionId !== declared.currentVersionId;
    const held: Held = {
      shape,
      parameters: heldParameters,
      parameterIds: Object.fromEntries(parameters.map(({ key, id: parameterId }) => [key, parameterId])),
      currentVersionId: policySet.currentVersionId,
      // The folder's hash stands for the version Pulumi uploaded; a version uploaded outside Pulumi moves it (the
      // next up uploads the folder again). A set read from version control gets versions at every push: its
      // current version is no drift.
      contentHash:
        declared.directory !== undefined && versionMoved
          ? `changed outside Pulumi: current version ${policySet.currentVersionId ?? "none"}`
          : (declared.contentHash ?? null),
      contentFiles: declared.contentFiles ?? {},
      baseline: baselineOf(declared),
    };
    if (declared.directory !== undefined && versionMoved) {
      // The service offers no download of a version's files: what it enforces now is not known here.
      held.baseline = {
        ...held.baseline,
        policiesUnknown:
          `version ${policySet.currentVersionId ?? "none"} was made outside Pulumi (the stack recorded ` +
          `${declared.currentVersionId ?? "none"}), and the service does not show a version's files`,
      };
    }
    if (imported && (policySet.versioned || policySet.vcs)) {
      // What its versions enforce is not known here until a folder or a checkout is compared: never "nothing".
      held.baseline = {
        ...held.baseline,
        policiesUnknown:
          `it was imported with its current version (${policySet.currentVersionId ?? "none ready"}) made before ` +
          "this stack, and the service does not show a version's files",
      };
    }
    held.baseline = withParametersHeld(
      held.baseline,
      recorded,
      heldParameters,
      options.unseenSecrets
        ? new Set(parameters.filter((parameter) => parameter.sensitive).map((parameter) => parameter.key))
        : undefined,
    );
    if (options.warn && versionMoved && policySet.vcs && declared.checkedCommit && policySet.currentVersionId) {
      await warnOfUncheckedCommit(this.context, declared, policySet.currentVersionId);
    }
    return outputsOf({ ...declared, kind: policySet.kind } as PolicySetInputs, id, held);
  }

  async update(id: string, olds: PolicySetOutputs, news: PolicySetInputs): Promise<pulumi.dynamic.UpdateResult> {
    const client = this.context.client;
    const held: Held = {
      shape: shapeOfInputs(olds),
      parameters: olds.parameters ?? {},
      parameterIds: olds.parameterIds ?? {},
      currentVersionId: olds.currentVersionId,
      contentHash: olds.contentHash,
      contentFiles: olds.contentFiles ?? {},
      baseline: baselineOf(olds),
    };
    try {
      // A set that stops reading version control takes uploads only once it does; until the upload it keeps
      // evaluating its last version from the repository, so nothing is weaker in between.
      const leavesVcs = olds.vcsRepo !== null && olds.vcsRepo !== undefined && news.vcsRepo === null;
      if (leavesVcs) held.shape = await changeSet(client, id, held.shape, shapeOfInputs(news));
      // Otherwise the folder goes first: an errored version fails the update before anything else changed, and
      // state keeps the last ready version.
      if (news.directory !== undefined && (leavesVcs || olds.contentHash !== news.contentHash)) {
        held.currentVersionId = await uploadVersion(client, id, await this.archiveFor(news), labelOf(news));
        held.contentHash = news.contentHash;
        held.contentFiles = news.contentFiles;
      }
      const before = held.shape;
      held.shape = await changeSet(client, id, held.shape, shapeOfInputs(news));
      const readsAnew = news.vcsRepo !== null && readsOtherContent(before, held.shape);
      if (readsAnew) {
        held.currentVersionId = await awaitVcsVersion(client, id, labelOf(news));
        // What was uploaded before is not what the set evaluates now.
        held.contentHash = null;
        held.contentFiles = {};
      }
      if (
        !sameValue(held.parameters, storedParameters(news.parameters)) ||
        !sameValue(Object.keys(held.parameterIds).sort(), Object.keys(held.parameters).sort())
      ) {
        const onService = await client.policySets.listParameters(id);
        Object.assign(held, await syncParameters(client, id, onService, held.parameters, news.parameters));
      }
      held.baseline = baselineOf(news);
      if (readsAnew) held.baseline = await compareIngestedCommit(this.context, held, news);
      return { outs: outputsOf(news, id, held) };
    } catch (failure) {
      const error = absorb(held, failure);
      // What went through is in the state: the next up reads from there and sends only what is left. Which policies
      // the set enforces half-way (a new folder with the old parameters) is not known: the state keeps the stronger.
      held.baseline = strongerBaseline(held.baseline, baselineOf(news), news.kind);
      throw partialFailure(error, id, outputsOf(news, id, held));
    }
  }

  async delete(id: string, props: Partial<PolicySetOutputs> = {}): Promise<void> {
    if (this.context.adoptedThisOperation(id)) return;
    await deleteConfirmingGone(policySetAccess(this.context.client), id, props.organization);
  }
}

/**
 * What says which policies a set enforces: its folder or checkout (their policies, blocks and hash), its repository,
 * branch and path, its kind. A change of none of them leaves its policies as they are.
 */
const contentProperties: readonly string[] = [
  "folderPolicies",
  "policyBlocks",
  "policiesUnknown",
  "contentHash",
  "vcsRepo",
  "policiesPath",
  "kind",
];

/** An enforcement with its policies left out: for a change that does not touch them. */
const withoutContent = (enforcement: Enforcement): Enforcement => ({
  ...enforcement,
  policies: {},
  policiesUnknown: null,
  policiesNotRead: false,
  blocks: {},
});

/** What a change of sends nothing the guard compares: no read of the service for it at preview. */
const unguardedProperties: readonly string[] = ["name", "description", "agentEnabled", "policyToolVersion"];

function createOptions(inputs: PolicySetInputs): CreatePolicySetOptions {
  return {
    name: inputs.name,
    kind: inputs.kind,
    description: inputs.description,
    global: inputs.global,
    ...(inputs.overridable !== null ? { overridable: inputs.overridable } : {}),
    // The runtime settings are Sentinel's and OPA's: a Terraform policy set gets neither, as the service documents
    // none for it, so the service's defaults stand rather than values it may refuse.
    ...(inputs.kind !== "tfpolicy"
      ? { agentEnabled: inputs.agentEnabled, policyToolVersion: inputs.policyToolVersion }
      : {}),
    policyIds: inputs.policyIds,
    ...(inputs.vcsRepo !== null
      ? {
          vcsRepo: inputs.vcsRepo,
          policiesPath: inputs.policiesPath,
          ...(inputs.policyUpdatePatterns.length > 0 ? { policyUpdatePatterns: inputs.policyUpdatePatterns } : {}),
        }
      : {}),
    ...Object.fromEntries(scopeOptions.map((option) => [option, inputs[option]])),
  };
}

/** Whether the service reads another repository, branch or path now: it makes a version of it at once. */
function readsOtherContent(before: SetShape, after: SetShape): boolean {
  return !sameValue(before.vcsRepo, after.vcsRepo) || before.policiesPath !== after.policiesPath;
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
    vcsRepo: inputs.vcsRepo ?? null,
    policiesPath: inputs.policiesPath ?? null,
    policyUpdatePatterns: inputs.policyUpdatePatterns ?? [],
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

/** What a set holds after an operation, as the provider keeps track of it request by request. */
interface Held {
  shape: SetShape;
  parameters: Record<string, ParameterState>;
  parameterIds: Record<string, string>;
  currentVersionId: string | null;
  contentHash: string | null;
  contentFiles: Record<string, string>;
  baseline: ContentBaseline;
}

/** The state of a set: the declaration's own settings, with what the service holds for everything it reports. */
function outputsOf(declared: PolicySetInputs, policySetId: string, held: Held): PolicySetOutputs {
  return {
    organization: declared.organization,
    kind: declared.kind,
    ...(declared.directory !== undefined ? { directory: declared.directory } : {}),
    ...(declared.vcsCheckout !== undefined ? { vcsCheckout: declared.vcsCheckout } : {}),
    ...held.shape,
    contentHash: held.contentHash,
    contentFiles: held.contentFiles,
    ...held.baseline,
    parameters: held.parameters,
    adoptExisting: declared.adoptExisting ?? false,
    allowWeakening: declared.allowWeakening ?? false,
    policySetId,
    currentVersionId: held.currentVersionId,
    parameterIds: held.parameterIds,
  };
}

/** Takes into `held` what a failed sequence of requests made the service hold; answers the failure's cause. */
function absorb(held: Held, failure: unknown): Error {
  if (!(failure instanceof PartialChange)) return failure as Error;
  if ("name" in failure.held) held.shape = failure.held as SetShape;
  else Object.assign(held, failure.held);
  return failure.cause as Error;
}

function labelOf(inputs: PolicySetInputs) {
  const from = inputs.vcsRepo
    ? `${inputs.vcsRepo.identifier}${inputs.policiesPath ? `:${inputs.policiesPath}` : ""}`
    : (inputs.directory as string);
  return { name: inputs.name, directory: from };
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

/** The keys whose entries differ between two records (added, removed or changed). */
function changedKeys(before: Record<string, unknown>, after: Record<string, unknown>): string[] {
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])];
  return keys.filter((key) => !sameValue(before[key], after[key])).sort();
}
