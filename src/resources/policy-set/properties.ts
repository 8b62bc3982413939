import type * as pulumi from "@pulumi/pulumi";
import type { PolicySetScope } from "../../client/policy-sets";
import type { PolicySetKind } from "../../contract/policies";
import { isSecretEnvelope, secretEnvelope } from "../derived-secrets";
import type { Enforcement, PolicyBlockShape } from "../guard";
import { propertiesThat, propertyTable } from "../property-table";
import { isUnknown } from "../unknown";
import type { ParameterState, VcsRepoShape } from "./requests";

// PolicySet's arguments, inputs, outputs and its table of properties: what the checks, the provider and the
// resource class share.

export interface PolicySetArgs {
  /** Organization of the set; default: stack config `tfe:organization`, then `TFE_ORGANIZATION`. */
  organization?: pulumi.Input<string>;
  /** The set's name (letters, digits, `-`, `_`), unique in the organization; default: the resource's name. */
  name?: pulumi.Input<string>;
  /** What the set is for, shown on the service; none by default. */
  description?: pulumi.Input<string>;
  /**
   * `"sentinel"`, `"opa"` or `"tfpolicy"` (Terraform policy, HCP Terraform only); default: what `directory` holds
   * (`sentinel.hcl`, `policies.hcl`, or `*.policy.hcl` files and neither), else sentinel.
   */
  kind?: pulumi.Input<PolicySetKind>;
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
  /**
   * A set read from version control: the repository (`org/repo`, as the VCS provider names it) and the VCS
   * connection the service reads it with (the OAuth token id of the organization's connection, `ot-...`, or a GitHub
   * App installation id, `ghain-...`). Not with `directory` or `policyIds`. The service reads the branch's head into
   * a version at once, and again at every push; `up` waits for the version a change of these makes.
   */
  vcsRepo?: pulumi.Input<VcsRepoArgs>;
  /** The folder of the repository that holds the set (`sentinel.hcl` / `policies.hcl`); default its root. */
  policiesPath?: pulumi.Input<string>;
  /** Path globs (`policies/aws/**`) whose changes make a new version; default: every push makes one. */
  policyUpdatePatterns?: pulumi.Input<pulumi.Input<string>[]>;
  /**
   * A local checkout of that repository (the program's own repository, a submodule): preview then reads the
   * policies path there with every check a `directory` gets, and compares its policies and levels for weakening.
   */
  vcsCheckout?: pulumi.Input<string>;
  /** Enforce on every workspace of the organization (`excludedWorkspaceIds` and `excludedProjectIds` still apply). */
  global?: pulumi.Input<boolean>;
  /** Workspaces the set applies to (`ws-...`); the set owns these attachments and no others. */
  workspaceIds?: pulumi.Input<pulumi.Input<string>[]>;
  /** Projects the set applies to (`prj-...`): every workspace in them. */
  projectIds?: pulumi.Input<pulumi.Input<string>[]>;
  /** Workspaces the set never applies to; an exclusion wins over any inclusion. */
  excludedWorkspaceIds?: pulumi.Input<pulumi.Input<string>[]>;
  /** Projects the set never applies to; an exclusion wins over any inclusion. */
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
  /**
   * Approve a change that makes the set stricter where recent runs failed (a level raised in its folder, a policy
   * added, its scope widened): with stack config `tfe:requireNoBlockedRuns: true`, preview refuses one that would
   * have blocked a run of the window (or whose reads did not finish), unless this is set.
   */
  allowStricter?: pulumi.Input<boolean>;
}

export interface VcsRepoArgs {
  identifier: pulumi.Input<string>;
  /** Default: the repository's default branch. */
  branch?: pulumi.Input<string>;
  ingressSubmodules?: pulumi.Input<boolean>;
  oauthTokenId?: pulumi.Input<string>;
  githubAppInstallationId?: pulumi.Input<string>;
}

export interface PolicySetInputs extends Required<PolicySetScope> {
  organization: string;
  name: string;
  description: string | null;
  kind: PolicySetKind;
  directory?: string;
  /** SHA-256 over the folder's paths and bytes (what a version holds); null for a set of policies. */
  contentHash: string | null;
  /** Each file of the folder's version by path, with its size and hash: the diff of a content change names files. */
  contentFiles: Record<string, string>;
  /**
   * Each policy block's label and level. In checked inputs, what the program declares; in outputs, what the service
   * enforces as far as this stack knows it: the baseline every later change is compared with.
   */
  folderPolicies: Record<string, string>;
  /** Terraform policy: each policy block's enforce count, operations and filter, which a change may narrow. */
  policyBlocks: Record<string, PolicyBlockShape>;
  /**
   * Why `folderPolicies` is not what the set enforces, where this machine cannot read it (a repository with no
   * checkout, a version uploaded outside Pulumi); null where it is. A change then cannot be compared.
   */
  policiesUnknown: string | null;
  /** The commit of `vcsCheckout` that was last read, where it is a git work tree. */
  checkedCommit: string | null;
  policyIds: string[];
  vcsRepo: VcsRepoShape | null;
  policiesPath: string | null;
  policyUpdatePatterns: string[];
  vcsCheckout?: string;
  global: boolean;
  parameters: Record<string, ParameterState>;
  agentEnabled: boolean;
  overridable: boolean | null;
  policyToolVersion: string;
  adoptExisting: boolean;
  allowWeakening: boolean;
  allowStricter?: boolean;
}

export interface PolicySetOutputs extends PolicySetInputs {
  policySetId: string;
  currentVersionId: string | null;
  /** Each parameter's id on the service, by key. */
  parameterIds: Record<string, string>;
}

/** The keys of the parameters given as secrets (sent as sensitive). */
function secretParameterKeys(parameters: unknown): Set<string> {
  if (typeof parameters !== "object" || parameters === null) return new Set();
  return new Set(
    Object.entries(parameters as Record<string, unknown>)
      .filter(([, entry]) => (entry as ParameterState | null)?.sensitive === true)
      .map(([key]) => key),
  );
}

/**
 * The labels of Terraform policy blocks whose level reads a sensitive parameter: their level is as secret as the
 * parameter, in state and in messages.
 */
export function labelsReadingSecrets(props: Partial<Record<keyof PolicySetOutputs, unknown>>): Set<string> {
  const secret = secretParameterKeys(props.parameters);
  if (secret.size === 0 || typeof props.policyBlocks !== "object" || props.policyBlocks === null) return new Set();
  return new Set(
    Object.entries(props.policyBlocks as Record<string, PolicyBlockShape>)
      .filter(([, block]) => (block?.levelInputs ?? []).some((input) => secret.has(input)))
      .map(([address]) => address),
  );
}

/**
 * A set's properties with what is computed from its secrets wrapped as secrets (derived-secrets.ts): each sensitive
 * parameter's entry (its hash), and the level of each block that reads one.
 */
export function policySetSecrets(properties: Record<string, unknown>): Record<string, unknown> {
  const marked = { ...properties };
  const secretKeys = secretParameterKeys(properties.parameters);
  if (secretKeys.size > 0) {
    marked.parameters = Object.fromEntries(
      Object.entries(properties.parameters as Record<string, unknown>).map(([key, entry]) => [
        key,
        secretKeys.has(key) && !isSecretEnvelope(entry) ? secretEnvelope(entry) : entry,
      ]),
    );
  }
  // A digest of what an expression reads takes in the secret parameters' hashes: as secret as they are.
  if (secretKeys.size > 0 && typeof properties.policyBlocks === "object" && properties.policyBlocks !== null) {
    marked.policyBlocks = Object.fromEntries(
      Object.entries(properties.policyBlocks as Record<string, unknown>).map(([address, block]) => [
        address,
        (block as PolicyBlockShape | null)?.readsDigest && !isSecretEnvelope(block) ? secretEnvelope(block) : block,
      ]),
    );
  }
  const secretLabels = labelsReadingSecrets(properties);
  if (secretLabels.size > 0 && typeof properties.folderPolicies === "object" && properties.folderPolicies !== null) {
    marked.folderPolicies = Object.fromEntries(
      Object.entries(properties.folderPolicies as Record<string, unknown>).map(([label, level]) => [
        label,
        secretLabels.has(label) && !isSecretEnvelope(level) ? secretEnvelope(level) : level,
      ]),
    );
  }
  return marked;
}

/**
 * What a set enforces, for the guard: its policies and levels (or why they cannot be read here), its scope, the
 * policies it owns, `overridable`. Outputs give the service's (the baseline), checked inputs the program's.
 */
export function setEnforcement(props: Partial<Record<keyof PolicySetOutputs, unknown>>): Enforcement {
  const list = (value: unknown) => (value === undefined || value === null ? [] : (value as unknown[]));
  // A state written before the baseline was kept in outputs has no policies recorded for a set read from version
  // control: what it enforces was never recorded, which is what policiesUnknown says.
  const unrecorded =
    props.policiesUnknown === undefined &&
    typeof props.vcsRepo === "object" &&
    props.vcsRepo !== null &&
    Object.keys(props.folderPolicies ?? {}).length === 0;
  // Nothing of its policies was read here: a repository with no checkout, a checkout or folder known only at apply.
  const readsVcs = typeof props.vcsRepo === "object" && props.vcsRepo !== null;
  const notRead =
    unrecorded ||
    isUnknown(props.folderPolicies) ||
    isUnknown(props.directory) ||
    isUnknown(props.vcsCheckout) ||
    ((readsVcs || isUnknown(props.vcsRepo)) && (props.vcsCheckout === undefined || props.vcsCheckout === null));
  return {
    kind: props.kind as PolicySetKind,
    policies: (isUnknown(props.folderPolicies) ? {} : (props.folderPolicies ?? {})) as Record<string, string>,
    ...(notRead ? { policiesNotRead: true } : {}),
    policiesUnknown: unrecorded
      ? "the state was written before this library recorded what a set read from version control enforces"
      : ((props.policiesUnknown ?? null) as string | null),
    blocks: (props.policyBlocks ?? {}) as Record<string, PolicyBlockShape>,
    scope: {
      global: props.global === true,
      workspaceIds: list(props.workspaceIds),
      projectIds: list(props.projectIds),
      excludedWorkspaceIds: list(props.excludedWorkspaceIds),
      excludedProjectIds: list(props.excludedProjectIds),
    },
    memberships: {
      property: "policyIds",
      ids: props.policyIds ?? [],
      whenReplaced:
        "a Policy that is replaced (renamed without aliases, or its name, organization or kind changed) gets a new " +
        'id, and its old one leaves the set; to keep the policy, a renamed Policy keeps its name (name: "<its ' +
        'name>") and gives its old resource name with the aliases resource option',
    },
    overridable: (props.overridable ?? null) as boolean | null,
    secretLabels: labelsReadingSecrets(props),
  };
}

export const scopeArgument = { argument: "string list", change: "updates", output: true } as const;
/** What a set's content and policies are read from: the uploaded folder, or the checkout of its repository. */
const readFrom = ["directory", "vcsCheckout"] as const;
/**
 * Every property of a set, once. `directory` counts by its content hash (the same folder at another path changes
 * nothing on the service); `kind` alone replaces the set, as the service cannot change it.
 */
export const policySetProperties = propertyTable<PolicySetArgs>()({
  organization: { argument: "string", change: "replaces", output: true },
  name: { argument: "string", change: "updates", output: true },
  description: { argument: "string", change: "updates", output: true },
  kind: { argument: "string", change: "replaces", output: true },
  directory: { argument: "string", change: "none", output: true },
  contentHash: { change: "updates", output: true, shownAs: readFrom },
  contentFiles: { change: "none", output: true, keyed: true },
  folderPolicies: { change: "updates", output: true, keyed: true, shownAs: readFrom },
  policyBlocks: { change: "updates", output: true, keyed: true, shownAs: readFrom },
  policiesUnknown: { change: "updates", output: true, shownAs: readFrom },
  checkedCommit: { change: "none", output: true },
  policyIds: { argument: "string list", change: "updates", output: true },
  vcsRepo: { argument: "object", change: "updates", output: true },
  policiesPath: { argument: "string", change: "updates", output: true },
  policyUpdatePatterns: { argument: "string list", change: "updates", output: true },
  vcsCheckout: { argument: "string", change: "none", output: true },
  global: { argument: "boolean", change: "updates", output: true },
  workspaceIds: scopeArgument,
  projectIds: scopeArgument,
  excludedWorkspaceIds: scopeArgument,
  excludedProjectIds: scopeArgument,
  parameters: { argument: "object", change: "updates", output: true, keyed: true },
  agentEnabled: { argument: "boolean", change: "updates", output: true },
  overridable: { argument: "boolean", change: "updates", output: true },
  policyToolVersion: { argument: "string", change: "updates", output: true },
  adoptExisting: { argument: "boolean", change: "none", output: false },
  allowWeakening: { argument: "boolean", change: "none", output: false },
  allowStricter: { argument: "boolean", change: "none", output: false },
  policySetId: { change: "none", output: true, changesWith: [] },
  // A new version: uploaded when the folder's content changed, ingested when the set reads another repository or path.
  currentVersionId: { change: "none", output: true, changesWith: ["contentHash", "vcsRepo", "policiesPath"] },
  parameterIds: { change: "none", output: true, keyed: true, changesWith: ["parameters"] },
});
export const replacingProperties = propertiesThat(policySetProperties, "replaces");
export const updatableProperties = propertiesThat(policySetProperties, "updates");
