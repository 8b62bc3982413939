import * as pulumi from "@pulumi/pulumi";

/** The value Pulumi puts in inputs that are not known yet (outputs of other resources during preview). */
export const unknownValue = pulumi.runtime.unknownValue;

export function isUnknown(value: unknown): boolean {
  return value === unknownValue;
}

/** The ids of a list known at preview (none where the list itself is not known yet). */
export function knownIds(values: unknown): string[] {
  return (Array.isArray(values) ? values : []).filter((id): id is string => typeof id === "string" && !isUnknown(id));
}

/** Whether a list, or one of its items, is not known until apply. */
export function holdsUnknown(value: unknown): boolean {
  return isUnknown(value) || (Array.isArray(value) && value.some((item) => isUnknown(item)));
}
