import { execFile, execFileSync } from "node:child_process";
import { chmodSync, cpSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { docBlocks, run as runCommand } from "../e2e/doc-recipes";
import { compiledCli } from "../server/cli-process";
import { temporaryDirectory } from "../temporary-directory";
import { GitRepository, thirdGenerationLibrary } from "../vcs-repository";

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

describe("help", () => {
  // Issue 52 item 12: the command's help is the list of commands (it printed every command's whole help, ~100
  // lines); each command answers --help with its own, on this Node and an older one.
  it("tfe-governance --help lists the commands, each with the --help that shows its options", async () => {
    const help = await command(governanceCli, ["--help"]);
    expect(help.code).toBe(0);
    const commands = ["import", "pending-creates", "check-folder", "impact"];
    for (const name of commands) expect(help.stdout).toContain(`tfe-governance ${name} --help`);
    expect(help.stdout.split("\n").length).toBeLessThan(25);
    for (const name of commands) {
      for (const nodeArgs of [[], ["--require", olderNode]]) {
        const own = await command(governanceCli, [name, "--help"], nodeArgs);
        expect(own.code, `${name} --help ${nodeArgs.join(" ")}`).toBe(0);
        expect(own.stdout).toMatch(new RegExp(`^Usage: tfe-governance ${name} `));
        // As git and npm take it: `help <command>` is that command's own help (review of issue 52).
        const asked = await command(governanceCli, ["help", name], nodeArgs);
        expect([asked.code, asked.stdout], `help ${name} ${nodeArgs.join(" ")}`).toEqual([0, own.stdout]);
      }
    }
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

describe("tfe-governance check-folder, for a policy library's CI before a push reaches its sets", () => {
  const examples = join(__dirname, "..", "..", "examples", "quickstart", "policy-sets");
  const copy = (example: string) => {
    const directory = temporaryDirectory(`check-folder-${example}-`);
    cpSync(join(examples, example), directory, { recursive: true });
    return directory;
  };

  it("passes a folder that weakens nothing, and names each weakening of one that does, exiting 1", async () => {
    const base = copy("sentinel-baseline");
    const same = await command(governanceCli, ["check-folder", base, "--against", join(examples, "sentinel-baseline")]);
    expect(same).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(/enforces at least what .* does: 2 policies/),
    });
    const head = copy("sentinel-baseline");
    const config = join(head, "sentinel.hcl");
    writeFileSync(config, readFileSync(config, "utf8").replace('"hard-mandatory"', '"advisory"'));
    const weaker = await command(governanceCli, ["check-folder", head, "--against", base]);
    expect(weaker.code).toBe(1);
    expect(weaker.stdout).toBe('weakens: policy "approved-regions" goes from hard-mandatory to advisory\n');
    expect(weaker.stderr).toMatch(/--allow-weakening/);
    expect(weaker.stderr).not.toMatch(noStackTrace);
    expect((await command(governanceCli, ["check-folder", head, "--against", base, "--allow-weakening"])).code).toBe(0);
  });

  it("compares Terraform policy levels with the set's parameters, and says what it cannot read", async () => {
    const base = join(examples, "terraform-policy");
    const lowered = await command(governanceCli, [
      "check-folder",
      base,
      "--against",
      base,
      "--parameter",
      "require_tags_level=advisory",
    ]);
    expect(lowered.code).toBe(0); // Both sides read with the same parameter.
    const broken = temporaryDirectory("check-folder-broken-");
    writeFileSync(join(broken, "sentinel.hcl"), 'policy "x" {\n  source = \n');
    const unreadable = await command(governanceCli, ["check-folder", broken, "--against", base]);
    expect(unreadable.code).toBe(2);
    expect(unreadable.stderr).toMatch(/cannot be read: sentinel\.hcl/);
    expect(unreadable.stderr).not.toMatch(noStackTrace);
  });
});

describe('docs/reviewing-governance-changes.md, "A set read from version control": the library\'s own CI check', () => {
  it("runs as written in a clone of a policy library, refusing a lowered level before it merges", async () => {
    const [recipe] = docBlocks("docs/reviewing-governance-changes.md", "## A set read from version control", "sh");
    const origin = GitRepository.create(thirdGenerationLibrary);
    const clone = temporaryDirectory("library-clone-");
    try {
      execFileSync("git", ["clone", "--quiet", origin.path, join(clone, "library")]);
      const library = join(clone, "library");
      // The library's CI has the package installed, as its package.json would have it: the package and its command.
      const repoRoot = join(__dirname, "..", "..");
      mkdirSync(join(library, "node_modules", ".bin"), { recursive: true });
      symlinkSync(repoRoot, join(library, "node_modules", "pulumi-tfe-governance"), "dir");
      symlinkSync(governanceCli, join(library, "node_modules", ".bin", "tfe-governance"));
      chmodSync(governanceCli, 0o755); // As npm makes a package's commands when it installs them.
      const config = join(library, "policies", "aws", "sentinel.hcl");
      writeFileSync(config, readFileSync(config, "utf8").replace('"hard-mandatory"', '"advisory"'));
      const refused = await runCommand("bash", ["-c", `set -e\n${recipe}`], library, process.env);
      expect(refused.code, refused.output).toBe(1);
      expect(refused.output).toContain('weakens: policy "restrict-ec2" goes from hard-mandatory to advisory');
    } finally {
      origin.remove();
    }
  }, 120_000);
});
