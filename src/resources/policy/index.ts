// `Policy`: the resource a program declares, and what the rest of the library takes from its folder.

import * as pulumi from "@pulumi/pulumi";
import type { PolicyKind } from "../../contract/policies";
import { declaredProps } from "../property-table";
import { ShimResource } from "../shim";
import { type PolicyArgs, policyProperties } from "./properties";

export * from "./properties";
export { hashCode } from "./properties";
export { PolicyProvider } from "./provider";
export { nameTakenMessage } from "./requests";

/**
 * `codeFile` as a path: a FileAsset gives its own. `Asset.isInstance` rather than `instanceof`, because the program's
 * FileAsset may come from another copy of @pulumi/pulumi (its own version, where it differs from the one this library
 * pins), and would otherwise reach the provider as an asset object instead of a path.
 */
function codeFilePath(codeFile: PolicyArgs["codeFile"]): pulumi.Input<string> | undefined {
  if (pulumi.asset.Asset.isInstance(codeFile)) return (codeFile as pulumi.asset.FileAsset).path;
  return codeFile as pulumi.Input<string> | undefined;
}

/**
 * A policy of HCP Terraform / Terraform Enterprise, with its code, managed by Pulumi. Type token
 * `pulumi-nodejs:dynamic/tfe:Policy`.
 */
export class Policy extends ShimResource {
  declare readonly organization: pulumi.Output<string>;
  declare readonly name: pulumi.Output<string>;
  declare readonly description: pulumi.Output<string | null>;
  declare readonly kind: pulumi.Output<PolicyKind>;
  declare readonly query: pulumi.Output<string | null>;
  declare readonly enforcementLevel: pulumi.Output<string>;
  declare readonly policySetIds: pulumi.Output<string[]>;
  declare readonly codeFile: pulumi.Output<string | undefined>;
  declare readonly codeHash: pulumi.Output<string>;
  declare readonly codeSize: pulumi.Output<number>;
  /** The service's id of the policy (`pol-...`); also the resource's id. */
  declare readonly policyId: pulumi.Output<string>;
  declare readonly policySetCount: pulumi.Output<number>;
  declare readonly updatedAt: pulumi.Output<string | null>;

  constructor(name: string, args: PolicyArgs, opts?: pulumi.CustomResourceOptions) {
    super(
      "Policy",
      name,
      declaredProps(policyProperties, name, args, opts, { codeFile: codeFilePath(args.codeFile) }),
      opts,
    );
    // The engine previews an update of a dynamic resource with its inputs as its outputs, so an output such as
    // policyId would be unknown there, and a PolicySet listing it could not tell an update from a replacement; the
    // resource's id is known whenever the policy is not replaced.
    (this as { policyId: pulumi.Output<string> }).policyId = this.id;
    if (!opts?.id && args.enforce !== undefined) {
      pulumi.log.warn("enforce is deprecated by the service: use enforcementLevel instead", this);
    }
  }

  /** Reads an existing policy by id into the program, without managing it. */
  static get(name: string, id: pulumi.Input<string>, opts?: pulumi.CustomResourceOptions): Policy {
    return new Policy(name, {}, { ...opts, id });
  }
}
