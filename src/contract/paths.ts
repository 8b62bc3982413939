// The rule for values that go into a request path, shared by the client (before sending) and the provider checks.
// Whitespace, control characters, `/`, `\`, `.` alone and `..` anywhere: none belongs in one path segment,
// and each could turn a request into one for another resource.
const forbiddenInSegment = /[\s\p{Cc}/\\]/u;

/** Why a value cannot be a path segment, or `undefined` when it can. */
export function segmentProblem(value: unknown): string | undefined {
  if (typeof value !== "string" || value.length === 0) return "is required and must be a non-empty string";
  if (value === "." || value.includes("..")) return `${JSON.stringify(value)} cannot be "." or contain ".."`;
  if (forbiddenInSegment.test(value)) {
    return `${JSON.stringify(value)} cannot contain '/', '\\', whitespace or control characters`;
  }
  return undefined;
}
