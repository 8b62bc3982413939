export {
  resolveClientConfig,
  TfeApiError,
  TfeClient,
  type TfeClientOptions,
  TfeConfigError,
  TfeConnectionError,
  TfeError,
  TfeValidationError,
} from "./client";
export {
  type GetPolicyArgs,
  getModuleVersion,
  getModuleVersionOutput,
  getPolicy,
  getPolicyOutput,
  type InputArgs,
  type ListPoliciesArgs,
  listModuleVersions,
  listModuleVersionsOutput,
  listPolicies,
  listPoliciesOutput,
  type ModuleArgs,
  type ModuleVersionArgs,
  type ReadFunctionOptions,
} from "./read-functions";
export {
  ModuleVersionDeprecation,
  type ModuleVersionDeprecationArgs,
} from "./resources/module-version-deprecation";
export { Policy, type PolicyArgs } from "./resources/policy";
export { PolicyFolder, type PolicyFolderArgs, type PolicyOverride } from "./resources/policy-folder";
export { PolicySet, type PolicySetArgs } from "./resources/policy-set";
