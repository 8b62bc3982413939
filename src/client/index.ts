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
  TfeConfigError,
  TfeConnectionError,
  TfeError,
  TfeValidationError,
} from "./errors";
export * from "./jsonapi";
export * from "./module-versions";
export { pathSegment, segmentProblem } from "./paths";
export * from "./policies";
export { RateLimiter } from "./rate-limiter";
export * from "./registry";
export { defaultRetryPolicy, type RetryPolicy } from "./transport";
