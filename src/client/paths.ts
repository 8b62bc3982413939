import { TfeValidationError } from "./errors";

// Whitespace, control characters, `/`, `\`, `.` alone and `..` anywhere: none belongs in one path segment,
// and each could turn a request into one for another resource.
const forbiddenInSegment = /[\s\p{Cc}/\\]/u;

/** Percent-encodes one path segment after rejecting values that could escape it. `field` names it in errors. */
export function pathSegment(field: string, value: string): string {
  const problem = segmentProblem(value);
  if (problem) throw new TfeValidationError([{ field, message: problem }]);
  return encodeURIComponent(value);
}

/** Why a value cannot be a path segment, or `undefined` when it can. */
export function segmentProblem(value: unknown): string | undefined {
  if (typeof value !== "string" || value.length === 0) return "is required and must be a non-empty string";
  if (value === "." || value.includes("..")) return `${JSON.stringify(value)} cannot be "." or contain ".."`;
  if (forbiddenInSegment.test(value)) {
    return `${JSON.stringify(value)} cannot contain '/', '\\', whitespace or control characters`;
  }
  return undefined;
}
