import { Struct } from "google-protobuf/google/protobuf/struct_pb";

// Property objects across the plugin's boundary, as the protobuf Structs of the engine's messages. No I/O.

/** A Struct of the engine's as a plain object (an absent one as none). */
export function fromStruct(value: Struct | undefined): Record<string, unknown> {
  return (value?.toJavaScript() ?? {}) as Record<string, unknown>;
}

/**
 * `properties` as a Struct for the engine. The providers' objects hold `undefined` where a property is not set (a
 * check that failed before deriving a level, a half-way failure's outputs), and `Struct.fromJavaScript` throws
 * "Unexpected struct type." on one: the engine would show that instead of the check's reasons, and lose the id a
 * half-way failure carries. An `undefined` member is dropped at every depth (an item of a list becomes null), as
 * JSON would.
 */
export function toStruct(properties: object): Struct {
  return Struct.fromJavaScript(withoutUndefined(properties) as never);
}

function withoutUndefined(value: unknown): unknown {
  if (Array.isArray(value)) return value.map((item) => (item === undefined ? null : withoutUndefined(item)));
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(
    Object.entries(value).flatMap(([key, member]) => (member === undefined ? [] : [[key, withoutUndefined(member)]])),
  );
}
