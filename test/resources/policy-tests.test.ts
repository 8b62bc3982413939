import { describe, expect, it } from "vitest";
import { judgeFolderTests } from "../../src/resources/policy-tests";
import { writeFiles } from "../policy-code/sentinel/folder-fixture";
import { temporaryDirectory } from "../temporary-directory";

// What a folder's own tests say at preview: a case that could not run is no pass. With requirePolicyTests (a setting
// that asks for certainty) it refuses the folder, naming the case and why; without, it is a warning; a folder with no
// tests says nothing.

const passing = "test {\n  rules = {\n    main = true\n  }\n}\n";

/** A folder whose one case cannot run here: its policy calls http, which a test never sends. */
function folderWithCaseThatCannotRun(): string {
  const root = temporaryDirectory("policy-tests-notrun-", "test");
  writeFiles(root, {
    "p.sentinel": 'import "http"\nmain = rule { http.get("https://example.com").status_code is 200 }\n',
    "test/p/pass.hcl": passing,
  });
  return root;
}

describe("judgeFolderTests: cases that could not run (review 53)", () => {
  it("with requirePolicyTests, refuses the folder naming the case and why it could not run", async () => {
    const judged = await judgeFolderTests(folderWithCaseThatCannotRun(), "v0", true);
    expect(judged.warning).toBeUndefined();
    expect(judged.refusal).toMatch(
      /^1 of the folder's 1 test cases could not run here: test\/p\/pass\.hcl \(p\.sentinel\): import "http" is not run: .*tfe:requirePolicyTests \(or TFE_REQUIRE_POLICY_TESTS\) refuses a folder whose tests could not all run: /,
    );
  });

  it("without it, says them as a warning, naming the case and why", async () => {
    const judged = await judgeFolderTests(folderWithCaseThatCannotRun(), "v0", false);
    expect(judged.refusal).toBeUndefined();
    expect(judged.warning).toMatch(
      /^1 of the folder's 1 test cases could not run here: test\/p\/pass\.hcl \(p\.sentinel\): import "http" is not run: .*set tfe:requirePolicyTests true/,
    );
  });

  it("a failing case and one that could not run are both named", async () => {
    const root = folderWithCaseThatCannotRun();
    writeFiles(root, { "q.sentinel": "main = rule { false }\n", "test/q/pass.hcl": passing });
    const { refusal } = await judgeFolderTests(root, "v0", true);
    expect(refusal).toMatch(
      /^1 of the folder's 2 test cases fail: test\/q\/pass\.hcl \(q\.sentinel\): rule main is false, expected true\. 1 of the folder's 2 test cases could not run here: test\/p\/pass\.hcl .*refuses a folder whose tests fail or could not all run/,
    );
  });

  it("a folder with no tests, or whose cases all pass, says nothing, required or not", async () => {
    const root = temporaryDirectory("policy-tests-none-", "test");
    writeFiles(root, { "p.sentinel": "main = rule { true }\n" });
    expect(await judgeFolderTests(root, "v0", true)).toEqual({});
    writeFiles(root, { "test/p/pass.hcl": passing });
    expect(await judgeFolderTests(root, "v0", true)).toEqual({});
    expect(await judgeFolderTests(root, "v0", false)).toEqual({});
  });
});
