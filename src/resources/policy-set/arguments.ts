import type { PolicySetScope } from "../../client/policy-sets";
import type { PolicySetKind } from "../../contract/policies";
import { normalizedPoliciesPath } from "../../policy-code/folder-files";
import type { CheckoutIdentity } from "../../policy-code/git";
import type { PolicySetFolderSummary } from "../../policy-code/policy-set-folder";
import { cliCommand } from "../../process/package-version";
import { type CheckFailure, type IdShape, isUnknown } from "../provider-context";
import { setOwn } from "../wire-keys";
import type { ParameterState, VcsRepoShape } from "./requests";

// The rules of a PolicySet's arguments that need neither the folder nor the service: which parameter names hold
// credentials, where a set's versions come from, what its ids look like.

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

/**
 * A set that holds versions keeps where they come from: removing `directory` (or `vcsRepo`) would send nothing (the
 * service keeps evaluating its current version) and blank the record a later weakening is compared with. Moving
 * from one to the other is a change the service takes. Refused, with what to do instead.
 */
export function checkDirectoryKept(
  failures: CheckFailure[],
  olds: Record<string, unknown>,
  news: Record<string, unknown>,
) {
  const uploaded = typeof olds.contentHash === "string" || typeof olds.directory === "string";
  const fromVcs = typeof olds.vcsRepo === "object" && olds.vcsRepo !== null;
  if ((!uploaded && !fromVcs) || news.directory !== undefined || news.vcsRepo !== undefined) return;
  const property = fromVcs ? "vcsRepo" : "directory";
  failures.push({
    property,
    reason:
      `${property} cannot be removed from a set that holds versions: the service keeps evaluating its current ` +
      `version (from ${String(olds.directory ?? (olds.vcsRepo as { identifier?: string } | null)?.identifier ?? "the folder")}) ` +
      "whatever the program says. To change its policies, change the folder; to stop enforcing it, remove the " +
      "PolicySet resource (which deletes the set); to hold individual policies instead, declare a new PolicySet",
  });
}

/**
 * A set read from version control: `vcsRepo` whole (an `org/repo` identifier, exactly one credential), the policies
 * path and update patterns only with it, never with `directory` or `policyIds`. Sets the normalized inputs.
 */
export function checkVcs(failures: CheckFailure[], news: Record<string, unknown>, inputs: Record<string, unknown>) {
  const given = news.vcsRepo;
  // Sent as compared: `./policies/aws/` is the path the service holds as `policies/aws`.
  inputs.policiesPath =
    typeof news.policiesPath === "string" && news.policiesPath !== ""
      ? normalizedPoliciesPath(news.policiesPath) || null
      : (news.policiesPath ?? null);
  inputs.policyUpdatePatterns = news.policyUpdatePatterns ?? [];
  if (given === undefined || given === null) {
    inputs.vcsRepo = null;
    for (const property of ["policiesPath", "policyUpdatePatterns", "vcsCheckout"] as const) {
      if (news[property] !== undefined) {
        failures.push({
          property,
          reason: `${property} goes with vcsRepo: it applies to sets read from version control`,
        });
      }
    }
    return;
  }
  if (isUnknown(given)) {
    inputs.vcsRepo = given;
    return;
  }
  const repo = given as Record<string, unknown>;
  const problems: string[] = [];
  const unknownKeys = Object.keys(repo).filter(
    (key) => !["identifier", "branch", "ingressSubmodules", "oauthTokenId", "githubAppInstallationId"].includes(key),
  );
  if (unknownKeys.length > 0) problems.push(`${unknownKeys.join(", ")} is no property of vcsRepo`);
  const { identifier, branch, ingressSubmodules, oauthTokenId, githubAppInstallationId } = repo;
  if (!isUnknown(identifier) && (typeof identifier !== "string" || !/^[^/\s]+\/\S+$/.test(identifier))) {
    problems.push(
      `identifier ${JSON.stringify(identifier)} must name the repository as org/repo, e.g. "acme/policy-library"`,
    );
  }
  const credentials = [oauthTokenId, githubAppInstallationId].filter((value) => value !== undefined && value !== null);
  if (credentials.length !== 1) {
    problems.push(
      "needs exactly one of oauthTokenId (ot-..., the organization's VCS connection) and githubAppInstallationId (ghain-...)",
    );
  } else if (typeof oauthTokenId === "string" && !/^ot-[A-Za-z0-9]+$/.test(oauthTokenId)) {
    problems.push(
      `oauthTokenId ${JSON.stringify(oauthTokenId)} is not an OAuth token id: they look like ot-5mQ6hq8RSLKTz6hE`,
    );
  } else if (typeof githubAppInstallationId === "string" && !/^ghain-[A-Za-z0-9]+$/.test(githubAppInstallationId)) {
    problems.push(
      `githubAppInstallationId ${JSON.stringify(githubAppInstallationId)} is not an installation id: they look like ghain-5mQ6hq8RSLKTz6hE`,
    );
  }
  for (const problem of problems) failures.push({ property: "vcsRepo", reason: `vcsRepo: ${problem}` });
  if (news.directory !== undefined || (Array.isArray(news.policyIds) && news.policyIds.length > 0)) {
    failures.push({
      property: "vcsRepo",
      reason:
        "a set reads its versions from version control (vcsRepo), or from a folder (directory), or holds individual " +
        "policies (policyIds): one of them",
    });
  }
  inputs.vcsRepo = {
    identifier,
    branch: branch ?? null,
    ingressSubmodules: ingressSubmodules === true,
    oauthTokenId: oauthTokenId ?? null,
    githubAppInstallationId: githubAppInstallationId ?? null,
  };
}

/** The refusal of a taken set name, with every way out: each fits another cause. */
export function setNameTakenMessage(inputs: { name: string; organization: string }, id: string | undefined): string {
  return (
    `a policy set named "${inputs.name}" already exists in organization "${inputs.organization}"` +
    `${id ? ` (${id})` : ""}, and this resource did not create it. If the resource was renamed, give it its old name ` +
    "with the aliases resource option; to manage that set here, set adoptExisting: true; if a killed pulumi up " +
    `created it, run ${cliCommand()} pending-creates --apply; else choose another name`
  );
}

/** A list of service ids, with what it must look like. */
export const idShapes: Record<"policyIds" | keyof PolicySetScope, IdShape> = {
  policyIds: { what: "policy", pattern: /^pol-[A-Za-z0-9]+$/, example: "pol-u3S5p2Uwk21keu1s" },
  workspaceIds: { what: "workspace", pattern: /^ws-[A-Za-z0-9]+$/, example: "ws-3yVQZvHzf5j3WRJ1" },
  excludedWorkspaceIds: { what: "workspace", pattern: /^ws-[A-Za-z0-9]+$/, example: "ws-3yVQZvHzf5j3WRJ1" },
  projectIds: { what: "project", pattern: /^prj-[A-Za-z0-9]+$/, example: "prj-3yVQZvHzf5j3WRJ1" },
  excludedProjectIds: { what: "project", pattern: /^prj-[A-Za-z0-9]+$/, example: "prj-3yVQZvHzf5j3WRJ1" },
};

/**
 * Each parameter with whether it is sensitive. A refusal names the key and never the value: it is reported on no
 * property, since Pulumi prints the value of a property that a failure names.
 */
export function checkParameters(
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
      setOwn(checked, key, entry);
      continue;
    }
    if (typeof value !== "string") {
      failures.push({ property: "", reason: `parameters.${key} must be a string` });
      continue;
    }
    setOwn(checked, key, { value, sensitive: sensitive === true });
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
 * Why a set read from version control without a local checkout has no policies here: the same text for the same
 * repository and path, so that an unchanged source compares equal and another one cannot be compared.
 */
export function vcsContentUnknown(vcsRepo: Pick<VcsRepoShape, "identifier" | "branch">, policiesPath: string | null) {
  const path = policiesPath ? `, policies path ${normalizedPoliciesPath(policiesPath)}` : "";
  const branch = vcsRepo.branch ? `, branch ${vcsRepo.branch}` : "";
  return `read from version control (${vcsRepo.identifier}${branch}${path}) with no vcsCheckout to read it here`;
}

/**
 * Why a checkout is not shown to be the repository and branch a set reads (undefined where it is): a remote whose
 * URL names the repository (`https://github.com/acme/policy-library.git`, `git@github.com:acme/policy-library`),
 * and the branch checked out, or HEAD at that branch's remote-tracking commit (a CI checkout of a commit). A set
 * that names no branch reads the repository's default, which a clone records as the remote's HEAD.
 */
export function checkoutMismatch(identity: CheckoutIdentity, vcsRepo: VcsRepoShape): string | undefined {
  const wanted = vcsRepo.identifier.toLowerCase().replace(/\.git$/, "");
  const names = (url: string) => {
    const path = url
      .toLowerCase()
      .replace(/\/+$/, "")
      .replace(/\.git$/, "");
    return path === wanted || path.endsWith(`/${wanted}`) || path.endsWith(`:${wanted}`);
  };
  const remotes = identity.remoteUrls;
  if (!remotes.some(names)) {
    return (
      `no remote of the checkout names ${vcsRepo.identifier} (` +
      (remotes.length > 0 ? `its remotes: ${remotes.join(", ")}` : "it has none") +
      `): add one (git remote add origin <its URL>) so the checkout is shown to be the repository the set reads`
    );
  }
  const branch = vcsRepo.branch ?? identity.remoteDefaults[0] ?? null;
  if (branch === null) {
    return (
      "the set names no branch, so the service reads the repository's default, and the checkout does not record " +
      "which it is: set vcsRepo.branch, or record it (git remote set-head origin --auto)"
    );
  }
  if (identity.branch === branch) return undefined;
  const tracking = identity.remoteBranches.filter((entry) => entry.branch === branch).map((entry) => entry.commit);
  if (identity.head !== null && tracking.includes(identity.head)) return undefined;
  return (
    `the service reads branch ${branch}, and the checkout is ${identity.branch ? `on branch ${identity.branch}` : `at commit ${identity.head ?? "(none)"}`}` +
    `, not at ${branch}: check out ${branch} (or its commit) so what is compared is what the service reads`
  );
}

/** Whether two sets read the same content from version control: one repository, branch and policies path. */
export function readsSameSource(
  a: VcsRepoShape,
  aPath: string | null | undefined,
  b: VcsRepoShape,
  bPath: string | null | undefined,
): boolean {
  return (
    a.identifier === b.identifier &&
    (a.branch ?? null) === (b.branch ?? null) &&
    normalizedPoliciesPath(aPath ?? "") === normalizedPoliciesPath(bPath ?? "")
  );
}
