import * as pulumi from "@pulumi/pulumi";
import { ModuleVersionDeprecation, Policy, PolicySet } from "pulumi-tfe-governance";

// Credentials and organization come from stack config (tfe:token as a secret, tfe:organization, tfe:hostname
// or tfe:address) or the environment (TFE_TOKEN, TFE_ORGANIZATION, TFE_HOSTNAME). See README.md.
const config = new pulumi.Config("quickstart");
const baselinePolicySet = config.get("baselinePolicySetId");
// The workspace the policy sets apply to; left out, they are declared and apply nowhere yet.
const workspaceIds = config.get("workspaceId") ? [config.require("workspaceId")] : [];

const requireTags = new Policy("require-tags", {
  description: "Every resource carries an `owner` and a `cost-center` tag.",
  codeFile: "policies/require-tags.sentinel",
  enforcementLevel: "soft-mandatory",
  policySetIds: baselinePolicySet ? [baselinePolicySet] : [],
});

const restrictInstanceTypes = new Policy("restrict-instance-types", {
  description: "Only the instance types the platform team supports.",
  codeFile: "policies/restrict-instance-types.sentinel",
  enforcementLevel: "hard-mandatory",
});

const denyPublicBuckets = new Policy("deny-public-buckets", {
  kind: "opa",
  query: "data.terraform.deny",
  description: "No S3 bucket may be readable by everyone.",
  codeFile: "policies/deny-public-buckets.rego",
  enforcementLevel: "mandatory",
});

const vpcDeprecation = new ModuleVersionDeprecation("vpc-aws-1.0.0", {
  moduleName: "vpc",
  moduleProvider: "aws",
  version: "1.0.0",
  reason: "1.0.0 creates one NAT gateway per subnet; upgrade to 1.1.0.",
  link: "https://example.com/platform/modules/vpc/upgrade-to-1.1",
});

// Two folders uploaded whole, as the service reads them from version control: a Sentinel set with a module, a
// static import and a parameter, and an OPA set whose Rego shares a package across files.
const sentinelBaseline = new PolicySet("sentinel-baseline", {
  description: "Instance counts and regions, with shared plan functions.",
  directory: "policy-sets/sentinel-baseline",
  workspaceIds,
  parameters: { max_instances: "10" },
});

const opaNetwork = new PolicySet("opa-network", {
  description: "No ingress from everywhere; flow logs on every VPC.",
  directory: "policy-sets/opa-network",
  workspaceIds,
});

// Terraform policy: each *.policy.hcl file beside its *.policytest.hcl, levels set in the files. The parameter sets
// the level the Owner-tag policy reads from its input. HCP Terraform only: on Terraform Enterprise, leave it out with
// `pulumi config set quickstart:terraformPolicy false`.
const terraformPolicy =
  config.getBoolean("terraformPolicy") === false
    ? undefined
    : new PolicySet("terraform-policy", {
        description: "S3 buckets: an Owner tag, and no public access.",
        directory: "policy-sets/terraform-policy",
        workspaceIds,
        parameters: { require_tags_level: "mandatory" },
      });

export const policySets = {
  sentinelBaseline: { id: sentinelBaseline.policySetId, version: sentinelBaseline.currentVersionId },
  opaNetwork: { id: opaNetwork.policySetId, version: opaNetwork.currentVersionId },
  ...(terraformPolicy
    ? { terraformPolicy: { id: terraformPolicy.policySetId, version: terraformPolicy.currentVersionId } }
    : {}),
};
export const policies = {
  requireTags: { id: requireTags.policyId, level: requireTags.enforcementLevel, codeHash: requireTags.codeHash },
  restrictInstanceTypes: { id: restrictInstanceTypes.policyId, level: restrictInstanceTypes.enforcementLevel },
  denyPublicBuckets: { id: denyPublicBuckets.policyId, level: denyPublicBuckets.enforcementLevel },
};
export const deprecatedModuleVersion = {
  id: vpcDeprecation.id,
  reason: vpcDeprecation.effectiveReason,
};
