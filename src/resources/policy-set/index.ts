// `PolicySet`: the resource a program declares, and what the rest of the library takes from its folder.

import * as pulumi from "@pulumi/pulumi";
import type { PolicySetKind } from "../../contract/policies";
import { declaredProps } from "../property-table";
import { ShimResource } from "../shim";
import { type PolicySetArgs, policySetProperties } from "./properties";
import type { ParameterState } from "./requests";

export { namesCredential } from "./arguments";
export type { PolicySetArgs, PolicySetInputs, PolicySetOutputs } from "./properties";
export { PolicySetProvider } from "./provider";
export { hashParameterValue, type ParameterState } from "./requests";

/**
 * Each parameter with whether it is a secret, so the provider (which sees plain values) sends secrets as sensitive.
 * Parameters given as one output are all sensitive when that output is a secret. Given one by one, each stays an
 * output of its own in a plain map, so only a secret one is secret in state and in `--diff` (the map wrapped in one
 * output would be secret whole, and hide a plain value's change).
 */
function parametersWithSensitivity(
  parameters: PolicySetArgs["parameters"],
): pulumi.Input<Record<string, pulumi.Input<ParameterState>>> | undefined {
  if (parameters === undefined) return undefined;
  const secretness = (value: pulumi.Input<unknown>) =>
    pulumi.Output.isInstance(value) ? pulumi.output(pulumi.isSecret(value as pulumi.Output<unknown>)) : false;
  if (pulumi.Output.isInstance(parameters) || parameters instanceof Promise) {
    const whole = pulumi.output(parameters);
    return pulumi
      .all([whole, secretness(whole)])
      .apply(([values, sensitive]) =>
        Object.fromEntries(Object.entries(values ?? {}).map(([key, value]) => [key, { value, sensitive }])),
      );
  }
  return Object.fromEntries(
    Object.entries(parameters).map(([key, value]) => [
      key,
      pulumi.all([value, secretness(value)]).apply(([text, sensitive]) => ({ value: text, sensitive })),
    ]),
  );
}

/**
 * A policy set of HCP Terraform / Terraform Enterprise, managed by Pulumi: a folder uploaded as a versioned set, or a
 * set of individual policies, with its scope, parameters and runtime. Type token `pulumi-nodejs:dynamic/tfe:PolicySet`.
 */
export class PolicySet extends ShimResource {
  declare readonly organization: pulumi.Output<string>;
  declare readonly name: pulumi.Output<string>;
  declare readonly description: pulumi.Output<string | null>;
  declare readonly kind: pulumi.Output<PolicySetKind>;
  declare readonly directory: pulumi.Output<string | undefined>;
  /** SHA-256 over the folder's paths and bytes: what the current version holds. */
  declare readonly contentHash: pulumi.Output<string | null>;
  /** Each file of the folder's current version by path: `<bytes> bytes, sha256 <first 12 hex digits>`. */
  declare readonly contentFiles: pulumi.Output<Record<string, string>>;
  declare readonly policyIds: pulumi.Output<string[]>;
  declare readonly global: pulumi.Output<boolean>;
  declare readonly workspaceIds: pulumi.Output<string[]>;
  declare readonly projectIds: pulumi.Output<string[]>;
  declare readonly excludedWorkspaceIds: pulumi.Output<string[]>;
  declare readonly excludedProjectIds: pulumi.Output<string[]>;
  declare readonly agentEnabled: pulumi.Output<boolean>;
  declare readonly overridable: pulumi.Output<boolean | null>;
  declare readonly policyToolVersion: pulumi.Output<string>;
  /**
   * The service's id of the set (`polset-...`); also the resource's id, and known at preview whenever the set is
   * not being replaced, so a `Policy.policySetIds` that names it previews exactly.
   */
  declare readonly policySetId: pulumi.Output<string>;
  /** The version the set evaluates now (the last ready one); null for a set of policies. */
  declare readonly currentVersionId: pulumi.Output<string | null>;

  constructor(name: string, args: PolicySetArgs, opts?: pulumi.CustomResourceOptions) {
    const derived = { parameters: parametersWithSensitivity(args.parameters) };
    super("PolicySet", name, declaredProps(policySetProperties, name, args, opts, derived), opts);
    // The engine previews an update of a dynamic resource with its inputs as its outputs, so an output such as
    // policySetId would be unknown there; the resource's id is not.
    (this as { policySetId: pulumi.Output<string> }).policySetId = this.id;
  }

  /** Reads an existing policy set by id into the program, without managing it. */
  static get(name: string, id: pulumi.Input<string>, opts?: pulumi.CustomResourceOptions): PolicySet {
    return new PolicySet(name, {}, { ...opts, id });
  }
}
