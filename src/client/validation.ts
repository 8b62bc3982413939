import type { z } from "zod";
import { type FieldProblem, TfeValidationError } from "./errors";

/** Parses a request document strictly, turning zod issues into errors that name the field and the fix. */
export function validRequest<S extends z.ZodType>(
  schema: S,
  value: unknown,
  fieldNames: Record<string, string> = {},
): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw new TfeValidationError(result.error.issues.map((issue) => issueToProblem(issue, fieldNames)));
}

/** `fieldNames` maps wire names (after `attributes`) to the caller's names, so errors name what the caller wrote. */
function issueToProblem(issue: z.core.$ZodIssue, fieldNames: Record<string, string>): FieldProblem {
  const path = issue.path.map(String);
  const attributeIndex = path.lastIndexOf("attributes");
  const wire = (attributeIndex >= 0 && path.length > attributeIndex + 1 ? path.slice(attributeIndex + 1) : path).join(
    ".",
  );
  const prefix = Object.keys(fieldNames).find((name) => wire === name || wire.startsWith(`${name}.`));
  const field = (prefix === undefined ? wire : fieldNames[prefix] + wire.slice(prefix.length)) || "(document)";
  if (issue.code === "unrecognized_keys") {
    return { field, message: `has unknown keys ${issue.keys.join(", ")}: remove them` };
  }
  return { field, message: issue.message };
}
