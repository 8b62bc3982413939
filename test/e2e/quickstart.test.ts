import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { expect, it } from "vitest";
import { engineLogArgs, launchedLanguageHost, splitEngineLog } from "./language-host";

const run = promisify(execFile);

// README's main-job command, from scratch, to the end: the local server, `pulumi up` of the top-level Pulumi.yaml
// (the quickstart program) and of examples/policy-folders, and the report of what the server holds. Run again on the
// same data, it changes nothing, and deletes nothing: a program entry point resolved to anything but the program's
// index.ts would register no resource and so delete them all.
it("npm run quickstart creates both programs' policies and the deprecation, then changes nothing twice", async () => {
  const dataDir = await mkdtemp(join(tmpdir(), "quickstart-"));
  const options = {
    cwd: resolve(__dirname, "..", ".."),
    env: { ...process.env, QUICKSTART_DATA_DIR: dataDir },
    maxBuffer: 256 * 1024 * 1024,
  };
  const quickstart = async () => {
    const { stdout, stderr } = await run("npm", ["run", "quickstart", "--", ...engineLogArgs], options);
    const host = await launchedLanguageHost(splitEngineLog(stderr).engineLog);
    expect(host?.mainPackage).toMatch(/pulumi-language-nodejs/);
    expect(stdout).not.toMatch(/delet/i);
    // The quickstart's update, then the policy-folder program's, then the report.
    const [quickstartUp = "", rest = ""] = stdout.split("The policy-folder program");
    const [policyFoldersUp = "", report = ""] = rest.split("What the local server now holds");
    return { quickstartUp, policyFoldersUp, report };
  };
  try {
    const first = await quickstart();
    expect(first.quickstartUp).toMatch(/\+ 5 created/);
    // Two components and their four policies.
    // Two folders: 2 components, their 2 manifests, 4 policies, and the stack.
    expect(first.policyFoldersUp).toMatch(/\+ 9 created/);
    expect(first.report).toMatch(/policy require-tags\s+sentinel soft-mandatory\s+\d+ bytes of code, in 1 policy set/);
    expect(first.report).toMatch(/policy restrict-instance-types\s+sentinel hard-mandatory/);
    expect(first.report).toMatch(/policy deny-public-buckets\s+opa\s+mandatory/);
    expect(first.report).toMatch(
      /policy require-owner-tag\s+sentinel soft-mandatory\s+\d+ bytes of code, in 0 policy set/,
    );
    expect(first.report).toMatch(/policy limit-instance-types\s+sentinel hard-mandatory/);
    expect(first.report).toMatch(/policy deny-public-bucket-acls\s+opa\s+mandatory/);
    expect(first.report).toMatch(/policy require-encrypted-volumes\s+opa\s+advisory/);
    expect(first.report).toMatch(/acme\/vpc\/aws 1\.0\.0\s+deprecated: 1\.0\.0 creates one NAT gateway/);
    expect(first.report).toMatch(/acme\/vpc\/aws 1\.1\.0\s+active/);

    const second = await quickstart();
    const third = await quickstart();
    for (const again of [second, third]) {
      expect(again.quickstartUp).toMatch(/^\s+5 unchanged$/m);
      expect(again.policyFoldersUp).toMatch(/^\s+9 unchanged$/m);
      for (const up of [again.quickstartUp, again.policyFoldersUp]) {
        expect(up).not.toMatch(/created|updated|replaced/);
      }
      expect(again.report).toMatch(/policy require-tags\s+sentinel soft-mandatory/);
      expect(again.report).toMatch(/policy require-owner-tag\s+sentinel soft-mandatory/);
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}, 450_000);
