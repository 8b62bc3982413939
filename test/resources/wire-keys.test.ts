import { createRequire } from "node:module";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fromWire, toWire } from "../../src/resources/wire-keys";

// Keys that are data cross the engine's wire (protobuf's Struct, which assigns each key) and come back the same:
// every label, `__proto__` and its look-alikes included, and no two labels become one.

const { Struct } = createRequire(require.resolve("@pulumi/pulumi"))("google-protobuf/google/protobuf/struct_pb") as {
  Struct: { fromJavaScript(value: object): { toJavaScript(): Record<string, unknown> } };
};
const overTheWire = (value: object) => Struct.fromJavaScript(value).toJavaScript();

const label = fc.oneof(
  fc.constantFrom("__proto__", "___proto__", "____proto__", "_proto__", "constructor", "toString", "a.b", ""),
  fc.string({ maxLength: 8 }),
);

describe("keys that are data, across the engine's wire", () => {
  it("come back as they went, whatever the labels", () => {
    fc.assert(
      fc.property(fc.uniqueArray(label, { maxLength: 6 }), (labels) => {
        const levels = Object.fromEntries(labels.map((name, index) => [name, `level-${index}`]));
        const back = fromWire(overTheWire(toWire({ folderPolicies: levels, other: 1 }, ["folderPolicies"])), [
          "folderPolicies",
        ]);
        expect(Object.entries(back.folderPolicies as object).sort()).toEqual(Object.entries(levels).sort());
        expect(back.other).toBe(1);
      }),
      { numRuns: 300, seed: 20261127 },
    );
  });

  it("is what the wire loses without it: a __proto__ key vanishes", () => {
    const levels = Object.fromEntries([["__proto__", "hard-mandatory"]]);
    expect(Object.keys(overTheWire({ folderPolicies: levels }).folderPolicies as object)).toEqual([]);
  });
});
