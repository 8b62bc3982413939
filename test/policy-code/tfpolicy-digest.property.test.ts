import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { readTfPolicyFolder } from "../../src/policy-code/tfpolicy";

// A level the check cannot evaluate is compared through what it may read (rule 4 of the third review): over random
// parameter values, input defaults and locals, two readings of one file give one digest exactly when everything
// the file's expressions may read is the same; a secret parameter counts by its value too (as its hash; a value turned secret reads as another).

const encoder = new TextEncoder();
const world = fc.record({
  parameter: fc.option(fc.constantFrom("advisory", "mandatory", "mandatory_overridable", "x"), { nil: undefined }),
  secret: fc.boolean(),
  fallback: fc.constantFrom("advisory", "mandatory"),
  local: fc.constantFrom("a", "b"),
});
type World = typeof world extends fc.Arbitrary<infer T> ? T : never;

async function digestOf(state: World): Promise<string | null | undefined> {
  const file =
    `input "level" {\n  type    = string\n  default = "${state.fallback}"\n}\n\n` +
    `locals {\n  suffix = "${state.local}"\n}\n\n` +
    'resource_policy "aws_s3_bucket" "tags" {\n  enforcement_level = core::format("%s", input.level)\n' +
    "  enforce {\n    condition = true\n  }\n}\n";
  const folder = await readTfPolicyFolder(new Map([["a.policy.hcl", encoder.encode(file)]]), {
    parameters: state.parameter === undefined ? {} : { level: state.parameter },
    secretParameters: state.secret ? new Set(["level"]) : new Set(),
  });
  return folder.blocks[0]?.readsDigest;
}

describe("what an expression the check cannot evaluate reads", () => {
  it("gives one digest exactly when every value it may read is the same", async () => {
    await fc.assert(
      fc.asyncProperty(world, world, async (a, b) => {
        const [first, second] = [await digestOf(a), await digestOf(b)];
        expect(first).toMatch(/^[0-9a-f]{32}$/);
        // What the file's expressions may read: the input's value (its parameter, else its default) and the local.
        const reads = (state: World) =>
          JSON.stringify([
            state.parameter === undefined ? ["default", state.fallback] : ["parameter", state.secret, state.parameter],
            state.local,
          ]);
        expect(first === second).toBe(reads(a) === reads(b));
      }),
      { numRuns: 200, seed: 20261127 },
    );
  });
});
