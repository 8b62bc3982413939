import * as pulumi from "@pulumi/pulumi";
import { TfeClient } from "../client/client";
import type { StackConfigSource } from "../client/config";
import type { Policy } from "../client/policies";
import type { PolicySet } from "../client/policy-sets";
import type { RegistryModuleVersion, RegistryModuleVersionSummary } from "../client/registry";
import type { PolicyKind, PolicySetKind } from "../contract/policies";
import { readResults, workspacesToRead } from "../impact";
import { withOrganizationAdvice } from "../resources/failure-report";
import { type ArgumentTable, assertArguments } from "../resources/property-table";

/**
 * Where the read functions get their client: an explicit one, or one built from these values, then the stack
 * config of a Pulumi program (`tfe:address`, `tfe:hostname`, `tfe:token`), the environment and the Terraform
 * credentials file.
 */
export interface ReadFunctionOptions {
  /** Used as is and left open; the caller owns it. */
  client?: TfeClient;
  address?: string;
  hostname?: string;
  token?: string;
  /** The organization of a list that names none; default: stack config `tfe:organization`, then TFE_ORGANIZATION. */
  organization?: string;
}

export interface GetPolicyArgs {
  /** The policy's id, `pol-...`. */
  id: string;
}

export interface ListPoliciesArgs {
  /** The organization whose policies are listed; default: the provider's organization (`tfe:organization`). */
  organization?: string;
  /** Only policies whose name contains this text. */
  search?: string;
  /** Only policies of this kind: `sentinel` or `opa`. */
  kind?: PolicyKind;
  /** Ask the service for each policy's policy sets, so that `policySetIds` is filled in. */
  includePolicySets?: boolean;
}

export interface GetPolicySetArgs {
  /** The policy set's id, `polset-...`. */
  id: string;
}

export interface ListPolicySetsArgs {
  /** The organization whose policy sets are listed; default: the provider's organization (`tfe:organization`). */
  organization?: string;
  /** Only sets whose name contains this text. */
  search?: string;
  /** Only sets of this kind: `sentinel`, `opa` or `tfpolicy`. */
  kind?: PolicySetKind;
}

export interface ModuleArgs {
  /** For private modules, the organization name. */
  namespace: string;
  /** The module's name, e.g. `vpc`. */
  name: string;
  /** The module's provider, e.g. `aws`. */
  provider: string;
}

export interface ListPolicyResultsArgs {
  /** The organization whose workspaces are read; default: the provider's organization (`tfe:organization`). */
  organization?: string;
  /** Only these workspaces (`ws-...`); default: every workspace of the organization. */
  workspaceIds?: string[];
  /** Only the results of this policy, by name. */
  policy?: string;
  /** The window, in days back from now: a whole number above 0; default 30. */
  days?: number;
  /**
   * Requests the read may send; default 1000. Where they do not read every workspace whole, the call fails, naming
   * what it did not read (raise it, or name workspaceIds): a partial answer would read as "no other result".
   */
  requestBudget?: number;
}

/** One policy's result in one run of a workspace, as the run recorded it. */
export interface PolicyRunResult {
  workspaceId: string;
  workspaceName: string;
  runId: string;
  /** When the run was made, ISO 8601. */
  createdAt: string;
  /** `sentinel`, `opa` or `tfpolicy`. */
  kind: string;
  /** `task-stage`, `policy-check` or `tf-policy-evaluation`: how the run recorded it. */
  recordedBy: string;
  policySet: string;
  policy: string;
  /** The level the run evaluated it at, as the service reports it (`advisory`, `mandatory`, ...). */
  level: string;
  /** `passed`, `failed` or `errored` (Terraform policy: also `unknown`). */
  status: string;
  /** Whether a user overrode the failure (at an overridable level), so the run went on past it. */
  overridden: boolean;
}

export interface ModuleVersionArgs extends ModuleArgs {
  /** The version, e.g. `1.2.0`. */
  version: string;
}

const readOptionArguments = {
  client: { argument: "object" },
  address: { argument: "string" },
  hostname: { argument: "string" },
  token: { argument: "string" },
  organization: { argument: "string" },
} as const satisfies ArgumentTable;
export const getPolicyArguments = { id: { argument: "string" } } as const satisfies ArgumentTable;
export const listPoliciesArguments = {
  organization: { argument: "string" },
  search: { argument: "string" },
  kind: { argument: "string" },
  includePolicySets: { argument: "boolean" },
} as const satisfies ArgumentTable;
export const getPolicySetArguments = { id: { argument: "string" } } as const satisfies ArgumentTable;
export const listPolicySetsArguments = {
  organization: { argument: "string" },
  search: { argument: "string" },
  kind: { argument: "string" },
} as const satisfies ArgumentTable;
export const listPolicyResultsArguments = {
  organization: { argument: "string" },
  workspaceIds: { argument: "string list" },
  policy: { argument: "string" },
  days: { argument: "number" },
  requestBudget: { argument: "number" },
} as const satisfies ArgumentTable;
export const moduleArguments = {
  namespace: { argument: "string" },
  name: { argument: "string" },
  provider: { argument: "string" },
} as const satisfies ArgumentTable;
export const moduleVersionArguments = {
  ...moduleArguments,
  version: { argument: "string" },
} as const satisfies ArgumentTable;

/**
 * A function's arguments and options against its tables, so that a typo fails naming the member instead of
 * being ignored. Values not known yet (the Output forms' inputs) are checked once they are.
 */
function checkArguments(subject: string, table: ArgumentTable, args: object, options: ReadFunctionOptions): void {
  assertArguments(table, args, `${subject}'s arguments`);
  assertArguments(readOptionArguments, options, `${subject}'s options`);
}

/** Args of an Output form: each member may be an output of another resource. */
export type InputArgs<T> = { [K in keyof T]: pulumi.Input<T[K]> };

/** `tfe` stack config when running inside a Pulumi program; outside one there is none, and that is fine. */
function pulumiStackConfig(): StackConfigSource | undefined {
  try {
    const config = new pulumi.Config("tfe");
    return {
      get: (key) => {
        try {
          return config.get(key);
        } catch {
          return undefined;
        }
      },
    };
  } catch {
    return undefined;
  }
}

/** The organization a list reads: its own, the options', the stack's `tfe:organization`, TFE_ORGANIZATION. */
function organizationOf(subject: string, given: string | undefined, options: ReadFunctionOptions): string {
  const organization =
    given ??
    options.organization ??
    pulumiStackConfig()?.get("organization") ??
    (process.env.TFE_ORGANIZATION || undefined);
  if (organization === undefined || organization === "") {
    throw new Error(
      `${subject}: organization is missing: give it, or set the provider's organization (pulumi config set ` +
        "tfe:organization <name>, or TFE_ORGANIZATION)",
    );
  }
  return organization;
}

/**
 * `read` with the client of `options`; an organization the service does not show the token fails naming the setting
 * that gave it, as a resource's failure does.
 */
async function withClient<T>(options: ReadFunctionOptions, read: (client: TfeClient) => Promise<T>): Promise<T> {
  const adviseOnOrganization = (error: unknown) => {
    throw withOrganizationAdvice(error, "the function's organization argument");
  };
  if (options.client) return read(options.client).catch(adviseOnOrganization);
  const client = TfeClient.fromConfig({
    address: options.address,
    hostname: options.hostname,
    token: options.token,
    stackConfig: pulumiStackConfig(),
  });
  try {
    return await read(client).catch(adviseOnOrganization);
  } finally {
    await client.close();
  }
}

function asOutput<A, R>(
  read: (args: A, options?: ReadFunctionOptions) => Promise<R>,
  args: InputArgs<A>,
  options: ReadFunctionOptions,
): pulumi.Output<R> {
  return pulumi.output(args).apply((plainArgs) => read(plainArgs as A, options)) as pulumi.Output<R>;
}

/** One policy by id (spec 4.2). */
export async function getPolicy(args: GetPolicyArgs, options: ReadFunctionOptions = {}): Promise<Policy> {
  checkArguments("getPolicy", getPolicyArguments, args, options);
  return withClient(options, (client) => client.policies.read(args.id));
}

/** Every policy of an organization that matches, across all pages (spec 4.9). */
export async function listPolicies(args: ListPoliciesArgs, options: ReadFunctionOptions = {}): Promise<Policy[]> {
  checkArguments("listPolicies", listPoliciesArguments, args, options);
  return withClient(options, async (client) => {
    const { organization, ...filters } = args;
    const policies: Policy[] = [];
    const from = organizationOf("listPolicies", organization, options);
    for await (const policy of client.policies.listAll(from, filters)) policies.push(policy);
    return policies;
  });
}

/** One policy set by id, with its scope, policies and version control. */
export async function getPolicySet(args: GetPolicySetArgs, options: ReadFunctionOptions = {}): Promise<PolicySet> {
  checkArguments("getPolicySet", getPolicySetArguments, args, options);
  return withClient(options, (client) => client.policySets.read(args.id));
}

/** Every policy set of an organization that matches, across all pages. */
export async function listPolicySets(
  args: ListPolicySetsArgs,
  options: ReadFunctionOptions = {},
): Promise<PolicySet[]> {
  checkArguments("listPolicySets", listPolicySetsArguments, args, options);
  return withClient(options, async (client) => {
    const { organization, ...filters } = args;
    const sets: PolicySet[] = [];
    const from = organizationOf("listPolicySets", organization, options);
    for await (const set of client.policySets.listAll(from, filters)) sets.push(set);
    return sets;
  });
}

/** One version of a registry module with its `deprecation` (spec 4.7). */
export async function getModuleVersion(
  args: ModuleVersionArgs,
  options: ReadFunctionOptions = {},
): Promise<RegistryModuleVersion> {
  checkArguments("getModuleVersion", moduleVersionArguments, args, options);
  return withClient(options, (client) => client.registry.getModuleVersion(args));
}

/** Every version of a registry module, each with its `deprecation` (spec 4.8). */
export async function listModuleVersions(
  args: ModuleArgs,
  options: ReadFunctionOptions = {},
): Promise<RegistryModuleVersionSummary[]> {
  checkArguments("listModuleVersions", moduleArguments, args, options);
  return withClient(options, (client) => client.registry.listModuleVersions(args));
}

/**
 * Every policy result the runs of the window recorded, in every workspace of the organization (or those named): the
 * numbers behind what preview says of a raised level (docs/reviewing-governance-changes.md).
 */
export async function listPolicyResults(
  args: ListPolicyResultsArgs,
  options: ReadFunctionOptions = {},
): Promise<PolicyRunResult[]> {
  checkArguments("listPolicyResults", listPolicyResultsArguments, args, options);
  return withClient(options, async (client) => {
    const organization = organizationOf("listPolicyResults", args.organization, options);
    for (const [name, value] of [
      ["days", args.days],
      ["requestBudget", args.requestBudget],
    ] as const) {
      // A window of no day reads nothing, which would answer "no results": refused, as preview says not known.
      if (value !== undefined && !(Number.isInteger(value) && value > 0)) {
        throw new Error(`listPolicyResults: ${name} ${value} must be a whole number above 0`);
      }
    }
    const read = await readResults(
      client,
      await workspacesToRead(client, {
        organization,
        ...(args.workspaceIds ? { workspaceIds: args.workspaceIds } : {}),
      }),
      { windowDays: args.days ?? 30, requestBudget: args.requestBudget ?? 1000 },
      "raise requestBudget, or name workspaceIds",
    );
    // A partial answer would read as "no other failure": what was not read fails the call instead.
    if (read.notRead.length > 0) {
      throw new Error(`listPolicyResults could not read every workspace: ${read.notRead.join("; ")}`);
    }
    return read.workspaces.flatMap((workspace) =>
      workspace.runs.flatMap((run) =>
        run.results
          .filter((result) => args.policy === undefined || result.policy === args.policy)
          .map((result) => ({
            workspaceId: workspace.workspaceId,
            workspaceName: workspace.workspaceName,
            runId: run.id,
            createdAt: run.createdAt.toISOString(),
            kind: result.kind,
            recordedBy: result.recordedBy,
            policySet: result.policySet,
            policy: result.policy,
            level: result.level,
            status: result.status,
            overridden: result.overridden,
          })),
      ),
    );
  });
}

/** {@link listPolicyResults} for Pulumi programs: args may be outputs of other resources. */
export function listPolicyResultsOutput(
  args: InputArgs<ListPolicyResultsArgs>,
  options: ReadFunctionOptions = {},
): pulumi.Output<PolicyRunResult[]> {
  checkArguments("listPolicyResultsOutput", listPolicyResultsArguments, args, options);
  return asOutput(listPolicyResults, args, options);
}

/** {@link getPolicy} for Pulumi programs: args may be outputs of other resources. */
export function getPolicyOutput(
  args: InputArgs<GetPolicyArgs>,
  options: ReadFunctionOptions = {},
): pulumi.Output<Policy> {
  checkArguments("getPolicyOutput", getPolicyArguments, args, options);
  return asOutput(getPolicy, args, options);
}

/** {@link listPolicies} for Pulumi programs: args may be outputs of other resources. */
export function listPoliciesOutput(
  args: InputArgs<ListPoliciesArgs>,
  options: ReadFunctionOptions = {},
): pulumi.Output<Policy[]> {
  checkArguments("listPoliciesOutput", listPoliciesArguments, args, options);
  return asOutput(listPolicies, args, options);
}

/** {@link getPolicySet} for Pulumi programs: args may be outputs of other resources. */
export function getPolicySetOutput(
  args: InputArgs<GetPolicySetArgs>,
  options: ReadFunctionOptions = {},
): pulumi.Output<PolicySet> {
  checkArguments("getPolicySetOutput", getPolicySetArguments, args, options);
  return asOutput(getPolicySet, args, options);
}

/** {@link listPolicySets} for Pulumi programs: args may be outputs of other resources. */
export function listPolicySetsOutput(
  args: InputArgs<ListPolicySetsArgs>,
  options: ReadFunctionOptions = {},
): pulumi.Output<PolicySet[]> {
  checkArguments("listPolicySetsOutput", listPolicySetsArguments, args, options);
  return asOutput(listPolicySets, args, options);
}

/** {@link getModuleVersion} for Pulumi programs: args may be outputs of other resources. */
export function getModuleVersionOutput(
  args: InputArgs<ModuleVersionArgs>,
  options: ReadFunctionOptions = {},
): pulumi.Output<RegistryModuleVersion> {
  checkArguments("getModuleVersionOutput", moduleVersionArguments, args, options);
  return asOutput(getModuleVersion, args, options);
}

/** {@link listModuleVersions} for Pulumi programs: args may be outputs of other resources. */
export function listModuleVersionsOutput(
  args: InputArgs<ModuleArgs>,
  options: ReadFunctionOptions = {},
): pulumi.Output<RegistryModuleVersionSummary[]> {
  checkArguments("listModuleVersionsOutput", moduleArguments, args, options);
  return asOutput(listModuleVersions, args, options);
}
