import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { describeCase, runFolderTests, tally } from "../../../src/policy-code/policy-tests";
import { temporaryDirectory } from "../../temporary-directory";
import { sentinelLibrary, writeFiles } from "./folder-fixture";

// A library's own test cases, run as `sentinel test` runs them: modules and mocks as imports, parameters, each rule
// compared with its expected value; what cannot run says why. Rego tests run with the real opa on PATH.

describe("a Sentinel library's test cases", () => {
  const root = temporaryDirectory("sentinel-tests-");
  writeFiles(root, sentinelLibrary);

  it("each case gets its verdict: pass, fail with the rule's values and the prints, not-run with why", async () => {
    const results = await runFolderTests(root);
    const byFile = Object.fromEntries(results.map((result) => [result.file, result]));
    expect(Object.keys(byFile)).toEqual([
      "test/check-api/pass.hcl",
      "test/restrict-instance-type/fail.hcl",
      "test/restrict-instance-type/param-allows-large.hcl",
      "test/restrict-instance-type/pass.hcl",
      "test/restrict-instance-type/wrong-expectation.hcl",
    ]);
    expect(byFile["test/restrict-instance-type/pass.hcl"]).toMatchObject({
      kind: "sentinel",
      policy: "restrict-instance-type.sentinel",
      verdict: "pass",
      rules: [{ name: "main", expected: true, computed: true }],
    });
    expect(byFile["test/restrict-instance-type/fail.hcl"]?.verdict).toBe("pass");
    expect(byFile["test/restrict-instance-type/param-allows-large.hcl"]?.verdict).toBe("pass");
    expect(byFile["test/restrict-instance-type/wrong-expectation.hcl"]).toMatchObject({
      verdict: "fail",
      reason: "rule main is false, expected true",
      rules: [{ name: "main", expected: true, computed: false }],
      printed: ["aws_instance.web has a type that is not allowed"],
    });
    expect(byFile["test/check-api/pass.hcl"]).toMatchObject({
      verdict: "not-run",
      reason: 'import "http" is not run: it would send requests from the test; mock it in the case',
    });
    expect(tally(results)).toEqual({ pass: 3, fail: 1, notRun: 1 });
    expect(describeCase(byFile["test/restrict-instance-type/wrong-expectation.hcl"]!)).toBe(
      "test/restrict-instance-type/wrong-expectation.hcl (restrict-instance-type.sentinel): rule main is false, expected true",
    );
  });

  it("one policy's cases, when given its file", async () => {
    const results = await runFolderTests(root, { only: join(root, "check-api.sentinel") });
    expect(results.map((result) => result.file)).toEqual(["test/check-api/pass.hcl"]);
  });

  it("a case whose policy errors (error() too) fails with the error's place, whatever it expects; a syntax error in a mock fails too", async () => {
    const broken = temporaryDirectory("sentinel-broken-", "test");
    writeFiles(broken, {
      "p.sentinel": 'import "tfplan/v2" as tfplan\nmain = rule { tfplan.count + "a" }\n',
      "test/p/case.hcl": 'mock "tfplan/v2" {\n  data = { count = 1 }\n}\ntest {\n  rules = { main = false }\n}\n',
      "q.sentinel": 'import "tfplan/v2" as tfplan\nmain = rule { tfplan.ok }\n',
      "test/q/case.hcl":
        'mock "tfplan/v2" {\n  module {\n    source = "mock.sentinel"\n  }\n}\ntest {\n  rules = { main = true }\n}\n',
      "test/q/mock.sentinel": "ok = [\n  true\n]\n",
      "r.sentinel": 'main = rule { error("no") }\n',
      "test/r/case.hcl": "test {\n  rules = { main = false }\n}\n",
    });
    const results = await runFolderTests(broken);
    expect(results.map((result) => [result.file, result.verdict, result.reason])).toEqual([
      ["test/p/case.hcl", "fail", 'rule main errors: p.sentinel:2:28: int + string is not permitted (1 + "a")'],
      [
        "test/q/case.hcl",
        "fail",
        `the policy errors: test/q/mock.sentinel:2:7: syntax error: expected "," or "]" in the list (a list spread over lines needs a comma at each line's end), found end of line`,
      ],
      // error() is a runtime error: the case fails even where it expects main to be false.
      ["test/r/case.hcl", "fail", "rule main errors: r.sentinel:1:20: error() was called: no"],
    ]);
  });
  it("a static import whose JSON does not parse fails that case, naming the file; the others still run", async () => {
    const root = temporaryDirectory("sentinel-static-", "test");
    writeFiles(root, {
      "p.sentinel": 'import "data"\nmain = rule { data.ok }\n',
      "test/p/bad-json.hcl":
        'import "static" "data" {\n  source = "./static/data.json"\n  format = "json"\n}\ntest {\n  rules = {\n    main = true\n  }\n}\n',
      // Not test/p/data.json: sentinel test takes every *.json there as a case of its own.
      "test/p/static/data.json": "{not json",
      "q.sentinel": "main = rule { true }\n",
      "test/q/pass.hcl": "test {\n  rules = {\n    main = true\n  }\n}\n",
    });
    const results = await runFolderTests(root);
    expect(results.map((result) => [result.file, result.verdict])).toEqual([
      ["test/p/bad-json.hcl", "fail"],
      ["test/q/pass.hcl", "pass"],
    ]);
    expect(results[0]?.reason).toMatch(
      /^the policy errors: p\.sentinel:1:\d+: static import "data": test\/p\/static\/data\.json is not JSON: .+/,
    );
  });
  it("a case whose test block names no rule is not run (it asserts nothing); one with no test block expects main true", async () => {
    const root = temporaryDirectory("sentinel-no-rules-", "test");
    writeFiles(root, {
      "p.sentinel": "main = rule { false }\n",
      "test/p/empty-rules.hcl": "test {\n  rules = {}\n}\n",
      "test/p/no-rules.hcl": "test {}\n",
      "test/p/no-test-block.hcl": 'param "unused" {\n  value = 1\n}\n',
      "q.sentinel": "main = rule { true }\n",
      "test/q/no-test-block.hcl": "",
    });
    const results = await runFolderTests(root);
    const assertsNothing =
      "the case's test block names no rule, so it asserts nothing (sentinel test checks only the rules named): " +
      "name what it expects, e.g. rules = { main = true }, or leave the test block out to expect the policy to pass";
    expect(results.map((result) => [result.file, result.verdict, result.reason])).toEqual([
      ["test/p/empty-rules.hcl", "not-run", assertsNothing],
      ["test/p/no-rules.hcl", "not-run", assertsNothing],
      ["test/p/no-test-block.hcl", "fail", "rule main is false, expected true"],
      ["test/q/no-test-block.hcl", "pass", undefined],
    ]);
  });
});

describe("an OPA folder's Rego tests, with the opa on PATH", () => {
  it("each test rule is a case of the report, in the file's order", async () => {
    const root = temporaryDirectory("rego-tests-", "test");
    writeFiles(root, {
      "policies.hcl": 'policy "deny" {\n  query = "data.terraform.deny.deny"\n}\n',
      "deny.rego": 'package terraform.deny\n\ndeny[msg] {\n  input.x == 1\n  msg := "x is one"\n}\n',
      "deny_test.rego":
        'package terraform.deny\n\ntest_denies_one {\n  deny["x is one"] with input as {"x": 1}\n}\n\n' +
        'test_allows_two {\n  count(deny) == 1 with input as {"x": 2}\n}\n',
    });
    const results = await runFolderTests(root);
    expect(results.map((result) => [result.kind, result.file, result.policy, result.verdict, result.rules])).toEqual([
      [
        "opa",
        "deny_test.rego",
        "data.terraform.deny",
        "pass",
        [{ name: "test_denies_one", expected: true, computed: true }],
      ],
      [
        "opa",
        "deny_test.rego",
        "data.terraform.deny",
        "fail",
        [{ name: "test_allows_two", expected: true, computed: false }],
      ],
    ]);
  });

  it("without opa, the Rego tests are not run, and say so", async () => {
    const root = temporaryDirectory("rego-no-opa-", "test");
    writeFiles(root, { "a_test.rego": "package a\n\ntest_x { true }\n" });
    const results = await runFolderTests(root, { opaPath: join(root, "no-such-opa") });
    expect(results).toMatchObject([{ kind: "opa", file: "a_test.rego", verdict: "not-run" }]);
    expect(results[0]?.reason).toMatch(/no-such-opa cannot be run: install OPA/);
  });
});
