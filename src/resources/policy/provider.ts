// The `Policy` provider: check, diff (with the guard), create, read, update and delete, as the engine calls them.

import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type * as pulumi from "@pulumi/pulumi";
import type { TfeClient } from "../../client/client";
import { deletedUnlessGone, TfeApiError } from "../../client/errors";
import type { Policy as ServicePolicy, UploadAnswer } from "../../client/policies";
import { maxNameLength } from "../../contract/limits";
import {
  maxPolicyCodeBytes,
  type PolicyKind,
  policyKinds,
  policyNamePattern,
  policyRuleViolations,
} from "../../contract/policies";
import { FileAccess } from "../../policy-code/file-access";
import { Opa } from "../../policy-code/opa";
import { dialectAdvice, queryProblems, regoVersionWords } from "../../policy-code/rego";
import { decodeUtf8, sentinelCodeProblems } from "../../policy-code/sentinel";
import { declareMembership, ownerOf, twiceDeclared } from "../memberships";
import { checkedThisOperation, stampChecked } from "../operation";
import { argumentFailures, argumentsOf, importing } from "../property-table";
import {
  answersNotFound,
  type CheckFailure,
  ContextProvider,
  changedProperties,
  checkIdList,
  checkOrganization,
  type DiffWithChanges,
  deleteConfirmingGone,
  GovernanceRefusal,
  isUnknown,
  NameListings,
  partialFailure,
  SharedListings,
  takenNameHolder,
  unknownValue,
} from "../provider-context";
import {
  declaredMemberships,
  defaultEnforcementLevel,
  hashCode,
  loadCode,
  type PolicyInputs,
  type PolicyOutputs,
  policyEnforcement,
  policyProperties,
  policySetIdShape,
  replacingProperties,
  toOutputs,
  updatableProperties,
} from "./properties";
import {
  attributeChanges,
  changeMembership,
  createWithoutDuplicate,
  downloadCode,
  isNameTaken,
  listPolicies,
  nameTakenMessage,
  policyAccess,
  recorded,
  setByUploadAnswered,
  uploadAnswerOf,
  uploadSettledKey,
  withUploadAnswer,
} from "./requests";
import { leavesPolicy, makesPolicy, sayWhomItBlocks } from "./stricter";

/** Pulumi's provider for `Policy`, run in the engine's dynamic-provider process through the thin shim. */
export class PolicyProvider extends ContextProvider implements pulumi.dynamic.ResourceProvider {
  private readonly listings = new SharedListings<ServicePolicy>();
  private readonly names = new NameListings((organization) => this.context.client.policies.listAll(organization));

  /** Every input rule, before any request; unknown values (preview) pass. */
  async check(olds: Record<string, unknown>, news: Record<string, unknown>): Promise<pulumi.dynamic.CheckResult> {
    const failures = argumentFailures(policyProperties, news, "Policy");
    if (failures.length > 0) return { inputs: news, failures };
    const inputs: Record<string, unknown> = { ...news };
    delete inputs.enforce;

    checkOrganization(failures, news.organization);
    const name = news.name;
    if (!isUnknown(name) && (typeof name !== "string" || !policyNamePattern.test(name))) {
      failures.push({
        property: "name",
        reason: `name ${JSON.stringify(name)} may hold only letters, digits, '-' and '_': e.g. "require-tags"`,
      });
    } else if (typeof name === "string" && name.length > maxNameLength) {
      failures.push({
        property: "name",
        reason: `name is ${name.length} characters long; the limit is ${maxNameLength}: shorten it`,
      });
    }
    const kind = news.kind ?? "sentinel";
    inputs.kind = kind;
    if (!isUnknown(kind) && !policyKinds.includes(kind as PolicyKind)) {
      failures.push({
        property: "kind",
        reason:
          kind === "tfpolicy"
            ? 'kind "tfpolicy" is no kind of individual policy: Terraform policy lives in a policy set\'s versions; ' +
              'declare a PolicySet with kind "tfpolicy" and the folder of its .policy.hcl files (directory)'
            : `kind ${JSON.stringify(kind)} is not valid: use "sentinel" or "opa"`,
      });
    }

    const enforceMode = this.checkEnforce(failures, news.enforce);
    inputs.enforcementLevel = news.enforcementLevel ?? enforceMode;
    const knownKind = policyKinds.includes(kind as PolicyKind) ? (kind as PolicyKind) : undefined;
    if (inputs.enforcementLevel === undefined && knownKind)
      inputs.enforcementLevel = defaultEnforcementLevel[knownKind];
    inputs.description = news.description ?? null;
    inputs.query = news.query ?? null;
    inputs.policySetIds = checkIdList(failures, "policySetIds", news.policySetIds, policySetIdShape);
    inputs.adoptExisting = news.adoptExisting === true;
    inputs.allowWeakening = news.allowWeakening === true;
    if (news.allowStricter === true) inputs.allowStricter = true;

    if (knownKind && !isUnknown(inputs.enforcementLevel) && !isUnknown(inputs.query)) {
      for (const violation of policyRuleViolations({
        kind: knownKind,
        query: inputs.query as string | null,
        enforcementLevel: inputs.enforcementLevel as string,
        enforce:
          enforceMode !== undefined && !isUnknown(enforceMode) && news.enforcementLevel !== undefined
            ? [{ path: "", mode: enforceMode as string }]
            : undefined,
        isCreate: true,
        levelName: "enforcementLevel",
      })) {
        if (violation.property === "enforcementLevel" && news.enforcementLevel === undefined && enforceMode) {
          // The level came from the deprecated enforce entry: name what the program wrote.
          failures.push({ property: "enforce", reason: `enforce mode ${violation.message}` });
          continue;
        }
        failures.push({ property: violation.property, reason: `${violation.property} ${violation.message}` });
      }
    }

    Object.assign(inputs, this.checkCode(failures, news, kind));
    if (kind === "opa" && failures.length === 0) await this.checkRego(failures, news, inputs.query);
    await this.checkPolicySets(failures, olds, inputs);
    const holder = await takenNameHolder(failures, olds, inputs, this.names);
    if (holder && !inputs.adoptExisting) {
      failures.push({
        property: "name",
        reason: nameTakenMessage(inputs as { name: string; organization: string }, holder.id),
      });
    } else if (holder && failures.length === 0) {
      const held = await this.checkAdoption(failures, holder.id, inputs);
      // Adopting writes the program's level over the service's: a raise, said as any other.
      if (held && failures.length === 0) {
        leavesPolicy(holder.id, inputs as unknown as PolicyInputs);
        await sayWhomItBlocks(this.context, holder.id, held, inputs as unknown as PolicyInputs);
      }
    }
    // A create has no diff: a new policy at a blocking level is said here, at check, whom it would block.
    if (!holder && failures.length === 0 && Object.keys(olds).length === 0) {
      makesPolicy(inputs as unknown as PolicyInputs);
      await sayWhomItBlocks(this.context, undefined, undefined, inputs as unknown as PolicyInputs);
    }
    return { inputs: stampChecked(inputs), failures };
  }

  /**
   * OPA code checked with `opa` in the dialect of the sets the policy joins, and its query against the rules it
   * defines: what the service would refuse, or evaluate as nothing, fails preview.
   */
  private async checkRego(failures: CheckFailure[], news: Record<string, unknown>, query: unknown) {
    const { code, codeFile, regoVersion = "v0" } = news;
    if (isUnknown(code) || isUnknown(codeFile) || isUnknown(regoVersion) || isUnknown(query)) return;
    if (regoVersion !== "v0" && regoVersion !== "v1") {
      failures.push({
        property: "regoVersion",
        reason: `regoVersion ${JSON.stringify(regoVersion)} is not valid: use "v0" or "v1"`,
      });
      return;
    }
    const property = code !== undefined ? "code" : "codeFile";
    const fail = (reason: string) => failures.push({ property: "", reason: `${property}: ${reason}` });
    const opa = await Opa.find();
    if (!opa) {
      this.context.missingChecker(fail, "Rego", "no opa binary on PATH");
      return;
    }
    const directory = mkdtempSync(join(tmpdir(), "tfe-governance-rego-"));
    try {
      const file = "policy.rego";
      writeFileSync(
        join(directory, file),
        code !== undefined ? String(code) : loadCode({ codeFile: String(codeFile) }),
      );
      const problems = await opa.check([file], regoVersion, directory);
      const shown = (text: string) => (codeFile !== undefined ? text.replaceAll(file, String(codeFile)) : text);
      for (const problem of problems) {
        fail(
          shown(
            `${problem.location ? `${file}:${problem.location.row}: ` : ""}${problem.code}: ${problem.message} (opa check)`,
          ),
        );
      }
      for (const advice of await dialectAdvice(
        opa,
        [file],
        problems,
        regoVersion,
        directory,
        regoVersionWords(regoVersion),
      )) {
        fail(shown(advice));
      }
      if (problems.length > 0 || typeof query !== "string") return;
      const queries = [{ at: "query", query }];
      for (const problem of await queryProblems(opa, [file], regoVersion, directory, queries, "the policy's code")) {
        failures.push({ property: "", reason: problem });
      }
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  }

  /**
   * Every policy set the policy newly joins (or all of them, when its kind changes) exists, is visible, holds
   * individual policies and is of the policy's kind: the service refuses the rest half-way through `up` (a kind
   * change would delete the policy, then fail to make its replacement). One read per set per operation.
   */
  private async checkPolicySets(
    failures: CheckFailure[],
    olds: Record<string, unknown>,
    inputs: Record<string, unknown>,
  ) {
    const { kind, policySetIds } = inputs;
    if (failures.length > 0 || !Array.isArray(policySetIds) || !policyKinds.includes(kind as PolicyKind)) return;
    const held = olds.kind === kind && Array.isArray(olds.policySetIds) ? (olds.policySetIds as unknown[]) : [];
    const joining = policySetIds.filter(
      (id): id is string => typeof id === "string" && !isUnknown(id) && !held.includes(id),
    );
    const problems = await Promise.all(
      joining.map(async (setId) => {
        const set = await this.context.policySetOf(setId);
        if (!set) {
          return `policySetIds: policy set ${setId} does not exist, or this token cannot see it: check the id`;
        }
        if (set.kind !== kind) {
          return (
            `policySetIds: policy set ${setId} ("${set.name}") holds ${set.kind} policies, and this policy is ` +
            `${kind}: a set holds one kind. Name ${kind} sets here, or keep kind ${set.kind}`
          );
        }
        if (set.versioned) {
          return (
            `policySetIds: policy set ${setId} ("${set.name}") holds versions (a folder or version control), and ` +
            "such a set takes no individual policies: put the policy in its folder, or name a set of policies"
          );
        }
        return undefined;
      }),
    );
    for (const problem of problems) if (problem) failures.push({ property: "", reason: problem });
  }

  /**
   * Adopting a policy compares the program with what the service holds: a level left out or lowered, which `up`
   * would write, weakens it like any change. Memberships only grow on adoption.
   */
  private async checkAdoption(
    failures: CheckFailure[],
    id: string,
    inputs: Record<string, unknown>,
  ): Promise<PolicyOutputs | undefined> {
    const held = await this.context.client.policies.read(id);
    if (held.kind !== inputs.kind) {
      failures.push({
        property: "kind",
        reason: `cannot adopt policy "${String(inputs.name)}" (${id}): it is a ${held.kind} policy and kind is ${String(inputs.kind)}; set kind: "${held.kind}"`,
      });
      return undefined;
    }
    const refusal = await this.context.judge({
      subject: `adopting policy "${String(inputs.name)}" (${id})`,
      what: "policy",
      before: policyEnforcement({ ...held, policySetIds: [] }),
      after: policyEnforcement(inputs),
      allowedOnResource: inputs.allowWeakening === true,
      urn: inputs.__urn,
    });
    if (refusal) failures.push({ property: "", reason: refusal });
    // What the adoption starts from, as whom a raise would block compares with it: the service's level and kind.
    return {
      kind: held.kind,
      enforcementLevel: held.enforcementLevel ?? "advisory",
      policySetIds: [],
    } as unknown as PolicyOutputs;
  }

  private checkEnforce(failures: CheckFailure[], enforce: unknown): unknown {
    if (enforce === undefined || isUnknown(enforce)) return enforce;
    const entries = Array.isArray(enforce) ? enforce : [];
    // An entry that is an output of another resource is unknown as a whole during preview, not only its mode.
    if (entries.length === 1 && isUnknown(entries[0])) return unknownValue;
    const mode = (entries[0] as { mode?: unknown } | undefined)?.mode;
    if (entries.length !== 1 || (typeof mode !== "string" && !isUnknown(mode))) {
      failures.push({
        property: "enforce",
        reason: "enforce must hold exactly one { mode } entry (policies have one file): better, use enforcementLevel",
      });
      return undefined;
    }
    return mode;
  }

  private checkCode(
    failures: CheckFailure[],
    news: Record<string, unknown>,
    kind: unknown,
  ): Partial<Record<string, unknown>> {
    const checked = (property: "code" | "codeFile", bytes: Buffer, shown: string) => {
      // One check of Sentinel code for every resource: what PolicyFolder and PolicySet refuse, Policy refuses too.
      if (kind !== "sentinel") return;
      for (const problem of sentinelCodeProblems(decodeUtf8(bytes), shown)) {
        failures.push({ property, reason: `${property}: ${problem}` });
      }
    };
    const { code, codeFile } = news;
    if ((code === undefined) === (codeFile === undefined)) {
      failures.push({
        property: code === undefined ? "codeFile" : "code",
        reason: "set exactly one of codeFile (a path to the policy's file) and code (the policy's text)",
      });
      return { codeHash: null, codeSize: 0 };
    }
    if (isUnknown(code) || isUnknown(codeFile)) return { codeHash: unknownValue, codeSize: unknownValue };
    if (code !== undefined) {
      if (typeof code !== "string") {
        failures.push({ property: "code", reason: "code must be the policy's text" });
        return {};
      }
      const bytes = Buffer.from(code, "utf8");
      if (bytes.byteLength > maxPolicyCodeBytes) {
        failures.push({ property: "code", reason: `code is ${bytes.byteLength} bytes; the service's limit is 10 MB` });
      }
      checked("code", bytes, "");
      return { codeHash: hashCode(bytes), codeSize: bytes.byteLength };
    }
    if (typeof codeFile !== "string" || codeFile === "") {
      failures.push({ property: "codeFile", reason: "codeFile must be a path to the policy's file" });
      return {};
    }
    const allowed = FileAccess.forFile(codeFile).check(codeFile, `codeFile ${codeFile}`);
    if ("problem" in allowed) {
      failures.push({ property: "codeFile", reason: `${allowed.problem} (relative to the program's directory)` });
      return { codeHash: null, codeSize: 0 };
    }
    const path = allowed.path;
    try {
      const size = statSync(path).size;
      if (size > maxPolicyCodeBytes) {
        failures.push({
          property: "codeFile",
          reason: `codeFile ${codeFile} is ${size} bytes; the service accepts at most ${maxPolicyCodeBytes} (10 MB)`,
        });
        return { codeHash: null, codeSize: size };
      }
      const bytes = readFileSync(path);
      checked("codeFile", bytes, codeFile);
      return { codeHash: hashCode(bytes), codeSize: bytes.byteLength };
    } catch (error) {
      const reason = (error as NodeJS.ErrnoException).code === "ENOENT" ? "does not exist" : "cannot be read";
      failures.push({
        property: "codeFile",
        reason: `codeFile ${codeFile} ${reason} (resolved to ${path}, relative to the program's directory)`,
      });
      return { codeHash: null, codeSize: 0 };
    }
  }

  /**
   * The change against what the service enforces as the state records it (a refresh reads it anew): a lowered
   * level, a set left, or a kind change (which cannot be compared) fails here, at preview and before any request,
   * unless allowed.
   */
  async diff(id: string, olds: PolicyOutputs, news: PolicyInputs): Promise<DiffWithChanges> {
    const replaces = changedProperties(olds, news, replacingProperties);
    const updates = changedProperties(olds, news, updatableProperties);
    const result = {
      changes: replaces.length + updates.length > 0,
      changed: [...replaces, ...updates].map((property) => [property]),
      replaces,
      // Names are unique in an organization: a replacement that keeps the name must delete the old one first.
      deleteBeforeReplace: replaces.length > 0 && olds.name === news.name && olds.organization === news.organization,
    };
    // The diff a refresh asks for, to show what changed outside, is no change to guard.
    if (!checkedThisOperation(news)) return result;
    // The sets of this operation judge it as the program leaves it (a raise and a set taking it in, in one preview).
    leavesPolicy(id, news);
    const here = ownerOf("Policy", "policySetIds", news as unknown as Record<string, unknown>);
    for (const setId of Array.isArray(news.policySetIds) ? news.policySetIds : []) {
      if (typeof setId !== "string" || isUnknown(setId)) continue;
      const other = declareMembership(id, setId, here);
      if (other) throw new GovernanceRefusal(twiceDeclared(id, setId, here, other));
    }
    // One read of the policy on the service answers both the guard and the sets that hold it (the impact read).
    const changesEnforcement =
      replaces.length > 0 || updates.includes("enforcementLevel") || updates.includes("policySetIds");
    const held = changesEnforcement ? await this.readPolicy(this.context.client, id, olds.organization) : undefined;
    const refusal = await this.context.judge({
      subject: `policy "${news.name}"`,
      what: "policy",
      before: policyEnforcement(olds),
      // A change of what the policy enforces is compared with the service too: a level raised outside since the
      // last refresh is not the state's, and an update or a replacement would lower it. Other changes (code, a
      // description) send nothing of it, and read nothing.
      onService: held && policyEnforcement(declaredMemberships(held, olds.policySetIds)),
      after: policyEnforcement(news),
      allowedOnResource: news.allowWeakening === true,
      urn: (news as unknown as Record<string, unknown>).__urn,
    });
    if (refusal) throw new GovernanceRefusal(refusal);
    if (updates.includes("enforcementLevel") || updates.includes("policySetIds")) {
      await sayWhomItBlocks(this.context, id, olds, news, async () => held);
    }
    return result;
  }

  async create(inputs: PolicyInputs): Promise<pulumi.dynamic.CreateResult> {
    const client = this.context.client;
    const { policy, createdHere } = await this.createOrAdopt(client, inputs);
    const code = loadCode(inputs);
    let uploaded: UploadAnswer | undefined;
    try {
      // An adopted policy that already holds this code keeps it: uploading the same bytes would still be a write.
      const heldCode = createdHere || !policy.hasCode ? undefined : await downloadCode(client, policy.id);
      if (!heldCode?.equals(code)) uploaded = await client.policies.upload(policy.id, code);
    } catch (error) {
      const failed = (outcome: string) =>
        new Error(`uploading the code of policy "${inputs.name}" failed; ${outcome}: ${(error as Error).message}`);
      if (!createdHere) throw failed("the adopted policy keeps its previous code");
      const deleteError = await deletedUnlessGone(() => client.policies.delete(policy.id)).then(
        () => undefined,
        (cause: Error) => cause,
      );
      if (!deleteError) throw failed("the policy just created was deleted again, so nothing is left without code");
      // It stays on the service, in the sets it was created in: the stack records it (no code hash, so the next up
      // uploads the code) rather than leave it with no owner.
      throw partialFailure(
        failed(
          `deleting it again failed too (${deleteError.message}), so policy ${policy.id} is left without code; the ` +
            "stack records it, and the next up uploads its code",
        ),
        policy.id,
        toOutputs(inputs, policy, null, 0),
      );
    }
    const outs = toOutputs(inputs, uploaded ? { ...policy, updatedAt: null } : policy, hashCode(code), code.byteLength);
    return { id: policy.id, outs: withUploadAnswer(outs, uploaded) };
  }

  private async createOrAdopt(
    client: TfeClient,
    inputs: PolicyInputs,
  ): Promise<{ policy: ServicePolicy; createdHere: boolean }> {
    // Adopting looks first: a POST refused for the taken name is still a write request, one per adopted policy.
    let found = inputs.adoptExisting ? await client.policies.findByName(inputs.organization, inputs.name) : undefined;
    if (!found) {
      try {
        const policy = await createWithoutDuplicate(client, inputs);
        this.context.claimed.set(policy.id, "created");
        return { policy, createdHere: true };
      } catch (error) {
        if (!isNameTaken(error)) throw error;
        found = await client.policies.findByName(inputs.organization, inputs.name);
        if (!found) throw error;
        // Same content is not the same owner: a renamed resource, or a second one declaring the name, would take
        // over the policy and the old one's delete would then remove it.
        if (!inputs.adoptExisting) throw new Error(nameTakenMessage(inputs, found.id));
      }
    }
    if (this.context.claimed.has(found.id)) {
      throw new Error(
        `policy "${inputs.name}" (${found.id}) is already managed by another resource of this stack: declare it once`,
      );
    }
    this.context.claimed.set(found.id, "adopted");
    try {
      return { policy: await this.adopt(client, found.id, inputs), createdHere: false };
    } catch (error) {
      this.context.claimed.delete(found.id);
      throw error;
    }
  }

  /** Takes over the policy `id` holding the declared name, writing only what differs from the declaration. */
  private async adopt(client: TfeClient, id: string, inputs: PolicyInputs): Promise<ServicePolicy> {
    // Read by id: a list response may leave the policy-sets relationship out (spec 2.1).
    const existing = await client.policies.read(id);
    if (existing.kind !== inputs.kind) {
      throw new Error(
        `cannot adopt policy "${inputs.name}": it is a ${existing.kind} policy and kind is ${inputs.kind}; set kind: "${existing.kind}"`,
      );
    }
    const changes = attributeChanges(toOutputs(inputs, existing, null, 0), inputs);
    const updated = Object.keys(changes).length > 0 ? await client.policies.update(existing.id, changes) : existing;
    // The policy joins the sets it declares; the sets it is in besides are other resources' memberships.
    const held = existing.policySetIds ?? [];
    const declaredHeld = held.filter((setId) => inputs.policySetIds.includes(setId));
    return changeMembership(client, existing.id, declaredHeld, inputs.policySetIds, { ...updated, policySetIds: held });
  }

  async read(id: string, props: Partial<PolicyOutputs>): Promise<pulumi.dynamic.ReadResult> {
    const client = this.context.client;
    const policy = await this.readPolicy(client, id, props.organization);
    // Deleted outside Pulumi: an empty result drops the resource from state.
    if (!policy) return {};
    const outs = toOutputs(props as PolicyInputs, policy, null, 0);
    if (this.codeUnchanged(policy, props)) {
      Object.assign(outs, { codeHash: props.codeHash, codeSize: props.codeSize });
    } else {
      const code = policy.hasCode ? await downloadCode(client, id) : undefined;
      Object.assign(outs, { codeHash: code ? hashCode(code) : null, codeSize: code?.byteLength ?? 0 });
      // Inline code is read back as it is; a policy declared nowhere yet (`pulumi import`) gets its code inline.
      const declaredNowhere = props.code === undefined && props.codeFile === undefined;
      if ((props.code !== undefined || declaredNowhere) && code) outs.code = code.toString("utf8");
    }
    const { policyId: _id, policySetCount: _count, updatedAt: _updated, ...inputs } = outs;
    return {
      id,
      props: outs,
      inputs: importing(props) ? argumentsOf(policyProperties, outs as unknown as Record<string, unknown>) : inputs,
    };
  }

  /**
   * Whether the code the state records is still the code on the service, without downloading it: every upload moves
   * the policy's `updated-at` (null until the first; service facts), and the state keeps the `updated-at` at which
   * its code was last read, or the latest the service set it at our last upload (see {@link uploadSettledKey}).
   * `tfe:verifyCodeOnRefresh` downloads regardless.
   */
  private codeUnchanged(policy: ServicePolicy, props: Partial<PolicyOutputs>): boolean {
    if (this.context.verifyCodeOnRefresh || props.codeHash == null || props.codeSize === undefined) return false;
    if (policy.updatedAt === null) return false;
    if (props.updatedAt != null) return policy.updatedAt === props.updatedAt;
    const answer = uploadAnswerOf(props);
    return answer !== undefined && setByUploadAnswered(policy.updatedAt, answer);
  }

  /**
   * The policy as the service holds it, or undefined when it is gone. Refreshing a stack reads every policy at once:
   * the organization's list (100 a page) answers all but the first read, instead of a show each.
   */
  private async readPolicy(
    client: TfeClient,
    id: string,
    organization: string | undefined,
  ): Promise<ServicePolicy | undefined> {
    const listed =
      organization === undefined
        ? undefined
        : await this.listings.listing(organization, (reads) => listPolicies(client, organization, reads));
    if (listed) {
      const policy = listed.get(id);
      // Missing from a listing read page by page is confirmed by a show: offset pages skip an item when another is
      // deleted between two pages. A list may leave the policy sets out of a policy that has some.
      if (policy && policy.policySetIds !== undefined) return policy;
      if (policy?.policySetCount === 0) return { ...policy, policySetIds: [] };
    }
    try {
      return await client.policies.read(id);
    } catch (error) {
      if (!(error instanceof TfeApiError && error.status === 404)) throw error;
      if (await answersNotFound(policyAccess(client), organization)) return undefined;
      throw new Error(
        `reading policy ${id} failed: the service answered 404, and this token cannot list the policies of ` +
          `organization "${organization}" either, so the token may lack access rather than the policy be ` +
          "gone; it stays in state. Check tfe:token, TFE_TOKEN or the credentials file",
      );
    }
  }

  async update(id: string, olds: PolicyOutputs, news: PolicyInputs): Promise<pulumi.dynamic.UpdateResult> {
    const client = this.context.client;
    const changes = attributeChanges(olds, news);
    // The PATCH answers with the policy as the service holds it: nothing is read back afterwards.
    const patched = Object.keys(changes).length > 0 ? await client.policies.update(id, changes) : recorded(olds);
    const policy = await changeMembership(client, id, olds.policySetIds, news.policySetIds, patched);
    let codeHash = olds.codeHash;
    let codeSize = olds.codeSize;
    const codeChanged = olds.codeHash !== news.codeHash;
    let uploaded: UploadAnswer | undefined;
    if (codeChanged) {
      const code = loadCode(news);
      uploaded = await client.policies.upload(id, code);
      codeHash = hashCode(code);
      codeSize = code.byteLength;
    }
    // Without an upload the state keeps what it knew of its code (the updated-at at which it was last verified, or
    // when the service answered our last upload): a PATCH may move updated-at, and an upload by someone else before
    // the PATCH would otherwise never be downloaded.
    const outs = toOutputs(news, { ...policy, updatedAt: uploaded ? null : olds.updatedAt }, codeHash, codeSize);
    return { outs: withUploadAnswer(outs, uploaded ?? uploadAnswerOf(olds)) };
  }

  async delete(id: string, props: Partial<PolicyOutputs> = {}): Promise<void> {
    // Another resource of this stack adopted the policy in this operation (a rename with adoptExisting): this
    // resource hands it over rather than deleting what the stack now holds under its new name.
    if (this.context.adoptedThisOperation(id)) return;
    await deleteConfirmingGone(policyAccess(this.context.client), id, props.organization);
  }
}
