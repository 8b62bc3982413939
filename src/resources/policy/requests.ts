// The requests a `Policy` makes beyond one call each: a create that never duplicates, membership changes one set at a
// time, code downloads, and what an upload's answer says of the `updated-at` it set.

import type { TfeClient } from "../../client/client";
import { mayHaveTakenEffect, TfeApiError } from "../../client/errors";
import type {
  CreatePolicyOptions,
  Policy as ServicePolicy,
  UpdatePolicyOptions,
  UploadAnswer,
} from "../../client/policies";
import { maxPageSize } from "../../contract/policies";
import { cliCommand, packageDoc } from "../../process/package-version";
import { createOptions, recordedRemote, updateOptions } from "../property-table";
import { answersNotFound, deleteConfirmingGone, type ObjectAccess } from "../provider-context";
import { type PolicyInputs, type PolicyOutputs, policyProperties } from "./properties";

/**
 * The internal output that bounds when the service set the `updated-at` of our last upload of the policy's code,
 * until a read records the `updated-at` that upload set. The upload answers no body, and reading the policy back
 * for its `updated-at` cost a request per policy (600 requests for 200 creates where 400 do); without either, the
 * first refresh after every up downloaded each uploaded policy. An upload sets `updated-at` before it is answered,
 * so an `updated-at` no later than the latest the service's clock can have read at the answer is ours; a later one is
 * a change made since, and the refresh downloads the code. That latest time is the answer's `Date` second narrowed
 * by what every answer of the process told of the service's clock (client/server-clock.ts): about a round trip,
 * where the header alone left a whole second in which an upload by someone else (a CI job, a second stack) would be
 * taken for ours. A state written before records the header's second (uploadAnswerKey) and keeps that second.
 */
export const uploadSettledKey = "__uploadSettledBy";
export const uploadAnswerKey = "__uploadAnsweredAt";

export function withUploadAnswer(
  outs: PolicyOutputs,
  uploaded: UploadAnswer | undefined,
): PolicyOutputs & { [uploadAnswerKey]?: string; [uploadSettledKey]?: string } {
  if (uploaded?.settledBy) return { ...outs, [uploadSettledKey]: uploaded.settledBy.toISOString() };
  return uploaded?.answeredAt ? { ...outs, [uploadAnswerKey]: uploaded.answeredAt.toISOString() } : outs;
}

export function uploadAnswerOf(props: Partial<PolicyOutputs>): UploadAnswer | undefined {
  const recorded = props as Record<string, unknown>;
  const time = (key: string) => {
    const value = typeof recorded[key] === "string" ? Date.parse(recorded[key] as string) : Number.NaN;
    return Number.isNaN(value) ? undefined : new Date(value);
  };
  const [answeredAt, settledBy] = [time(uploadAnswerKey), time(uploadSettledKey)];
  return answeredAt || settledBy ? { answeredAt, settledBy } : undefined;
}

/** Whether `updatedAt` is one our upload can have set: no later than the latest the service's clock read then. */
export function setByUploadAnswered(updatedAt: string, answer: UploadAnswer): boolean {
  const at = Date.parse(updatedAt);
  if (answer.settledBy) return at <= answer.settledBy.getTime();
  return answer.answeredAt !== undefined && at < answer.answeredAt.getTime() + 1000;
}

/**
 * The policy joins the sets it is newly declared in, then leaves the ones it no longer is: one request per set, the
 * policy's id and code untouched, and never a moment in fewer sets than both lists share.
 */
export async function changeMembership(
  client: TfeClient,
  policyId: string,
  held: readonly string[] | undefined,
  declared: readonly string[],
  policy: ServicePolicy,
): Promise<ServicePolicy> {
  const before = new Set(held ?? []);
  const joins = declared.filter((setId) => !before.has(setId));
  const leaves = [...before].filter((setId) => !declared.includes(setId));
  if (joins.length + leaves.length === 0) return policy;
  for (const setId of joins) await client.policySets.addPolicies(setId, [policyId]);
  for (const setId of leaves) await client.policySets.removePolicies(setId, [policyId]);
  return {
    ...policy,
    policySetIds: [...new Set([...(policy.policySetIds ?? []), ...before, ...joins])].filter(
      (setId) => !leaves.includes(setId),
    ),
    policySetCount: Math.max(0, policy.policySetCount + joins.length - leaves.length),
  };
}

/** The policy as the outputs recorded it at the last operation. */
export function recorded(olds: PolicyOutputs): ServicePolicy {
  const remote = recordedRemote<Omit<ServicePolicy, "enforce" | "hasCode">>(policyProperties, olds);
  return { ...remote, enforce: [], hasCode: olds.codeHash !== null };
}

export function attributeChanges(olds: Partial<PolicyOutputs>, news: PolicyInputs): UpdatePolicyOptions {
  return updateOptions<UpdatePolicyOptions>(policyProperties, olds, news);
}

export function isNameTaken(error: unknown): boolean {
  return error instanceof TfeApiError && error.status === 422 && error.invalidAttributes.includes("name");
}

/**
 * POST is not retried blindly: after a timeout or 5xx, the policy may exist already. Look for it by name first,
 * and take it only when it is the one just sent (no code yet, same attributes); otherwise send the POST again.
 * "No code yet" is a null `updated-at` (spec 2.1, service-facts): a list response may link to a download before
 * any upload (spec 2.1), so `hasCode` could take the policy just created for someone else's.
 */
export async function createWithoutDuplicate(client: TfeClient, inputs: PolicyInputs): Promise<ServicePolicy> {
  const options = createOptions<CreatePolicyOptions>(policyProperties, inputs);
  const maxAttempts = 3;
  const isTheOneSent = (policy: ServicePolicy | undefined) =>
    policy !== undefined && policy.updatedAt === null && policy.enforcementLevel === inputs.enforcementLevel;
  for (let attempt = 1; ; attempt++) {
    try {
      return await client.policies.create(inputs.organization, options);
    } catch (error) {
      // A name taken on a retry: the attempt whose answer was lost made it after the lookup that did not find it.
      if (attempt > 1 && isNameTaken(error)) {
        const made = await client.policies.findByName(inputs.organization, inputs.name);
        if (isTheOneSent(made)) return made as ServicePolicy;
        throw error;
      }
      if (!mayHaveTakenEffect(error)) throw error;
      // The last attempt too: a policy it made without an answer would otherwise be left outside the state.
      const existing = await client.policies.findByName(inputs.organization, inputs.name);
      if (isTheOneSent(existing)) return existing as ServicePolicy;
      if (existing || attempt >= maxAttempts) throw error;
    }
  }
}

/** The refusal of a taken name, with every way out: each fits another cause. */
export function nameTakenMessage(inputs: Pick<PolicyInputs, "name" | "organization">, id: string): string {
  return (
    `a policy named "${inputs.name}" already exists in organization "${inputs.organization}" (${id}), and this ` +
    "resource did not create it. If the resource was renamed or moved (into or out of a component, a PolicyFolder " +
    "renamed), give it its old name with the aliases resource option; to manage that policy here, set " +
    `adoptExisting: true; if a killed pulumi up created it, run ${cliCommand()} pending-creates --apply ` +
    `(${packageDoc("troubleshooting.md")}: After a cancelled run); else choose another name`
  );
}

/**
 * Every policy of `organization`, by id, with the policy sets each is in where the list says; or undefined when the
 * organization holds so many more policies than the stack reads that its other pages would cost more requests than
 * a show per read (a stack of 10 policies in an organization of 5,000).
 */
export async function listPolicies(
  client: TfeClient,
  organization: string,
  reads: () => number,
): Promise<ReadonlyMap<string, ServicePolicy> | undefined> {
  const policies = new Map<string, ServicePolicy>();
  let pageNumber = 1;
  for (;;) {
    const page = await client.policies.list(organization, {
      pageSize: maxPageSize,
      includePolicySets: true,
      pageNumber,
    });
    for (const policy of page.items) policies.set(policy.id, policy);
    if (pageNumber === 1 && page.pagination.totalPages - 1 > reads()) return undefined;
    const next = page.pagination.nextPage;
    // A next-page that does not move forward (a misbehaving proxy or server) would otherwise loop forever.
    if (next === null || next <= pageNumber) return policies;
    pageNumber = next;
  }
}

/** The policies API, as {@link deleteConfirmingGone} and {@link answersNotFound} reach it. */
export function policyAccess(client: TfeClient): ObjectAccess {
  return {
    what: "policy",
    remove: (id) => client.policies.delete(id),
    read: (id) => client.policies.read(id),
    listOne: (organization) => client.policies.list(organization, { pageSize: 1 }),
  };
}

export async function downloadCode(client: TfeClient, id: string): Promise<Buffer | undefined> {
  try {
    return await client.policies.download(id);
  } catch (error) {
    if (error instanceof TfeApiError && error.status === 404) return undefined;
    throw error;
  }
}
