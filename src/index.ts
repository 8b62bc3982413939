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
export { Policy, type PolicyArgs } from "./resources/policy";
