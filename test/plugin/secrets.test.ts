import { describe, expect, it } from "vitest";
import { isSecretEnvelope, secret, unwrapProperties, unwrapSecrets, wrapProperties } from "../../src/plugin/secrets";

describe("secrets across the plugin's boundary", () => {
  it("unwraps nested envelopes and remembers which top-level properties held one", () => {
    const given = {
      name: "guard",
      code: secret("main = rule { true }"),
      parameters: { region: "eu", apiKey: secret("k") },
    };
    const { plain, secretNames } = unwrapProperties(given);
    expect(plain).toEqual({ name: "guard", code: "main = rule { true }", parameters: { region: "eu", apiKey: "k" } });
    expect([...secretNames].sort()).toEqual(["code", "parameters"]);
  });

  it("wraps the named properties again, and nothing that is absent", () => {
    const wrapped = wrapProperties({ code: "x", name: "n", query: undefined }, new Set(["code", "query"]));
    expect(isSecretEnvelope(wrapped.code)).toBe(true);
    expect(wrapped.name).toBe("n");
    expect(wrapped.query).toBeUndefined();
    expect(unwrapSecrets(wrapped).plain).toEqual({ code: "x", name: "n", query: undefined });
  });

  it("says a value held a secret anywhere inside it", () => {
    expect(unwrapSecrets([1, [secret(2)]]).secret).toBe(true);
    expect(unwrapSecrets({ a: [1, 2] }).secret).toBe(false);
  });
});
