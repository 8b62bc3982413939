import { describe, expect, it } from "vitest";
import { runFolderTests } from "../../../src/policy-code/policy-tests";
import { NotSupported, SentinelRuntimeError } from "../../../src/policy-code/sentinel/errors";
import { regexOf } from "../../../src/policy-code/sentinel/operators";
import { temporaryDirectory } from "../../temporary-directory";
import { writeFiles } from "./folder-fixture";

// `matches` reads RE2, as the runtime's Go regexp does (review 53): each expected value below is what Go's
// regexp.MatchString gives, which JavaScript's own reading of the same text often does not. What Go refuses is the
// policy's runtime error; what is not translated is NotSupported, never a guess.

const matches = (text: string, pattern: string) => regexOf(pattern).test(text);

describe("valid RE2 matches what Go's regexp matches", () => {
  it.each([
    ["A", "^\\x{41}$", true],
    ["A", "^\\x41$", true],
    ["A", "^\\101$", true],
    ["\r", "^.$", true],
    ["\n", "^.$", false],
    ["\n", "(?s)^.$", true],
    ["é", "^.$", true],
    ["😀", "^.$", true],
    ["😀", "^\\x{1F600}$", true],
    ["\v", "\\s", false],
    ["\u00a0", "\\s", false],
    ["é", "^\\w$", false],
    ["C", "a(?i)b|c", true],
    ["aB", "a(?i)b|c", true],
    ["Ab", "a(?i)b|c", false],
    ["Ab", "(?i:a)b", true],
    ["aB", "(?i:a)b", false],
    ["AB", "(?i)a(?-i)b", false],
    ["Ab", "(?i)a(?-i)b", true],
    ["a\nb\nc", "(?m)^b$", true],
    ["a\nb\nc", "^b$", false],
    ["a\rb", "(?m)^b$", false],
    ["a\nb", "\\Ab", false],
    ["b\n", "b$", false],
    ["abc", "^[[:alpha:]]+$", true],
    ["5", "[[:^digit:]]", false],
    ["é", "^\\pL$", true],
    ["α", "^\\p{Greek}$", true],
    ["a", "^\\PL$", false],
    ["a", "^\\p{^Greek}$", true],
    ["a", "\\Q.*\\E", false],
    ["x.*y", "x\\Q.*\\Ey", true],
    ["a{,2}", "^a{,2}$", true],
    ["aaa", "^a{2,3}$", true],
    ["-", "^\\-$", true],
    ["-", "^[\\d-]$", true],
    ["]", "^[]a]$", true],
    ["a", "^(?P<first>a)(?<second>)$", true],
    ["aaa", "(?U)^a+$", true],
    ["aaa", "^a*?$", true],
    ["}", "^}$", true],
    ["K", "(?i)k", true],
  ])("%j matches %j: %j", (text, pattern, expected) => {
    expect(matches(text, pattern)).toBe(expected);
  });
});

describe("a pattern Go's regexp refuses is the policy's runtime error, naming the pattern and what RE2 lacks", () => {
  it.each([
    ["^(?!default$).*$", "RE2 has no look-ahead ((?!)"],
    ["a(?=b)", "RE2 has no look-ahead ((?=)"],
    ["(?<=x)a", "RE2 has no look-behind ((?<=)"],
    ["(?<!x)a", "RE2 has no look-behind ((?<!)"],
    ["(a)\\1", "RE2 has no back-references (\\1)"],
    ["a**", "invalid nested repetition operator"],
    ["*a", "missing argument to repetition operator"],
    ["\\Z", "invalid escape sequence"],
    ["(a", "missing closing )"],
    ["a)", "unexpected )"],
    ["[a", "missing closing ]"],
    ["a{1001}", "invalid repeat count"],
    ["[z-a]", "invalid character class range"],
    ["(?x)a", "invalid or unsupported Perl syntax"],
    ["(?P=n)", "invalid or unsupported Perl syntax"],
    ["[[:word2:]]", "invalid character class range"],
    ["a\\", "trailing backslash"],
  ])("%j: %s", (pattern, lacks) => {
    let thrown: unknown;
    try {
      regexOf(pattern);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(SentinelRuntimeError);
    expect((thrown as Error).message).toContain(`regular expression ${JSON.stringify(pattern)} is not RE2`);
    expect((thrown as Error).message).toContain(lacks);
  });

  it("what RE2 has and this evaluator does not translate is NotSupported", () => {
    expect(() => regexOf("a\\Cb")).toThrow(NotSupported);
  });
});

describe("a case run by tfe-governance test", () => {
  /** One policy `p.sentinel` and its one case expecting main true, run as `tfe-governance test` runs them. */
  async function runOne(policy: string) {
    const root = temporaryDirectory("re2-", "test");
    writeFiles(root, { "p.sentinel": policy, "test/p/case.hcl": "test {\n  rules = {\n    main = true\n  }\n}\n" });
    return (await runFolderTests(root))[0];
  }

  it("a look-ahead, a look-behind or a back-reference (no RE2) fails the case, whatever it expects", async () => {
    for (const pattern of ["^(?!default$).*$", "(?<=x)a", "(a)\\\\1"]) {
      const result = await runOne(`main = rule { "xaa-prod" matches "${pattern}" }\n`);
      expect({ pattern, verdict: result?.verdict }).toEqual({ pattern, verdict: "fail" });
      expect(result?.reason).toMatch(/^rule main errors: p\.sentinel:1:\d+: regular expression .* is not RE2/);
    }
  });

  it("RE2's \\x{41} is the letter A", async () => {
    expect((await runOne('main = rule { "A" matches "^\\\\x{41}$" }\n'))?.verdict).toBe("pass");
  });
});
