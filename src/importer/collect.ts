import type { TfeClient } from "../client/client";
import { TfeApiError } from "../client/errors";
import type { Policy } from "../client/policies";
import type { RegistryModuleAddress, RegistryModuleVersionSummary } from "../client/registry";
import type { PolicyKind, PolicySetKind } from "../contract/policies";
import type { ImportedDeprecation, ImportedPolicy, ImportedPolicySet } from "./model";

export interface CollectOptions {
  organization: string;
  search?: string | undefined;
  /** Only this kind of policies and sets; the Policies API holds no Terraform policy, so `tfpolicy` lists sets only. */
  kind?: PolicySetKind | undefined;
  /** Keep only policies in at least one of these policy sets. */
  policySetIds?: readonly string[] | undefined;
}

/** What the collector says while it works; the command prints it on stderr. */
export interface ProgressReporter {
  /** `done` of `total` (unknown while listing) items of a step. */
  advance(step: string, done: number, total?: number): void;
  /** A step is over; `summary` says what it did. */
  finish(step: string, summary: string): void;
}

/**
 * Downloads in flight at once. The client's limiter paces requests to the service's rate either way; a few in
 * flight keep that pace when each answer takes a while (the download is a redirect and a second request).
 */
const downloadConcurrency = 8;

async function forEachConcurrently<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

function describe(error: unknown, subject: string, fix: string): Error {
  if (error instanceof TfeApiError && error.status === 404) {
    return new Error(`${subject}: the service answered 404, so it does not exist or the token cannot see it; ${fix}`);
  }
  // The cause stays: the command says a refused token in its own terms (tokenRefusedByCommand).
  return new Error(`${subject}: ${(error as Error).message}`, { cause: error });
}

async function listPolicies(client: TfeClient, options: CollectOptions, progress: ProgressReporter): Promise<Policy[]> {
  const listed: Policy[] = [];
  if (options.kind === "tfpolicy") {
    progress.finish("listing policies", "none: Terraform policies live in their sets' versions only");
    return listed;
  }
  try {
    for await (const policy of client.policies.listAll(options.organization, {
      ...(options.search !== undefined ? { search: options.search } : {}),
      ...(options.kind !== undefined ? { kind: options.kind as PolicyKind } : {}),
      includePolicySets: true,
    })) {
      listed.push(policy);
      progress.advance("listing policies", listed.length);
    }
  } catch (error) {
    throw describe(
      error,
      `listing the policies of organization "${options.organization}" failed`,
      "check --organization, and that the token may manage policies there",
    );
  }
  progress.finish("listing policies", `${listed.length} listed`);
  return listed;
}

/**
 * The policy's sets. A list response may leave the relationship out (spec 2.1); the service also leaves it out
 * for a policy in no set, which its count tells apart without another request.
 */
async function policySetIdsOf(client: TfeClient, policy: Policy): Promise<string[]> {
  if (policy.policySetIds !== undefined) return policy.policySetIds;
  if (policy.policySetCount === 0) return [];
  return (await client.policies.read(policy.id)).policySetIds ?? [];
}

async function downloadCode(client: TfeClient, policy: Policy): Promise<Buffer | null> {
  if (!policy.hasCode) return null;
  try {
    return await client.policies.download(policy.id);
  } catch (error) {
    // Before any upload the download answers 404 (service-facts): a policy without code, which the plan reports.
    if (error instanceof TfeApiError && error.status === 404) return null;
    throw describe(
      error,
      `downloading the code of policy "${policy.name}" (${policy.id}) failed`,
      "run the import again",
    );
  }
}

export async function collectPolicies(
  client: TfeClient,
  options: CollectOptions,
  progress: ProgressReporter,
): Promise<ImportedPolicy[]> {
  const listed = await listPolicies(client, options, progress);
  const wanted = options.policySetIds ?? [];
  const imported: ImportedPolicy[] = [];
  let examined = 0;
  await forEachConcurrently(listed, downloadConcurrency, async (policy) => {
    const policySetIds = await policySetIdsOf(client, policy);
    if (wanted.length === 0 || policySetIds.some((id) => wanted.includes(id))) {
      imported.push({
        id: policy.id,
        name: policy.name,
        description: policy.description,
        kind: policy.kind,
        query: policy.query,
        enforcementLevel: policy.enforcementLevel,
        policySetIds: [...policySetIds].sort(),
        code: await downloadCode(client, policy),
      });
    }
    progress.advance("downloading code", ++examined, listed.length);
  });
  const withCode = imported.filter((policy) => policy.code !== null).length;
  const filtered = wanted.length > 0 ? `, ${imported.length} of them in the policy sets asked for` : "";
  progress.finish("downloading code", `${withCode} downloaded${filtered}`);
  return imported;
}

export async function collectDeprecations(
  client: TfeClient,
  modules: readonly RegistryModuleAddress[],
  progress: ProgressReporter,
): Promise<ImportedDeprecation[]> {
  const deprecations: ImportedDeprecation[] = [];
  for (const [index, module] of modules.entries()) {
    let versions: RegistryModuleVersionSummary[];
    try {
      versions = await client.registry.listModuleVersions(module);
    } catch (error) {
      throw describe(
        error,
        `reading the versions of module ${module.namespace}/${module.name}/${module.provider} failed`,
        "check --module (NAMESPACE/NAME/PROVIDER, the namespace being the organization)",
      );
    }
    for (const entry of versions) {
      if (entry.deprecation === null) continue;
      deprecations.push({
        organization: module.namespace,
        moduleName: module.name,
        moduleProvider: module.provider,
        version: entry.version,
        reason: entry.deprecation.reason,
        link: entry.deprecation.link,
      });
    }
    progress.advance("reading module versions", index + 1, modules.length);
  }
  if (modules.length > 0)
    progress.finish("reading module versions", `deprecated versions found: ${deprecations.length}`);
  return deprecations;
}

/**
 * The organization's policy sets, each read whole (a list answer may leave relationships out), with the parameters
 * of Sentinel sets; only those of `options.kind`, or in `options.policySetIds`, where the command narrows.
 */
export async function collectPolicySets(
  client: TfeClient,
  options: CollectOptions,
  progress: ProgressReporter,
): Promise<ImportedPolicySet[]> {
  const wanted = options.policySetIds ?? [];
  const listed = [];
  try {
    for await (const policySet of client.policySets.listAll(options.organization)) {
      if (options.kind !== undefined && policySet.kind !== options.kind) continue;
      if (wanted.length > 0 && !wanted.includes(policySet.id)) continue;
      listed.push(policySet);
    }
  } catch (error) {
    throw describe(
      error,
      `listing the policy sets of organization "${options.organization}" failed`,
      "check --organization, and that the token may manage policies there",
    );
  }
  const imported: ImportedPolicySet[] = [];
  for (const [index, listedSet] of listed.entries()) {
    const policySet = await client.policySets.read(listedSet.id);
    const parameters = policySet.kind !== "opa" ? await client.policySets.listParameters(policySet.id) : [];
    imported.push({
      ...policySet,
      parameters: parameters.map(({ key, value, sensitive }) => ({ key, value, sensitive })),
    });
    progress.advance("reading policy sets", index + 1, listed.length);
  }
  progress.finish("reading policy sets", `${imported.length} read`);
  return imported.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
