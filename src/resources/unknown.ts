import * as pulumi from "@pulumi/pulumi";

/** The value Pulumi puts in inputs that are not known yet (outputs of other resources during preview). */
export const unknownValue = pulumi.runtime.unknownValue;

export function isUnknown(value: unknown): boolean {
  return value === unknownValue;
}
