import { relative } from "node:path";
import * as pulumi from "@pulumi/pulumi";
import {
  type PolicyFolderContents,
  PolicyFolderError,
  type PolicyOverride,
  type ReadPolicyFolderOptions,
  readPolicyFolder,
} from "../../policy-code/folder";
import { packageDoc } from "../../process/package-version";
import { Policy, type PolicyArgs } from "../policy";
import { judgeFolderTests } from "../policy-tests";
import { type ArgumentTable, argumentFailures } from "../property-table";
import { firstThisCommand, inNamespace } from "../provider-context";
import { codeChecksRequired, policyTestsRequired } from "../provider-settings";
import { toWireKey } from "../wire-keys";
import { PolicyFolderManifest, type PolicyFolderManifestInputs } from "./manifest";

export type { PolicyOverride } from "../../policy-code/folder";

export interface PolicyFolderArgs {
  /**
   * The policy-set folder: a `sentinel.hcl` or a `policies.hcl` beside the code, as the service reads it from
   * version control. Relative to the program's directory. Read when the program runs, so a plain string.
   */
  directory: string;
  /** Organization of every policy; default: stack config `tfe:organization`, then `TFE_ORGANIZATION`. */
  organization?: pulumi.Input<string>;
  /** Policy sets that hold every policy of the folder. */
  policySetIds?: pulumi.Input<pulumi.Input<string>[]>;
  /** Take over policies that already have these names instead of failing. */
  adoptExisting?: pulumi.Input<boolean>;
  /** Allow a level lowered in the folder's file, which otherwise fails `pulumi preview` (see `Policy`). */
  allowWeakening?: pulumi.Input<boolean>;
  /** Approve a raised level of the folder's policies that recent runs failed (see `Policy`'s `allowStricter`). */
  allowStricter?: pulumi.Input<boolean>;
  /** Per-policy settings, keyed by the block's label: `name`, `description`, `enforcementLevel`. */
  overrides?: Record<string, PolicyOverride>;
  /**
   * The Rego the policy sets' OPA runtime evaluates: `"v0"` (default) for sets on `latest` (the service runs OPA
   * 0.61.x for it) or a 0.x runtime, `"v1"` for sets pinned to OPA 1.x.
   * Code is checked in this dialect.
   */
  regoVersion?: "v0" | "v1";
  /** The `opa` binary to check Rego with; default: `opa` on PATH. Without one, Rego goes unchecked (a warning). */
  opaPath?: string;
  /** Blocks to leave out knowingly, written as in the file: `module "report"`, `param "limit"`, `sentinel`. */
  skipBlocks?: string[];
}

export const folderArguments = {
  directory: { argument: "string" },
  organization: { argument: "string" },
  policySetIds: { argument: "string list" },
  adoptExisting: { argument: "boolean" },
  allowWeakening: { argument: "boolean" },
  allowStricter: { argument: "boolean" },
  overrides: { argument: "object" },
  regoVersion: { argument: "string" },
  opaPath: { argument: "string" },
  skipBlocks: { argument: "string list" },
} as const satisfies ArgumentTable;

const overrideArguments = {
  name: { argument: "string" },
  description: { argument: "string" },
  enforcementLevel: { argument: "string" },
} as const satisfies ArgumentTable;

/** Typos and wrong kinds in the folder's arguments and its overrides, all at once; empty when there are none. */
function argumentProblems(args: pulumi.Inputs): string[] {
  const problems = argumentFailures(folderArguments, args, "PolicyFolder").map((failure) => failure.reason);
  const overrides = args.overrides;
  if (typeof overrides === "object" && overrides !== null && !Array.isArray(overrides)) {
    for (const [label, override] of Object.entries(overrides as Record<string, unknown>)) {
      const subject = `overrides[${JSON.stringify(label)}]`;
      if (typeof override !== "object" || override === null || Array.isArray(override)) {
        problems.push(`${subject} must be an object such as { enforcementLevel: "advisory" }`);
        continue;
      }
      for (const failure of argumentFailures(overrideArguments, override as Record<string, unknown>, `an override`)) {
        problems.push(`${subject}: ${failure.reason}`);
      }
    }
  }
  return problems;
}

/**
 * The resources a PolicyFolder declares, made by whoever hosts it: a Node.js program makes the dynamic resources
 * (`Policy`, `PolicyFolderManifest`), the plugin for other languages its own custom resources of the same providers.
 */
export interface FolderResources<P extends pulumi.Resource = pulumi.Resource> {
  policy(name: string, args: Record<string, unknown>, opts: pulumi.CustomResourceOptions): P;
  manifest(name: string, args: PolicyFolderManifestInputs, opts: pulumi.CustomResourceOptions): pulumi.Resource;
  policyId(policy: P): pulumi.Output<string>;
}

/**
 * Reads the folder and declares, as children of `component`, its manifest then one policy per block: the folder's
 * whole logic, for every host. A folder the Policies API cannot express fails here, before any policy exists.
 * `namespace` is the provider's settings' (`tfe`, `tfegov`), for `requireCodeChecks` and messages.
 */
export async function declareFolder<P extends pulumi.Resource>(
  component: pulumi.ComponentResource,
  name: string,
  args: pulumi.Inputs,
  resources: FolderResources<P>,
  namespace = "tfe",
): Promise<Record<string, P>> {
  const problems = argumentProblems(args);
  if (problems.length > 0) throw new pulumi.ResourceError(problems.join("; "), component, true);
  const { directory, organization, policySetIds, adoptExisting, allowWeakening, allowStricter, ...options } =
    args as PolicyFolderArgs;
  let folder: PolicyFolderContents;
  try {
    folder = await readPolicyFolder(directory, options as ReadPolicyFolderOptions);
  } catch (error) {
    if (!(error instanceof PolicyFolderError)) throw error;
    // The program fails here, before any Policy exists: nothing is sent to the service.
    throw new pulumi.ResourceError(error.message, component, true);
  }
  for (const note of folder.notes) pulumi.log.info(note, component);
  for (const warning of folder.warnings) pulumi.log.warn(warning, component);
  const settings = new pulumi.Config(namespace);
  const said = (text: string) => inNamespace(`${directory}: ${text}`, namespace);
  let testsRequired: boolean;
  try {
    testsRequired = policyTestsRequired((key) => settings.get(key));
  } catch (error) {
    throw new pulumi.ResourceError(said((error as Error).message), component, true);
  }
  const tests = await judgeFolderTests(directory, options.regoVersion ?? "v0", testsRequired);
  if (tests.refusal) throw new pulumi.ResourceError(said(tests.refusal), component, true);
  if (tests.warning) pulumi.log.warn(said(tests.warning), component);
  if (!folder.regoChecked) {
    const config = new pulumi.Config(namespace);
    if (codeChecksRequired((key) => config.get(key))) {
      throw new pulumi.ResourceError(
        inNamespace(
          `${directory}: Rego was not checked: no opa binary on PATH, and tfe:requireCodeChecks (or ` +
            `TFE_REQUIRE_CODE_CHECKS) asks for every check: install OPA (${packageDoc("ci.md")} shows how in CI), or set opaPath`,
          namespace,
        ),
        component,
        true,
      );
    }
    if (firstThisCommand("rego-unchecked")) {
      pulumi.log.warn(
        inNamespace(
          "Rego was not checked: no opa binary on PATH. Install OPA or set opaPath to check syntax and queries at " +
            "preview, and set tfe:requireCodeChecks true (or TFE_REQUIRE_CODE_CHECKS=true in CI) to make this an error",
          namespace,
        ),
        component,
      );
    }
  }
  // Registered before the policies, so that its diff, which sees every removed policy and lowered level at once,
  // usually starts first; the engine runs steps side by side, so a policy's own refusal may still be the one shown.
  resources.manifest(
    `${name}/manifest`,
    {
      kind: folder.kind,
      // Keyed for the wire already: the SDK assigns each key on its way to the engine, and `__proto__` would vanish.
      policies: Object.fromEntries(folder.policies.map((policy) => [toWireKey(policy.name), policy.enforcementLevel])),
      allowWeakening: allowWeakening === true,
    },
    { parent: component },
  );
  const shared = {
    organization,
    policySetIds,
    adoptExisting,
    allowWeakening,
    ...(allowStricter === undefined ? {} : { allowStricter }),
    regoVersion: options.regoVersion,
  };
  return Object.fromEntries(
    folder.policies.map((policy) => [
      policy.block,
      resources.policy(
        `${name}/${policy.block}`,
        {
          ...shared,
          name: policy.name,
          kind: policy.kind,
          enforcementLevel: policy.enforcementLevel,
          // Relative to the program's directory, as Policy resolves it: state then holds no checkout's absolute path.
          codeFile: relative(process.cwd(), policy.codeFile),
          ...(policy.query !== undefined ? { query: policy.query } : {}),
          ...(policy.description !== undefined ? { description: policy.description } : {}),
        },
        { parent: component },
      ),
    ]),
  );
}

/** What a Node.js program's PolicyFolder declares: the library's dynamic resources. */
const dynamicResources: FolderResources<Policy> = {
  policy: (name, args, opts) => new Policy(name, args as PolicyArgs, opts),
  manifest: (name, args, opts) => new PolicyFolderManifest(name, args, opts),
  policyId: (policy) => policy.policyId,
};

/**
 * A whole policy-set folder as policies: one `Policy` child per `policy` block of its `sentinel.hcl` or
 * `policies.hcl`, with the code of the block's file, its level, and (OPA) its query. Adding, removing or changing a
 * block creates, deletes or updates that one policy. The folder is read and its code checked while the program
 * runs, so a folder the policies API cannot express fails `pulumi preview` before any request, naming the block.
 * Type token `tfe:index:PolicyFolder`.
 */
export class PolicyFolder extends pulumi.ComponentResource<Record<string, Policy>> {
  constructor(name: string, args: PolicyFolderArgs, opts?: pulumi.ComponentResourceOptions) {
    super("tfe:index:PolicyFolder", name, args, opts);
  }

  /** Each policy's id on the service, keyed by the block's label. */
  get policyIds(): pulumi.Output<Record<string, string>> {
    return pulumi
      .output(this.getData())
      .apply((policies) =>
        pulumi.all(
          Object.fromEntries(
            Object.entries(policies).map(([block, policy]) => [block, dynamicResources.policyId(policy)]),
          ),
        ),
      );
  }

  protected override async initialize(
    args: pulumi.Inputs,
    _opts?: pulumi.ComponentResourceOptions,
    name?: string,
  ): Promise<Record<string, Policy>> {
    return declareFolder(this, name as string, args, dynamicResources);
  }
}
