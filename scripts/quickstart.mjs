// Drives the quickstart: local server in this process, the real `pulumi` CLI as a child process, on the quickstart
// program (Pulumi.yaml), the policy-folder program (examples/policy-folders/Pulumi.yaml), and the YAML program
// (examples/yaml/Pulumi.yaml) through the plugin for other languages.
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { TfeClient } from "pulumi-tfe-governance/client";
import { startServer } from "pulumi-tfe-governance/server";
import { hostPlatform } from "./plugin-platforms.mjs";

const root = resolve(import.meta.dirname, "..");
// The server's data and the stack's state; CI points this elsewhere to run the quickstart from scratch.
const dataDir = resolve(process.env.QUICKSTART_DATA_DIR ?? join(root, ".tfe"));
mkdirSync(join(dataDir, "pulumi-state"), { recursive: true });
const seedFile = join(root, "examples", "quickstart", "seed.json");
const seed = JSON.parse(readFileSync(seedFile, "utf8"));
const token = seed.tokens[0].token;
const stack = "quickstart";

// The seed goes to the server as its file, not as the object read above: a seed file names its repositories'
// folders (`from`) relative to itself, an object relative to the working directory, which is the repository's root.
const server = await startServer({ port: 0, data: join(dataDir, "quickstart.sqlite"), seed: seedFile });
console.log(`Local HCP Terraform API: ${server.url}\n`);

// The quickstart's stacks have a passphrase of their own, whatever the caller's environment says: they hold no
// secret (the token comes from TFE_TOKEN), and a passphrase exported for other work would not open them.
const passphrase = "quickstart";
const { PULUMI_CONFIG_PASSPHRASE_FILE: _passphraseFile, ...callerEnv } = process.env;
// Nor does it take the caller's settings of the provider (TFE_*): it documents none, and one exported for other work
// (TFE_REQUIRE_NO_BLOCKED_RUNS=true, a TFE_ORGANIZATION) would change what its programs do against its own server.
const env = {
  ...Object.fromEntries(Object.entries(callerEnv).filter(([name]) => !name.startsWith("TFE_"))),
  PULUMI_BACKEND_URL: `file://${join(dataDir, "pulumi-state")}`,
  PULUMI_CONFIG_PASSPHRASE: passphrase,
  PULUMI_SKIP_UPDATE_CHECK: "true",
  PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
  TFE_ADDRESS: server.url,
  TFE_TOKEN: token,
};

// pulumi runs in a process group of its own, so that a stop reaches it once, from here: a terminal's Ctrl-C
// reaches this process twice (from the terminal and from npm), and a second SIGINT makes pulumi quit at once
// instead of finishing the step in flight. A signal more than two seconds after the first stops it outright.
const running = new Set();
let stopSignal;
let stopAt = 0;
function signalPulumi(signal) {
  for (const child of running) {
    try {
      process.kill(-child.pid, signal);
    } catch {} // exited meanwhile
  }
}
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    if (stopSignal === undefined) {
      stopSignal = signal;
      stopAt = Date.now();
      console.error(`\n${signal}: stopping pulumi (it finishes the step in flight), then the local server`);
      signalPulumi("SIGINT");
    } else if (Date.now() - stopAt > 2000) {
      signalPulumi("SIGKILL");
    }
  });
}

/** A `pulumi` command that failed: what it printed is on the screen already (or in `output`, for a quiet one). */
class PulumiFailed extends Error {
  constructor(args, code, output, quiet) {
    super(`pulumi ${args.join(" ")} exited ${code}`);
    this.output = output;
    this.quiet = quiet;
  }
}

function pulumi(args, { quiet = false, cwd = root, extraEnv = {} } = {}) {
  if (stopSignal) return Promise.reject(new Error(`stopped by ${stopSignal}`));
  return new Promise((resolveRun, reject) => {
    // Its stderr is kept as well as shown: the reason of a failure is read from it.
    const child = spawn("pulumi", [...args, "--non-interactive"], {
      cwd,
      env: { ...env, ...extraEnv },
      detached: true,
      stdio: ["ignore", quiet ? "pipe" : "inherit", "pipe"],
    });
    running.add(child);
    child.on("exit", () => running.delete(child));
    let output = "";
    child.stdout?.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => {
      output += chunk;
      if (!quiet) process.stderr.write(chunk);
    });
    child.on("error", reject);
    child.on("close", (code) =>
      code === 0 ? resolveRun(output) : reject(new PulumiFailed(args, code, output, quiet)),
    );
  });
}

/**
 * The stack settings files of the quickstart's stacks, each holding its passphrase's salt: made by its first run,
 * git-ignored and tracked by none, so that removing them (failureLine's advice) touches nothing of the repository.
 */
const stackFiles = [
  "Pulumi.quickstart.yaml",
  "examples/policy-folders/Pulumi.quickstart.yaml",
  "examples/yaml/Pulumi.quickstart.yaml",
];

/** One line for a failed `pulumi` run, the reason and what to do where it is known; pulumi said the rest above it. */
function failureLine(error) {
  if (/incorrect passphrase/.test(error.output)) {
    const shown = (path) => (path.startsWith(`${root}/`) ? relative(root, path) : path);
    const made = [shown(dataDir), ...stackFiles.filter((file) => existsSync(join(root, file)))];
    return (
      `quickstart: its stacks were made by an earlier run with another passphrase (a PULUMI_CONFIG_PASSPHRASE of ` +
      `that shell); the quickstart now always uses its own ("${passphrase}"). To start them afresh: rm -rf ${made.map(quoted).join(" ")}`
    );
  }
  return `quickstart: ${error.message} (its output above says why)`;
}

/**
 * The plugin `pulumi-resource-tfegov`, installed as a user installs it (`pulumi plugin install ... -f <tarball>`) into
 * a Pulumi home of the quickstart's own, from the tarball `npm run package`'s script makes of this build. Made again
 * only when the build changed since, so a second quickstart installs nothing.
 */
async function installPlugin() {
  const artifacts = join(dataDir, "artifacts");
  const version = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).version;
  const build = readdirSync(join(root, "dist"), { recursive: true })
    .map((file) => {
      const stat = statSync(join(root, "dist", file));
      return `${file}:${stat.size}:${stat.mtimeMs}`;
    })
    .join("\n");
  const stamp = join(artifacts, "build.txt");
  const home = join(dataDir, "pulumi-home");
  if (!existsSync(stamp) || readFileSync(stamp, "utf8") !== build || !existsSync(join(home, "plugins"))) {
    const platform = hostPlatform();
    execFileSync(process.execPath, [join(root, "scripts", "package-plugin.mjs"), artifacts, "--platforms", platform], {
      stdio: "ignore",
    });
    const tarball = join(artifacts, `pulumi-resource-tfegov-v${version}-${platform}.tar.gz`);
    await pulumi(["plugin", "install", "resource", "tfegov", version, "-f", tarball, "--reinstall"], {
      quiet: true,
      extraEnv: { PULUMI_HOME: home },
    });
    writeFileSync(stamp, build);
  }
  return home;
}

function quoted(text) {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`;
}

/** Where everything is, and the commands to go on with the stack: run as printed by test/e2e/quickstart.test.ts. */
function closingLines() {
  const shown = (path) => (path.startsWith(`${root}/`) ? relative(root, path) : path);
  const data = shown(join(dataDir, "quickstart.sqlite"));
  const state = join(dataDir, "pulumi-state");
  return [
    "",
    `The local server's data is in ${data}, the state of the programs' stack "${stack}" in ${shown(state)}.`,
    "Run the quickstart again: nothing changes. To preview, check for drift, fix it and destroy, in this directory:",
    "",
    ...[
      'eval "$(npm run -s env)"',
      `node dist/server/cli.js --data ${quoted(data)} --seed quickstart --port 8080 --quiet &`,
      `export PULUMI_BACKEND_URL=${quoted(`file://${state}`)} PULUMI_CONFIG_PASSPHRASE=${passphrase}`,
      `export TFE_ADDRESS=http://127.0.0.1:8080 TFE_TOKEN=${token}`,
      `pulumi stack select ${stack}`,
      "pulumi preview",
      "pulumi preview --refresh --expect-no-changes",
      "pulumi up --refresh",
      "pulumi destroy",
      "kill $!",
    ].map((line) => `    ${line}`),
    "",
    "The drift check (the second preview) fails when the service was changed outside Pulumi; `up --refresh` puts",
    "the program's values back; `destroy` deletes what the program made (examples/policy-folders has its own).",
    `examples/yaml runs through the plugin installed in ${shown(join(dataDir, "pulumi-home"))}: with PULUMI_HOME set to`,
    'it, the same commands work there (pulumi -C examples/yaml preview). Other languages: README.md, "From Python,',
    'YAML, Go or C#".',
    'Against HCP Terraform: README.md, "Use it in your project".',
  ].join("\n");
}

try {
  await pulumi(["stack", "select", "--create", stack], { quiet: true });
  // The seed's policy set, which only this local server has: the program holds no default, so that pointed at a
  // real organization it sends none unless told (docs/configuration.md, "Pointing the quickstart at HCP Terraform").
  await pulumi(["config", "set", "--stack", stack, "quickstart:baselinePolicySetId", seed.policySets[0].id], {
    quiet: true,
  });
  await pulumi(["config", "set", "--stack", stack, "quickstart:workspaceId", seed.workspaces[0].id], { quiet: true });
  // Arguments after `npm run quickstart --` go to `pulumi up` (e.g. `--diff`, or `-v=9 --logflow --logtostderr`).
  await pulumi(["up", "--yes", "--stack", stack, ...process.argv.slice(2)]);

  console.log("\nThe policy-folder program, examples/policy-folders (a PolicyFolder per policy-set folder):\n");
  const policyFolders = join(root, "examples", "policy-folders");
  await pulumi(["stack", "select", "--create", stack], { quiet: true, cwd: policyFolders });
  await pulumi(["up", "--yes", "--stack", stack, ...process.argv.slice(2)], { cwd: policyFolders });

  console.log("\nThe YAML program, examples/yaml (the same resources through the tfegov plugin):\n");
  const yaml = { cwd: join(root, "examples", "yaml"), extraEnv: { PULUMI_HOME: await installPlugin() } };
  await pulumi(["stack", "select", "--create", stack], { ...yaml, quiet: true });
  await pulumi(["up", "--yes", "--stack", stack, ...process.argv.slice(2)], yaml);

  const client = new TfeClient({ address: server.url, token, rateLimit: false });
  console.log("\nWhat the local server now holds for organization acme:");
  for await (const policy of client.policies.listAll("acme")) {
    const code = await client.policies.download(policy.id);
    console.log(
      `  policy ${policy.name.padEnd(26)} ${policy.kind.padEnd(8)} ${String(policy.enforcementLevel).padEnd(15)} ` +
        `${code.byteLength} bytes of code, in ${policy.policySetCount} policy set(s)  [${policy.id}]`,
    );
  }
  for await (const set of client.policySets.listAll("acme", { versioned: true })) {
    const version = set.currentVersionId ? await client.policySets.readVersion(set.currentVersionId) : undefined;
    console.log(
      `  policy set ${set.name.padEnd(22)} ${set.kind.padEnd(8)} version ${version?.status ?? "none"}, ` +
        `on ${set.workspaceIds.length} workspace(s)  [${set.id}]`,
    );
  }
  for (const version of await client.registry.listModuleVersions({ namespace: "acme", name: "vpc", provider: "aws" })) {
    const state = version.deprecation ? `deprecated: ${version.deprecation.reason}` : "active";
    console.log(`  module acme/vpc/aws ${version.version.padEnd(8)} ${state}`);
  }
  await client.close();
  console.log(closingLines());
} catch (error) {
  if (stopSignal) {
    process.exitCode = stopSignal === "SIGINT" ? 130 : 143;
  } else if (error instanceof PulumiFailed) {
    if (error.quiet) process.stderr.write(error.output);
    console.error(failureLine(error));
    process.exitCode = 1;
  } else {
    throw error;
  }
} finally {
  await server.close();
}
