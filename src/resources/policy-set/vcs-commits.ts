import { packageDoc } from "../../process/package-version";
import type { ContentBaseline } from "../guard";
import type { ProviderContext } from "../provider-context";
import { readsSameSource } from "./arguments";
import type { PolicySetInputs, PolicySetOutputs } from "./properties";

// A set read from version control against the commits behind it: what the service read (after up, at a refresh)
// against what this stack checked in its checkout (checkedCommit), and what such a checkout may show of what the
// service enforces where the state cannot.

/**
 * After up made the set read a repository: the commit the service read against the one this stack checked in its
 * checkout. Another commit (a push between preview and apply, a checkout behind its branch) is said, naming both,
 * and the baseline answered is not known: the next change is refused until a checkout at the service's commit is
 * compared (see {@link contentAtServiceCommit}).
 */
export async function compareIngestedCommit(
  context: ProviderContext,
  held: { currentVersionId: string | null; baseline: ContentBaseline },
  inputs: PolicySetInputs,
): Promise<ContentBaseline> {
  if (inputs.vcsRepo === null || !inputs.checkedCommit || !held.currentVersionId) return held.baseline;
  const version = await context.client.policySets.readVersion(held.currentVersionId).catch(() => undefined);
  const ingested = version?.commitSha;
  if (!ingested || ingested === inputs.checkedCommit) return held.baseline;
  await context.warn(
    (inputs as unknown as Record<string, unknown>).__urn,
    `policy set "${inputs.name}": the service read commit ${ingested} of ${inputs.vcsRepo.identifier}, and this ` +
      `stack checked commit ${inputs.checkedCommit} (vcsCheckout): what the set enforces now was not compared. ` +
      `The next change to the set is refused until a checkout at ${ingested} is compared: check it out, then run ` +
      "pulumi up",
  );
  return {
    ...held.baseline,
    policiesUnknown: `the service read commit ${ingested}, and this stack checked commit ${inputs.checkedCommit}`,
  };
}

/**
 * Where the state cannot say what a set read from version control enforces, a checkout at the very commit the
 * service evaluates now can: its policies are what is enforced. Undefined unless the program compares such a
 * checkout, of the same repository, branch and policies path.
 */
export async function contentAtServiceCommit(
  context: ProviderContext,
  id: string,
  olds: PolicySetOutputs,
  news: PolicySetInputs,
): Promise<Pick<PolicySetOutputs, "folderPolicies" | "policyBlocks" | "policiesUnknown"> | undefined> {
  if (!olds.policiesUnknown || news.policiesUnknown || !news.checkedCommit || !olds.vcsRepo || !news.vcsRepo) {
    return undefined;
  }
  if (!readsSameSource(olds.vcsRepo, olds.policiesPath, news.vcsRepo, news.policiesPath)) return undefined;
  const client = context.client;
  const current = (await client.policySets.read(id)).currentVersionId;
  const version = current ? await client.policySets.readVersion(current).catch(() => undefined) : undefined;
  if (!version?.commitSha || version.commitSha !== news.checkedCommit) return undefined;
  return { folderPolicies: news.folderPolicies, policyBlocks: news.policyBlocks, policiesUnknown: null };
}

/**
 * A push to a set read from version control is live at once, before any check of this stack runs: refresh says
 * when the service evaluates a commit other than the one the stack last checked, naming both.
 */
export async function warnOfUncheckedCommit(context: ProviderContext, declared: PolicySetOutputs, versionId: string) {
  const version = await context.client.policySets.readVersion(versionId).catch(() => undefined);
  if (!version?.commitSha || version.commitSha === declared.checkedCommit) return;
  await context.warn(
    (declared as unknown as Record<string, unknown>).__urn,
    `policy set "${declared.name}" now evaluates commit ${version.commitSha} of ${declared.vcsRepo?.identifier}, ` +
      `and this stack last checked commit ${declared.checkedCommit} (vcsCheckout): a push is live as soon as the ` +
      "service reads it, before any preview here. Check the library's changes before they merge (npx " +
      `tfe-governance check-folder, ${packageDoc("policy-sets.md")}), and run pulumi up with the checkout at that commit to record it`,
  );
}
