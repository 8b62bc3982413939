export {
  resolveClientConfig,
  TfeApiError,
  TfeCancelledError,
  TfeClient,
  type TfeClientOptions,
  TfeConfigError,
  TfeConnectionError,
  TfeError,
  TfeValidationError,
} from "./client";
export {
  type GetPolicyArgs,
  type GetPolicySetArgs,
  getModuleVersion,
  getModuleVersionOutput,
  getPolicy,
  getPolicyOutput,
  getPolicySet,
  getPolicySetOutput,
  type InputArgs,
  type ListPoliciesArgs,
  type ListPolicyResultsArgs,
  type ListPolicySetsArgs,
  listModuleVersions,
  listModuleVersionsOutput,
  listPolicies,
  listPoliciesOutput,
  listPolicyResults,
  listPolicyResultsOutput,
  listPolicySets,
  listPolicySetsOutput,
  type ModuleArgs,
  type ModuleVersionArgs,
  type PolicyRunResult,
  type ReadFunctionOptions,
} from "./read-functions";
export {
  ModuleVersionDeprecation,
  type ModuleVersionDeprecationArgs,
} from "./resources/module-version-deprecation";
export { Policy, type PolicyArgs } from "./resources/policy";
export { PolicyFolder, type PolicyFolderArgs, type PolicyOverride } from "./resources/policy-folder";
export { PolicySet, type PolicySetArgs } from "./resources/policy-set";
