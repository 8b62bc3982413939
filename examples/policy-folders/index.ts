import { PolicyFolder } from "pulumi-tfe-governance";

// Each folder is laid out as HCP Terraform reads a policy set from version control. Every `policy` block becomes a
// Policy; the folder is checked (HCL, Sentinel code, Rego with opa) before anything is sent.
const sentinel = new PolicyFolder("sentinel-baseline", { directory: "sentinel" });
const opa = new PolicyFolder("opa-baseline", { directory: "opa", regoVersion: "v1" });

export const policyIds = { sentinel: sentinel.policyIds, opa: opa.policyIds };
