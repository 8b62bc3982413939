// The public face of `pulumi-tfe-governance/client`: the client, its options, what its calls take and return, and
// its errors. The wire documents (zod schemas) and request builders stay internal, so a zod upgrade or a change of
// wire parsing is never a breaking change of this package.

export {
  type EnforcementLevel,
  enforcementLevels,
  enforcementLevelsByKind,
  maxPolicyCodeBytes,
  type PolicyKind,
  type PolicySortOrder,
  policyKinds,
  policySortOrders,
} from "../contract/policies";
export { libraryVersion, TfeClient, type TfeClientOptions } from "./client";
export {
  type ClientConfigInputs,
  defaultAddress,
  type ResolvedClientConfig,
  resolveClientConfig,
  type StackConfigSource,
} from "./config";
export {
  type FieldProblem,
  TfeApiError,
  TfeCancelledError,
  TfeConfigError,
  TfeConnectionError,
  TfeError,
  TfeValidationError,
} from "./errors";
export type {
  DeprecateOptions,
  ModuleVersionAddress,
  ModuleVersionDeprecation,
  ModuleVersionsApi,
} from "./module-versions";
export type { Pagination } from "./pagination";
export type {
  CreatePolicyOptions,
  ListPoliciesOptions,
  PoliciesApi,
  Policy,
  PolicyPage,
  UpdatePolicyOptions,
} from "./policies";
export type {
  CreatePolicySetOptions,
  ListPolicySetsOptions,
  ParameterOptions,
  PolicySet,
  PolicySetPage,
  PolicySetParameter,
  PolicySetScope,
  PolicySetSettings,
  PolicySetsApi,
  PolicySetVcs,
  PolicySetVersion,
  UpdatePolicySetOptions,
  VcsRepo,
} from "./policy-sets";
export { RateLimiter } from "./rate-limiter";
export type {
  Deprecation,
  RegistryApi,
  RegistryModuleAddress,
  RegistryModuleVersion,
  RegistryModuleVersionSummary,
} from "./registry";
export type { PolicyResult, Run, RunsApi } from "./runs";
export { defaultRetryPolicy, type RetryPolicy } from "./transport";
export type { ScopeTarget, ScopeTargetsApi } from "./workspaces";
