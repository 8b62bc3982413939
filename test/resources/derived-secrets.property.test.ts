import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isSecretEnvelope, secretInputsKey, withSecretsMarked } from "../../src/resources/derived-secrets";
import { policyProperties } from "../../src/resources/policy/properties";
import { policySetSecrets } from "../../src/resources/policy-set/properties";

// Derived from a secret is a secret (rule 6 of the third review): over every set of secret inputs, what a provider
// answers wraps exactly the properties computed from one of them, and a Terraform policy level (and the digest of
// what an expression reads) is wrapped exactly when it reads a sensitive parameter.

describe("what is computed from a secret", () => {
  it("wraps a Policy's code hash and size exactly when its code is a secret, and nothing else", () => {
    const inputNames = ["code", "codeFile", "description", "enforcementLevel", "name"];
    fc.assert(
      fc.property(fc.subarray(inputNames), (secrets) => {
        const answered = withSecretsMarked(
          { codeHash: "h", codeSize: 3, description: "d", enforcementLevel: "advisory", name: "n" },
          { [secretInputsKey]: secrets },
          policyProperties,
        );
        for (const derived of ["codeHash", "codeSize"]) {
          expect(isSecretEnvelope(answered[derived]), derived).toBe(secrets.includes("code"));
        }
        // What the engine marks itself (an input's own name) is left to it.
        for (const own of ["description", "enforcementLevel", "name"])
          expect(isSecretEnvelope(answered[own])).toBe(false);
      }),
      { numRuns: 100, seed: 20261127 },
    );
  });

  it("wraps a level and a block exactly when it reads a sensitive parameter", () => {
    const block = fc.record({ reads: fc.subarray(["a", "b", "c"]), digest: fc.boolean() });
    fc.assert(
      fc.property(
        fc.array(block, { minLength: 1, maxLength: 4 }),
        fc.subarray(["a", "b", "c"]),
        (blocks, sensitive) => {
          const properties = {
            parameters: Object.fromEntries(
              ["a", "b", "c"].map((key) => [key, { value: key, sensitive: sensitive.includes(key) }]),
            ),
            folderPolicies: Object.fromEntries(blocks.map((_, index) => [`p.${index}`, "mandatory"])),
            policyBlocks: Object.fromEntries(
              blocks.map((entry, index) => [
                `p.${index}`,
                {
                  enforce: 1,
                  operations: null,
                  filter: null,
                  levelInputs: entry.reads,
                  readsDigest: entry.digest ? "d" : null,
                },
              ]),
            ),
          };
          const answered = policySetSecrets(properties) as {
            folderPolicies: Record<string, unknown>;
            policyBlocks: Record<string, unknown>;
            parameters: Record<string, unknown>;
          };
          blocks.forEach((entry, index) => {
            const readsSecret = entry.reads.some((input) => sensitive.includes(input));
            expect(isSecretEnvelope(answered.folderPolicies[`p.${index}`])).toBe(readsSecret);
            expect(isSecretEnvelope(answered.policyBlocks[`p.${index}`])).toBe(entry.digest && sensitive.length > 0);
          });
          for (const key of ["a", "b", "c"])
            expect(isSecretEnvelope(answered.parameters[key])).toBe(sensitive.includes(key));
        },
      ),
      { numRuns: 200, seed: 20261127 },
    );
  });
});
