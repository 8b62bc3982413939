import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { docBlocks, substitute } from "../e2e/doc-recipes";
import { sentinelLibrary, writeFiles } from "../policy-code/sentinel/folder-fixture";
import { compiledCli } from "../server/cli-process";
import { temporaryDirectory } from "../temporary-directory";

// `tfe-governance test` as CI runs it: the compiled command, a library's folder, the exit status a job reads.

const governanceCli = join(compiledCli(), "..", "..", "cli", "tfe-governance.js");

function testCommand(args: string[], cwd?: string) {
  return promisify(execFile)(process.execPath, [governanceCli, "test", ...args], { cwd }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => error,
  );
}

describe("tfe-governance test", () => {
  const library = temporaryDirectory("cli-sentinel-tests-");
  writeFiles(library, sentinelLibrary);

  it("prints each case's verdict, a failing case's rule values and prints, and exits 1 when a case fails", async () => {
    const run = await testCommand([library]);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain(
      'NOT RUN test/check-api/pass.hcl  (check-api.sentinel): import "http" is not run: it would send requests from the test; mock it in the case\n',
    );
    expect(run.stdout).toContain("PASS    test/restrict-instance-type/pass.hcl  (restrict-instance-type.sentinel)\n");
    expect(run.stdout).toContain(
      "FAIL    test/restrict-instance-type/wrong-expectation.hcl  (restrict-instance-type.sentinel)\n" +
        "        rule main is false, expected true\n" +
        "        rule main: expected true, computed false\n" +
        "        print: aws_instance.web has a type that is not allowed\n",
    );
    expect(run.stdout.trim().split("\n").at(-1)).toBe("3 passed, 1 failed, 1 not run");
  });

  it("--json writes one record per case; --run picks cases; the folder defaults to the current directory", async () => {
    const run = await testCommand(["--json", "--run", "restrict-instance-type/(pass|wrong)"], library);
    expect(run.code).toBe(1);
    const records = run.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(records).toEqual([
      {
        kind: "sentinel",
        file: "test/restrict-instance-type/pass.hcl",
        policy: "restrict-instance-type.sentinel",
        verdict: "pass",
        rules: [{ name: "main", expected: true, computed: true }],
        printed: [],
      },
      {
        kind: "sentinel",
        file: "test/restrict-instance-type/wrong-expectation.hcl",
        policy: "restrict-instance-type.sentinel",
        verdict: "fail",
        reason: "rule main is false, expected true",
        rules: [{ name: "main", expected: true, computed: false }],
        printed: ["aws_instance.web has a type that is not allowed"],
      },
    ]);
    expect(run.stderr).toBe("1 passed, 1 failed, 0 not run\n");
  });

  it("exits 0 when no case fails; --fail-on-not-run makes a case that was not run fail the job", async () => {
    const passing = await testCommand([join(library, "check-api.sentinel")]);
    expect(passing.code).toBe(0);
    expect(passing.stdout).toContain("0 passed, 0 failed, 1 not run");
    const strict = await testCommand([join(library, "check-api.sentinel"), "--fail-on-not-run"]);
    expect(strict.code).toBe(1);
  });

  it('docs/policy-sets.md "Testing a library in CI": the command as written, on a library laid out as there', async () => {
    const [recipe] = docBlocks("docs/policy-sets.md", "### Testing a library in CI", "sh");
    const repository = temporaryDirectory("cli-sentinel-recipe-", "test");
    writeFiles(join(repository, "policies", "aws"), sentinelLibrary);
    const command = substitute(recipe as string, "npx tfe-governance", `"${process.execPath}" "${governanceCli}"`);
    const run = await promisify(execFile)("bash", ["-c", command], { cwd: repository }).then(
      ({ stdout }) => ({ code: 0, stdout }),
      (error: { code: number; stdout: string }) => error,
    );
    expect(run.code).toBe(1);
    expect(run.stdout).toContain("FAIL    test/restrict-instance-type/wrong-expectation.hcl");
    expect(run.stdout.trim().split("\n").at(-1)).toBe("3 passed, 1 failed, 1 not run");
  });

  it("exits 2 on a folder that does not exist or an option it does not know", async () => {
    const missing = await testCommand([join(library, "no-such-folder")]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/no-such-folder: no folder .*no-such-folder/);
    const unknown = await testCommand(["--jsn"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("Unknown option '--jsn'");
  });
});
