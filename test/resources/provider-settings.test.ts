import { describe, expect, it, vi } from "vitest";
import { policyTestsRequired, settingValueProblem } from "../../src/resources/provider-settings";
import { unknownValue } from "../../src/resources/unknown";

// What CheckConfig says of a setting's value: each type's typo named with the setting, before any request; the
// token's value never shown; a value not known yet passed.

describe("a provider setting's value", () => {
  it.each([
    ["timeoutMs", "30s", 'tfegov:timeoutMs is "30s": use a whole number'],
    ["maxRetries", "-1", 'tfegov:maxRetries is "-1": use a whole number'],
    ["requestsPerSecond", "0", 'tfegov:requestsPerSecond is "0": use a number above 0'],
    ["allowWeakening", "yes", 'tfegov:allowWeakening is "yes": use true or false'],
    ["address", "app.terraform.io", 'tfegov:address: address "app.terraform.io"'],
    ["address", "ftp://tfe.example.com", "must start with https://"],
    ["hostname", "https://tfe.example.com", "an address with https:// goes in tfegov:address"],
    ["organization", "acme corp", "an organization's name holds letters, digits, - and _ only"],
    ["token", "", "tfegov:token is empty"],
  ])("refuses %s = %j, naming the setting", (key, value, message) => {
    expect(settingValueProblem(key, value, "tfegov")).toContain(message);
  });

  it.each([
    ["timeoutMs", "30000"],
    ["timeoutMs", 30000],
    ["requestsPerSecond", "2.5"],
    ["allowWeakening", true],
    ["allowWeakening", "false"],
    ["address", "http://127.0.0.1:8080"],
    ["hostname", "tfe.example.com:8443"],
    ["organization", "acme_corp-1"],
    ["token", "anything"],
    ["address", unknownValue],
  ])("takes %s = %j", (key, value) => {
    expect(settingValueProblem(key, value, "tfegov")).toBeUndefined();
  });

  it("never says the token's value", () => {
    expect(settingValueProblem("token", "   ", "tfegov")).not.toContain("   ");
  });
});

describe("requirePolicyTests, a setting that asks for certainty (review 53)", () => {
  const unset = () => undefined;

  it.each(["TRUE", "True", "1", "yes"])(
    "refuses TFE_REQUIRE_POLICY_TESTS=%s, naming the variable and what it takes, never reading it as off",
    (spelling) => {
      vi.stubEnv("TFE_REQUIRE_POLICY_TESTS", spelling);
      try {
        expect(() => policyTestsRequired(unset)).toThrow(
          `TFE_REQUIRE_POLICY_TESTS is ${JSON.stringify(spelling)}, neither true nor false: set it to true`,
        );
      } finally {
        vi.unstubAllEnvs();
      }
    },
  );

  it("refuses tfe:requirePolicyTests = yes, naming the setting, before the environment", () => {
    vi.stubEnv("TFE_REQUIRE_POLICY_TESTS", "true");
    try {
      expect(() => policyTestsRequired((key) => (key === "requirePolicyTests" ? "yes" : undefined))).toThrow(
        /^tfe:requirePolicyTests is "yes", neither true nor false/,
      );
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it.each([
    [undefined, undefined, false],
    [undefined, "", false],
    [undefined, "false", false],
    [undefined, "true", true],
    ["false", "true", false],
    ["true", undefined, true],
  ])("takes tfe:requirePolicyTests = %j with TFE_REQUIRE_POLICY_TESTS=%j as %j", (configured, variable, required) => {
    vi.stubEnv("TFE_REQUIRE_POLICY_TESTS", variable);
    try {
      expect(policyTestsRequired((key) => (key === "requirePolicyTests" ? configured : undefined))).toBe(required);
    } finally {
      vi.unstubAllEnvs();
    }
  });
});
