// The policies of organization "acme" as the service held them when `tfe-governance import`
// wrote this file. adoptExisting: true takes each one over as it is: the first `pulumi up` changes nothing on the
// service where the program and the service agree. Edit freely from here on; this file is yours.
import { ModuleVersionDeprecation, PolicyFolder } from "pulumi-tfe-governance";

const organization = "acme";

new PolicyFolder("polset-importA000001+polset-importB000001-opa", {
  directory: "policy-sets/polset-importA000001+polset-importB000001-opa",
  organization,
  policySetIds: ["polset-importA000001", "polset-importB000001"],
  adoptExisting: true,
});

new PolicyFolder("polset-importA000001-sentinel", {
  directory: "policy-sets/polset-importA000001-sentinel",
  organization,
  policySetIds: ["polset-importA000001"],
  adoptExisting: true,
});

new PolicyFolder("polset-importB000001-sentinel", {
  directory: "policy-sets/polset-importB000001-sentinel",
  organization,
  policySetIds: ["polset-importB000001"],
  adoptExisting: true,
});

// Deprecated module versions. A deprecation exists while its resource does: destroying one reinstates the
// version. The reason leaves out the text the service appends (it appends it again).
const vpcAwsV1_0_0 = new ModuleVersionDeprecation("vpc-aws-1.0.0", {
  organization,
  moduleName: "vpc",
  moduleProvider: "aws",
  version: "1.0.0",
  reason: "Use 1.1.0.",
  link: "https://example.com/vpc",
});
