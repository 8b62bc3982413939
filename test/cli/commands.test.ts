import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { compiledCli } from "../server/cli-process";
import { temporaryDirectory } from "../temporary-directory";

// The two commands as a person meets them on a bad day: an older Node.js, an option that does not exist, a bad
// --faults value, no token. Each answer is one line that says what to do: no stack trace, and --help still works.

const run = promisify(execFile);
const serverCli = compiledCli();
const governanceCli = join(serverCli, "..", "..", "cli", "tfe-governance.js");
const olderNode = join(temporaryDirectory("older-node-"), "older-node.cjs");
writeFileSync(
  olderNode,
  'Object.defineProperty(process, "versions", { value: { ...process.versions, node: "20.20.2" } });\n' +
    'Object.defineProperty(process, "version", { value: "v20.20.2" });\n',
);

async function command(cli: string, args: string[], nodeArgs: string[] = [], env: NodeJS.ProcessEnv = process.env) {
  return run(process.execPath, [...nodeArgs, cli, ...args], { env }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => error,
  );
}

const noStackTrace = /\n\s+at |node:internal|\.ts:\d+/;

describe("on a Node.js older than 22.19", () => {
  it.each([
    ["tfe-governance", governanceCli, ["import", "--organization", "acme", "--out", "x"]],
    ["tfe-governance-server", serverCli, ["--port", "0"]],
  ])("%s says in one line what it needs, and --help still answers", async (name, cli, args) => {
    const refused = await command(cli, args, ["--require", olderNode]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(
      `${name} needs Node.js 22.19.0 or newer; this is Node.js v20.20.2. Install Node.js 24 LTS (or 22.19+) and run it again.\n`,
    );
    const help = await command(cli, ["--help"], ["--require", olderNode]);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(new RegExp(`^Usage: ${name} `));
    expect(`${help.stdout}${help.stderr}`).not.toMatch(noStackTrace);
  });
});

describe("mistakes name the fix", () => {
  it("an unknown server option points to --help; a bad --faults names the flag", async () => {
    const unknown = await command(serverCli, ["--prot", "8080"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toBe("tfe-governance-server: Unknown option '--prot'; see tfe-governance-server --help\n");
    const faults = await command(serverCli, ["--faults", '[{"status":418}]']);
    expect(faults.stderr).toMatch(
      /^tfe-governance-server: --faults "\[\{\\"status\\":418\}\]": .*see tfe-governance-server --help\n$/,
    );
    const missing = await command(serverCli, ["--faults", "no-such-file.json"]);
    expect(missing.stderr).toMatch(/^tfe-governance-server: --faults "no-such-file\.json": ENOENT/);
    for (const answer of [unknown, faults, missing]) expect(answer.stderr).not.toMatch(noStackTrace);
  });

  it("import without a token lists the ways this command takes one, not a program's", async () => {
    const home = temporaryDirectory("no-token-", "test");
    const env = { PATH: process.env.PATH, HOME: home, TFE_ADDRESS: "http://127.0.0.1:9" };
    const refused = await command(
      governanceCli,
      ["import", "--organization", "acme", "--out", join(home, "out")],
      [],
      env,
    );
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/no API token for 127\.0\.0\.1:9\. Set one of: the TFE_TOKEN environment variable/);
    expect(refused.stderr).toContain(
      `"terraform login 127.0.0.1:9", which writes ${join(home, ".terraform.d", "credentials.tfrc.json")}`,
    );
    expect(refused.stderr).not.toMatch(/token option|pulumi config/);
  });
});
