import { createHash } from "node:crypto";
import type { TfeClient } from "../../client/client";
import { deletedUnlessGone, mayHaveTakenEffect, TfeApiError } from "../../client/errors";
import {
  type CreatePolicySetOptions,
  type PolicySetParameter,
  type PolicySetScope,
  type PolicySet as ServicePolicySet,
  scopeRelationshipOf,
  type UpdatePolicySetOptions,
} from "../../client/policy-sets";
import type { ScopeRelationship } from "../../contract/policy-sets";
import { sameValue } from "../provider-context";
import { setOwn } from "../wire-keys";

/**
 * The requests that make a policy set what the program declares. Each sequence is ordered so that a failure half-way
 * leaves the service at least as strict as before (what strengthens goes first, what weakens last), and each keeps
 * a record of what the service holds after every request: a failure hands that record back ({@link PartialChange}),
 * and the provider puts it in the state, so state says what happened.
 */

/** A parameter as the provider holds it: state keeps a sensitive value as `sha256:<hex>` only. */
export interface ParameterState {
  value: string;
  sensitive: boolean;
}

/** The settings, scope and policies of a set, as the provider compares and sends them. */
export interface SetShape extends Required<PolicySetScope> {
  name: string;
  description: string | null;
  global: boolean;
  agentEnabled: boolean;
  overridable: boolean | null;
  policyToolVersion: string;
  policyIds: string[];
  /** Version control: the repository and credential (null for a set of uploads or of policies), its path, patterns. */
  vcsRepo: VcsRepoShape | null;
  policiesPath: string | null;
  policyUpdatePatterns: string[];
}

/** A set's repository as the provider compares it: every field present. */
export interface VcsRepoShape {
  identifier: string;
  branch: string | null;
  ingressSubmodules: boolean;
  oauthTokenId: string | null;
  githubAppInstallationId: string | null;
}

export const scopeOptions = Object.keys(scopeRelationshipOf) as (keyof PolicySetScope)[];

/** Some requests went through before one failed: `held` is what the service holds now, `cause` the failure. */
export class PartialChange<Held> extends Error {
  constructor(
    override readonly cause: unknown,
    readonly held: Held,
  ) {
    super((cause as Error)?.message ?? String(cause));
    this.name = "PartialChange";
  }
}

export function hashParameterValue(value: string): string {
  return `sha256:${createHash("sha256").update(value).digest("hex")}`;
}

/** How state keeps a declared parameter: a sensitive value as its hash, whatever the value looks like. */
export function storedParameter({ value, sensitive }: ParameterState): ParameterState {
  return { value: sensitive ? hashParameterValue(value) : value, sensitive };
}

const sorted = (ids: readonly string[]) => [...ids].sort();
const without = (ids: readonly string[], gone: readonly string[]) => ids.filter((id) => !gone.includes(id));
const added = (before: readonly string[], after: readonly string[]) => after.filter((id) => !before.includes(id));

/**
 * Makes the set's settings, scope and policies the declared ones, strengthening first: workspaces, projects and
 * policies join and exclusions leave before anything leaves or is excluded, `global` turns on and `overridable`
 * off before scope narrows. One exception is forced by the service: a global set takes no workspaces or projects,
 * so turning `global` off must come before they join; should a join then fail, `global` is turned on again.
 * Throws {@link PartialChange} with what the service then holds.
 */
export async function changeSet(client: TfeClient, id: string, from: SetShape, to: SetShape): Promise<SetShape> {
  const held: SetShape = { ...from };
  const step = async (request: () => Promise<unknown>, after: Partial<SetShape>) => {
    try {
      await request();
    } catch (error) {
      throw new PartialChange(error, held);
    }
    Object.assign(held, after);
  };
  const patch = async (options: UpdatePolicySetOptions, after: Partial<SetShape>) =>
    step(() => client.policySets.update(id, options), after);

  // Neutral settings, and the ones that strengthen.
  const neutral: UpdatePolicySetOptions = {};
  if (from.name !== to.name) neutral.name = to.name;
  if (!sameValue(from.description, to.description)) neutral.description = to.description;
  if (from.agentEnabled !== to.agentEnabled) neutral.agentEnabled = to.agentEnabled;
  if (from.policyToolVersion !== to.policyToolVersion) neutral.policyToolVersion = to.policyToolVersion;
  if (from.overridable === true && to.overridable === false) neutral.overridable = false;
  if (!from.global && to.global) neutral.global = true;
  // A new repository, branch or path is read by the service at once: the provider then waits for that version.
  if (!sameValue(from.vcsRepo, to.vcsRepo)) neutral.vcsRepo = to.vcsRepo;
  if (from.policiesPath !== to.policiesPath) neutral.policiesPath = to.policiesPath;
  if (!sameValue(from.policyUpdatePatterns, to.policyUpdatePatterns))
    neutral.policyUpdatePatterns = to.policyUpdatePatterns;
  if (Object.keys(neutral).length > 0) {
    // Turning global on drops the set's workspaces and projects on the service.
    const dropped = neutral.global ? { workspaceIds: [], projectIds: [] } : {};
    await patch(neutral, { ...neutralShape(neutral), ...dropped });
  }

  const turnsGlobalOff = from.global && !to.global;
  if (turnsGlobalOff) await patch({ global: false }, { global: false });
  try {
    for (const [option, relationship] of inclusions) {
      const joins = to.global ? [] : added(held[option], to[option]);
      if (joins.length > 0) {
        await step(() => client.policySets.addToScope(id, relationship, joins), {
          [option]: sorted([...held[option], ...joins]),
        });
      }
    }
    const joining = added(held.policyIds, to.policyIds);
    if (joining.length > 0) {
      await step(() => client.policySets.addPolicies(id, joining), {
        policyIds: sorted([...held.policyIds, ...joining]),
      });
    }
    for (const [option, relationship] of exclusions) {
      const lifted = added(to[option], held[option]);
      if (lifted.length > 0) {
        await step(() => client.policySets.removeFromScope(id, relationship, lifted), {
          [option]: without(held[option], lifted),
        });
      }
    }
  } catch (error) {
    if (!turnsGlobalOff) throw error;
    // Back to applying everywhere, as before this change: the service drops what joined meanwhile.
    try {
      await client.policySets.update(id, { global: true });
      Object.assign(held, { global: true, workspaceIds: [], projectIds: [] });
    } catch {
      // The record says global is off: the next run reads and converges from there.
    }
    throw new PartialChange((error as PartialChange<SetShape>).cause ?? error, held);
  }

  // What weakens, last.
  for (const [option, relationship] of exclusions) {
    const excluded = added(held[option], to[option]);
    if (excluded.length > 0) {
      await step(() => client.policySets.addToScope(id, relationship, excluded), {
        [option]: sorted([...held[option], ...excluded]),
      });
    }
  }
  for (const [option, relationship] of inclusions) {
    const leaving = to.global ? [] : added(to[option], held[option]);
    if (leaving.length > 0) {
      await step(() => client.policySets.removeFromScope(id, relationship, leaving), {
        [option]: without(held[option], leaving),
      });
    }
  }
  const leaving = added(to.policyIds, held.policyIds);
  if (leaving.length > 0) {
    await step(() => client.policySets.removePolicies(id, leaving), { policyIds: without(held.policyIds, leaving) });
  }
  if (held.overridable !== true && to.overridable === true) await patch({ overridable: true }, { overridable: true });
  return held;
}

const inclusions: [keyof PolicySetScope, ScopeRelationship][] = [
  ["workspaceIds", "workspaces"],
  ["projectIds", "projects"],
];
const exclusions: [keyof PolicySetScope, ScopeRelationship][] = [
  ["excludedWorkspaceIds", "workspace-exclusions"],
  ["excludedProjectIds", "project-exclusions"],
];

function neutralShape(options: UpdatePolicySetOptions): Partial<SetShape> {
  const shape: Partial<SetShape> = {};
  for (const [key, value] of Object.entries(options)) {
    if (value !== undefined) (shape as Record<string, unknown>)[key] = value;
  }
  return shape;
}

/**
 * The set as the service holds it, in the provider's terms: ids sorted, as state keeps them. A Terraform policy set
 * has no runtime setting of its own (agent-enabled and policy-tool-version are Sentinel's and OPA's): whatever the
 * service shows there is its default, neither drift nor something to put back.
 */
export function shapeOf(policySet: ServicePolicySet, policyToolVersion: string): SetShape {
  const terraformPolicy = policySet.kind === "tfpolicy";
  return {
    name: policySet.name,
    description: policySet.description,
    global: policySet.global,
    agentEnabled: terraformPolicy ? false : policySet.agentEnabled,
    // A Terraform policy set has no `overridable` of its own (each block's level says it): the service may answer
    // false or null, and neither is drift.
    overridable: terraformPolicy ? null : policySet.overridable,
    policyToolVersion: terraformPolicy ? policyToolVersion : (policySet.policyToolVersion ?? policyToolVersion),
    policyIds: sorted(policySet.policyIds),
    vcsRepo: policySet.vcs
      ? {
          identifier: policySet.vcs.vcsRepo.identifier,
          branch: policySet.vcs.vcsRepo.branch || null,
          ingressSubmodules: policySet.vcs.vcsRepo.ingressSubmodules,
          oauthTokenId: policySet.vcs.vcsRepo.oauthTokenId,
          githubAppInstallationId: policySet.vcs.vcsRepo.githubAppInstallationId,
        }
      : null,
    policiesPath: policySet.vcs?.policiesPath || null,
    policyUpdatePatterns: policySet.vcs?.policyUpdatePatterns ?? [],
    workspaceIds: sorted(policySet.workspaceIds),
    projectIds: sorted(policySet.projectIds),
    excludedWorkspaceIds: sorted(policySet.excludedWorkspaceIds),
    excludedProjectIds: sorted(policySet.excludedProjectIds),
  };
}

/**
 * POST is not retried blindly: after a timeout or a 5xx the set may exist already. Look for it by name, and take it
 * only when it is the one just sent (no version yet, and what was sent); otherwise send again, three times at most.
 */
export async function createSetWithoutDuplicate(
  client: TfeClient,
  organization: string,
  options: CreatePolicySetOptions,
): Promise<ServicePolicySet> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await client.policySets.create(organization, options);
    } catch (error) {
      // A name taken on a retry: the attempt whose answer was lost made it after the lookup that did not find it.
      const nameTaken =
        error instanceof TfeApiError && error.status === 422 && error.invalidAttributes.includes("name");
      if (attempt > 1 && nameTaken) {
        const made = await client.policySets.findByName(organization, options.name);
        if (made && isTheSetSent(made, options)) return made;
        throw error;
      }
      if (!mayHaveTakenEffect(error)) throw error;
      // The last attempt too: a set it made without an answer would otherwise be left outside the state.
      const existing = await client.policySets.findByName(organization, options.name);
      if (existing && isTheSetSent(existing, options)) return existing;
      if (existing || attempt >= 3) throw error;
    }
  }
}

function isTheSetSent(set: ServicePolicySet, sent: CreatePolicySetOptions): boolean {
  const list = (ids: readonly string[] | undefined) => sorted(ids ?? []);
  return (
    (set.newestVersionId === null || (sent.vcsRepo ?? null) !== null) &&
    set.kind === (sent.kind ?? "sentinel") &&
    set.global === (sent.global ?? false) &&
    sameValue(set.vcs?.vcsRepo.identifier ?? null, sent.vcsRepo?.identifier ?? null) &&
    sameValue(set.description, sent.description ?? null) &&
    sameValue(list(set.policyIds), list(sent.policyIds)) &&
    scopeOptions.every((option) => sameValue(list(set[option]), list(sent[option])))
  );
}

export interface ParametersHeld {
  /** Each parameter on the service by key, as state keeps it (a sensitive value as the hash of what was sent). */
  parameters: Record<string, ParameterState>;
  parameterIds: Record<string, string>;
}

/**
 * Makes the set's parameters the declared ones, from what the service holds (`onService`; read once, so a
 * parameter created or deleted by an earlier run that failed is found, not a stale id): new keys created, changed
 * values updated, keys no longer declared deleted. A parameter that stops being sensitive is deleted and created
 * again, as the service cannot turn that off. `recorded` is what state knows of sensitive values, which the
 * service never sends back. Throws {@link PartialChange} with what the service then holds.
 */
export async function syncParameters(
  client: TfeClient,
  setId: string,
  onService: readonly PolicySetParameter[],
  recorded: Record<string, ParameterState>,
  declared: Record<string, ParameterState>,
): Promise<ParametersHeld> {
  const held: ParametersHeld = { parameters: {}, parameterIds: {} };
  for (const { id, key, value, sensitive } of onService) {
    setOwn(held.parameterIds, key, id);
    const own = Object.hasOwn(recorded, key) ? recorded[key] : undefined;
    setOwn(
      held.parameters,
      key,
      sensitive ? { value: own?.sensitive ? own.value : "", sensitive: true } : { value, sensitive: false },
    );
  }
  const step = async <T>(request: () => Promise<T>): Promise<T> => {
    try {
      return await request();
    } catch (error) {
      throw new PartialChange(error, held);
    }
  };
  for (const [key, wanted] of Object.entries(declared)) {
    const stored = storedParameter(wanted);
    const before = Object.hasOwn(held.parameters, key) ? held.parameters[key] : undefined;
    const id = Object.hasOwn(held.parameterIds, key) ? held.parameterIds[key] : undefined;
    if (before && id && sameValue(before, stored)) continue;
    if (before && id && !(before.sensitive && !wanted.sensitive)) {
      await step(() => client.policySets.updateParameter(setId, id, wanted));
      setOwn(held.parameters, key, stored);
      continue;
    }
    if (id) {
      await step(() => deletedUnlessGone(() => client.policySets.deleteParameter(setId, id)));
      delete held.parameters[key];
      delete held.parameterIds[key];
    }
    const created = await step(() => createParameterWithoutDuplicate(client, setId, key, wanted));
    setOwn(held.parameters, key, stored);
    setOwn(held.parameterIds, key, created.id);
  }
  for (const [key, id] of Object.entries(held.parameterIds)) {
    if (Object.hasOwn(declared, key)) continue;
    await step(() => deletedUnlessGone(() => client.policySets.deleteParameter(setId, id)));
    delete held.parameters[key];
    delete held.parameterIds[key];
  }
  return held;
}

/**
 * POST is not retried blindly: after a timeout, a reset or a 5xx the parameter may exist already. A parameter's key is
 * unique in its set, so the set's parameters are read before the POST goes again: no entry for the key, nothing was
 * made, and it is sent again (three times at most); an entry that is the one sent (plain, and our value) is ours.
 * A sensitive entry cannot be read back (the service never sends its value), so it is never taken as ours on sight:
 * our value is written over it (a PATCH, safe to repeat), and the service then holds what was declared whatever it
 * held; what was there is never recorded as ours unread, and no second entry is made. An entry that is plainly not
 * the one sent (another value, or another sensitivity) was written by someone else meanwhile: it is left as it is
 * and the change fails, naming it.
 */
async function createParameterWithoutDuplicate(
  client: TfeClient,
  setId: string,
  key: string,
  wanted: ParameterState,
): Promise<PolicySetParameter> {
  const maxAttempts = 3;
  for (let attempt = 1; ; attempt++) {
    try {
      return await client.policySets.createParameter(setId, { key, ...wanted });
    } catch (error) {
      // A key taken: an attempt whose answer was lost made it, or someone else did.
      const keyTaken = error instanceof TfeApiError && error.status === 422 && error.invalidAttributes.includes("key");
      if (!mayHaveTakenEffect(error) && !keyTaken) throw error;
      // The last attempt too: a parameter it made without an answer would otherwise be left outside the state.
      const found = (await client.policySets.listParameters(setId)).find((parameter) => parameter.key === key);
      if (!found) {
        if (keyTaken || attempt >= maxAttempts) throw error;
        continue;
      }
      if (found.sensitive !== wanted.sensitive || (!found.sensitive && found.value !== wanted.value)) {
        throw new Error(
          `parameter "${key}" of policy set ${setId} appeared while this run created it, ` +
            `${found.sensitive === wanted.sensitive ? "with another value" : found.sensitive ? "sensitive" : "not sensitive"}: ` +
            "someone else wrote it, and it was left as it is. Run pulumi up again to make it the declared value " +
            "(pulumi refresh shows it first)",
        );
      }
      if (!found.sensitive) return found;
      return client.policySets.updateParameter(setId, found.id, wanted);
    }
  }
}

/**
 * Waits for the version a set read from version control made on its creation or a change of its repository (the
 * set's newest), as for an upload: its id once ready, the service's `error-message` when it errors.
 */
export async function awaitVcsVersion(
  client: TfeClient,
  setId: string,
  label: { name: string; directory: string },
): Promise<string | null> {
  for (let attempt = 0; ; attempt++) {
    const policySet = await client.policySets.read(setId);
    if (policySet.newestVersionId) return awaitVersion(client, policySet.newestVersionId, label);
    if (attempt >= 20) return null;
    await new Promise((done) => setTimeout(done, 250));
  }
}

/** How long `up` waits for an uploaded version to be read; `TFE_POLICY_SET_VERSION_TIMEOUT` (seconds) changes it. */
function versionTimeoutMs(): number {
  const seconds = Number(process.env.TFE_POLICY_SET_VERSION_TIMEOUT);
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : 10 * 60 * 1000;
}

/**
 * Uploads `archive` as a new version of the set and waits for the service to read it: the version's id once ready;
 * the service's own `error-message` when it errors. A version whose creation lost its answer stays pending and is
 * never used, so creating is simply tried again. Progress goes to the provider's output every 10 s.
 */
export async function uploadVersion(
  client: TfeClient,
  setId: string,
  archive: Uint8Array,
  label: { name: string; directory: string },
): Promise<string> {
  let version: Awaited<ReturnType<typeof client.policySets.createVersion>>;
  for (let attempt = 1; ; attempt++) {
    try {
      version = await client.policySets.createVersion(setId);
      break;
    } catch (error) {
      if (!mayHaveTakenEffect(error) || attempt >= 3) throw error;
    }
  }
  await client.policySets.uploadVersion(version, archive);
  return awaitVersion(client, version.id, label);
}

/** Polls a version until the service has read it: its id once ready; its `error-message` fails the run. */
async function awaitVersion(
  client: TfeClient,
  versionId: string,
  label: { name: string; directory: string },
): Promise<string> {
  const started = Date.now();
  let reported = started;
  for (let delayMs = 100; ; delayMs = Math.min(delayMs * 2, 2000)) {
    const read = await client.policySets.readVersion(versionId);
    if (read.status === "ready") return read.id;
    if (read.status === "errored") {
      throw new Error(
        `the service could not read version ${read.id} of ${label.directory}: ${read.errorMessage ?? "no reason given"}. ` +
          "The set keeps its last ready version",
      );
    }
    const elapsed = Date.now() - started;
    if (elapsed > versionTimeoutMs()) {
      throw new Error(
        `version ${read.id} of ${label.directory} is still ${read.status} after ${Math.round(elapsed / 1000)} s ` +
          "(TFE_POLICY_SET_VERSION_TIMEOUT): the set keeps its last ready version; run up again to check on it",
      );
    }
    if (Date.now() - reported >= 10_000) {
      reported = Date.now();
      console.error(
        `policy set "${label.name}": version ${read.id} is ${read.status} (${Math.round(elapsed / 1000)} s)`,
      );
    }
    await new Promise((done) => setTimeout(done, delayMs));
  }
}
