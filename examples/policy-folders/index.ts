import { PolicyFolder } from "pulumi-tfe-governance";

// Each folder is laid out as HCP Terraform reads a policy set from version control. Every `policy` block becomes a
// Policy; the folder is checked (HCL, Sentinel code, Rego with opa) before anything is sent.
const sentinel = new PolicyFolder("sentinel-baseline", { directory: "sentinel" });
// Its Rego is v1 syntax with "import rego.v1", which the service's default OPA runtime (0.61.x for latest) reads too.
const opa = new PolicyFolder("opa-baseline", { directory: "opa" });

export const policyIds = { sentinel: sentinel.policyIds, opa: opa.policyIds };
