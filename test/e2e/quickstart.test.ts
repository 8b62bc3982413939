import { execFile, execFileSync, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { cp, mkdir, mkdtemp, rm, symlink } from "node:fs/promises";
import { type AddressInfo, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { expect, it } from "vitest";
import { freshEnv, processesWith } from "./doc-recipes";
import { engineLogArgs, launchedLanguageHost, splitEngineLog } from "./language-host";

const run = promisify(execFile);
const foreignPassphrase = "a passphrase of other work";

// README's main-job command, from scratch, to the end: the local server, `pulumi up` of the top-level Pulumi.yaml
// (the quickstart program), of examples/policy-folders and of examples/yaml (through the plugin), and the report of what the server holds. Run again on the
// same data (from a shell that exports a passphrase of its own), it changes nothing, and deletes nothing: a program entry point resolved to anything but the program's
// index.ts would register no resource and so delete them all.
it("npm run quickstart creates the three programs' policies and the deprecation, then changes nothing, whatever passphrase the shell exports", async () => {
  const dataDir = await mkdtemp(join(tmpdir(), "quickstart-"));
  const options = {
    cwd: resolve(__dirname, "..", ".."),
    env: { ...process.env, QUICKSTART_DATA_DIR: dataDir },
    maxBuffer: 256 * 1024 * 1024,
  };
  const quickstart = async (extraEnv: NodeJS.ProcessEnv = {}) => {
    const { stdout, stderr } = await run("npm", ["run", "quickstart", "--", ...engineLogArgs], {
      ...options,
      env: { ...options.env, ...extraEnv },
    });
    // The seed's repository is made from examples/quickstart/policy-sets/sentinel-baseline (review of issue 52: it was
    // looked for under the repository's root, and every first quickstart warned that it could not make it).
    expect(stderr).not.toContain("could not make repository");
    const host = await launchedLanguageHost(splitEngineLog(stderr).engineLog);
    expect(host?.mainPackage).toMatch(/pulumi-language-nodejs/);
    // The quickstart's update, then the policy-folder program's, then the report and the closing lines.
    const [quickstartUp = "", rest = ""] = stdout.split("The policy-folder program");
    const [policyFoldersUp = "", yamlRest = ""] = rest.split("The YAML program");
    const [yamlOutput = "", report = ""] = yamlRest.split("What the local server now holds");
    // Under -v=9 the YAML host's own log lines reach stdout as the stack's diagnostics: not what the up did.
    const yamlUp = yamlOutput
      .split("\n")
      .filter((line) => !/[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+ /.test(line))
      .join("\n");
    expect(`${quickstartUp}${policyFoldersUp}${yamlUp}`).not.toMatch(/delet/i);
    return { quickstartUp, policyFoldersUp, yamlUp, report };
  };
  try {
    // A shell that exported the provider's settings for other work (review of issue 52): the quickstart runs with its
    // own; TFE_REQUIRE_NO_BLOCKED_RUNS=true refused its first up.
    const first = await quickstart({ TFE_REQUIRE_NO_BLOCKED_RUNS: "true", TFE_ORGANIZATION: "not-acme" });
    // Three policies, three policy sets (Sentinel, OPA, Terraform policy), the deprecation, and the stack.
    expect(first.quickstartUp).toMatch(/\+ 8 created/);
    // Two components and their four policies.
    // Two folders: 2 components, their 2 manifests, 4 policies, and the stack.
    expect(first.policyFoldersUp).toMatch(/\+ 9 created/);
    // The YAML program through the plugin: a policy, the set that holds it, and the stack.
    expect(first.yamlUp).toMatch(/\+ 3 created/);
    expect(first.yamlUp).toMatch(/vpcVersions/);
    expect(first.report).toMatch(/policy require-owner\s+sentinel hard-mandatory\s+\d+ bytes of code, in 1 policy set/);
    expect(first.report).toMatch(/policy require-tags\s+sentinel soft-mandatory\s+\d+ bytes of code, in 1 policy set/);
    expect(first.report).toMatch(/policy restrict-instance-types\s+sentinel hard-mandatory/);
    expect(first.report).toMatch(/policy deny-public-buckets\s+opa\s+mandatory/);
    expect(first.report).toMatch(
      /policy require-owner-tag\s+sentinel soft-mandatory\s+\d+ bytes of code, in 0 policy set/,
    );
    expect(first.report).toMatch(/policy limit-instance-types\s+sentinel hard-mandatory/);
    expect(first.report).toMatch(/policy deny-public-bucket-acls\s+opa\s+mandatory/);
    expect(first.report).toMatch(/policy require-encrypted-volumes\s+opa\s+advisory/);
    expect(first.report).toMatch(/policy set sentinel-baseline\s+sentinel version ready, on 1 workspace/);
    expect(first.report).toMatch(/policy set opa-network\s+opa\s+version ready, on 1 workspace/);
    expect(first.report).toMatch(/policy set terraform-policy\s+tfpolicy\s+version ready, on 1 workspace/);
    expect(first.report).toMatch(/acme\/vpc\/aws 1\.0\.0\s+deprecated: 1\.0\.0 creates one NAT gateway/);
    expect(first.report).toMatch(/acme\/vpc\/aws 1\.1\.0\s+active/);

    // A shell that exported a passphrase for other work (docs/other-languages.md has one export it): the quickstart's
    // stacks keep their own.
    const second = await quickstart({ PULUMI_CONFIG_PASSPHRASE: foreignPassphrase });
    expect(second.quickstartUp).toMatch(/^\s+8 unchanged$/m);
    expect(second.policyFoldersUp).toMatch(/^\s+9 unchanged$/m);
    expect(second.yamlUp).toMatch(/^\s+3 unchanged$/m);
    for (const up of [second.quickstartUp, second.policyFoldersUp, second.yamlUp]) {
      expect(up).not.toMatch(/created|updated|replaced/);
    }
    expect(second.report).toMatch(/policy require-tags\s+sentinel soft-mandatory/);
    expect(second.report).toMatch(/policy require-owner-tag\s+sentinel soft-mandatory/);

    // Its closing lines, run as printed: the free port of this machine for 8080, and "yes" to the two commands that
    // ask. The drift check passes, and destroy deletes what the quickstart program made.
    const block = second.report
      .split("\n")
      .filter((line) => line.startsWith("    "))
      .map((line) => line.slice(4))
      .join("\n");
    const port = String(await freePort());
    const lines = block.replaceAll("--port 8080", `--port ${port}`).replaceAll("127.0.0.1:8080", `127.0.0.1:${port}`);
    expect(lines).toMatch(/^pulumi preview --refresh --expect-no-changes$/m);
    // A fresh shell's environment, with a passphrase of its own, and the offline settings of this project's runs.
    const env = freshEnv({ PULUMI_SKIP_CONFIRMATIONS: "true", PULUMI_CONFIG_PASSPHRASE: foreignPassphrase });
    const { stdout } = await run(
      "bash",
      ["-euo", "pipefail", "-c", `trap 'kill $(jobs -p) 2>/dev/null' EXIT\n${lines}`],
      {
        ...options,
        env,
      },
    );
    expect(stdout).toMatch(/- 8 deleted/);
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}, 600_000);

// Stacks an earlier quickstart made under another passphrase (it used to take the caller's): one line naming what to
// remove, and no stack trace. In a directory of its own holding the quickstart's script, so that the stack settings
// file with the other passphrase's salt is this test's alone.
it("a stack of an earlier run with another passphrase: one line saying what to remove, no stack trace", async () => {
  const repo = resolve(__dirname, "..", "..");
  const root = await mkdtemp(join(tmpdir(), "quickstart-passphrase-"));
  try {
    await cp(join(repo, "scripts"), join(root, "scripts"), { recursive: true });
    await cp(join(repo, "Pulumi.yaml"), join(root, "Pulumi.yaml"));
    await cp(join(repo, "examples", "quickstart", "seed.json"), join(root, "examples", "quickstart", "seed.json"));
    await symlink(join(repo, "node_modules"), join(root, "node_modules"));
    const dataDir = join(root, ".tfe");
    await mkdir(join(dataDir, "pulumi-state"), { recursive: true });
    const env = freshEnv({
      QUICKSTART_DATA_DIR: dataDir,
      PULUMI_BACKEND_URL: `file://${join(dataDir, "pulumi-state")}`,
      PULUMI_CONFIG_PASSPHRASE: foreignPassphrase,
    });
    await run("pulumi", ["stack", "init", "quickstart", "--non-interactive"], { cwd: root, env });
    const failed = await run(process.execPath, [join(root, "scripts", "quickstart.mjs")], { cwd: root, env }).then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failed?.code).toBe(1);
    const lines = failed?.stderr.trim().split("\n") ?? [];
    expect(lines.at(-1)).toBe(
      "quickstart: its stacks were made by an earlier run with another passphrase (a PULUMI_CONFIG_PASSPHRASE of that " +
        'shell); the quickstart now always uses its own ("quickstart"). To start them afresh: rm -rf .tfe Pulumi.quickstart.yaml',
    );
    expect(failed?.stderr).not.toMatch(/^\s+at /m);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}, 120_000);

// Review of issue 52, item 11: no stack's salt in the repository. The quickstart makes each of its stack settings
// files at its first run, with its own passphrase; a tracked one would hold the salt of whoever made it, and the
// quickstart's advice after a passphrase mismatch ("rm -rf ...") would delete a tracked file.
it("the repository tracks no stack settings file with an encryptionsalt: the quickstart makes its own", () => {
  const repo = resolve(__dirname, "..", "..");
  const tracked = execFileSync("git", ["ls-files", "-z"], { cwd: repo, encoding: "utf8" }).split("\0").filter(Boolean);
  const salted = tracked.filter(
    (file) =>
      /(^|\/)Pulumi\.[^/]+\.ya?ml$/.test(file) && /encryptionsalt:/.test(readFileSync(join(repo, file), "utf8")),
  );
  expect(salted).toEqual([]);
});

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => done(port));
    });
    server.on("error", fail);
  });
}

// Stopped midway, as a terminal's Ctrl-C or a CI runner's SIGTERM stops it: every process it started (npm's shell,
// node, pulumi, the language host, the providers) is gone soon after, well before the quickstart would have ended.
// npm signals its child, which is node itself: the script execs all the way down (package.json, quickstart.sh).
it.each(["SIGTERM", "SIGINT"] as const)(
  "%s to npm run quickstart during pulumi up stops every child",
  async (signal) => {
    const dataDir = await mkdtemp(join(tmpdir(), "quickstart-stop-"));
    try {
      const child = spawn("npm", ["run", "quickstart"], {
        cwd: resolve(__dirname, "..", ".."),
        env: { ...process.env, QUICKSTART_DATA_DIR: dataDir },
      });
      let output = "";
      child.stderr.on("data", (chunk) => (output += chunk));
      const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)));
      await new Promise<void>((started) =>
        child.stdout.on("data", (chunk) => {
          output += chunk;
          if (/creating/.test(output)) started();
        }),
      );
      child.kill(signal);
      expect(await exited).not.toBe(0);
      await expect.poll(() => processesWith(dataDir), { timeout: 10_000, interval: 250 }).toEqual([]);
      expect(output).toContain(`${signal}: stopping pulumi`);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  },
  120_000,
);
