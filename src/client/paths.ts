import { segmentProblem } from "../contract/paths";
import { TfeValidationError } from "./errors";

/** Percent-encodes one path segment after rejecting values that could escape it. `field` names it in errors. */
export function pathSegment(field: string, value: string): string {
  const problem = segmentProblem(value);
  if (problem) throw new TfeValidationError([{ field, message: problem }]);
  return encodeURIComponent(value);
}
