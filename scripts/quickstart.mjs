// Drives the quickstart: local server in this process, the real `pulumi` CLI as a child process, on the quickstart
// program (Pulumi.yaml) and then the policy-folder program (examples/policy-folders/Pulumi.yaml).
import { spawn } from "node:child_process";
import { mkdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { TfeClient } from "pulumi-tfe-governance/client";
import { startServer } from "pulumi-tfe-governance/server";

const root = resolve(import.meta.dirname, "..");
// The server's data and the stack's state; CI points this elsewhere to run the quickstart from scratch.
const dataDir = resolve(process.env.QUICKSTART_DATA_DIR ?? join(root, ".tfe"));
mkdirSync(join(dataDir, "pulumi-state"), { recursive: true });
const seed = JSON.parse(readFileSync(join(root, "examples", "quickstart", "seed.json"), "utf8"));
const token = seed.tokens[0].token;
const stack = "quickstart";

const server = await startServer({ port: 0, data: join(dataDir, "quickstart.sqlite"), seed });
console.log(`Local HCP Terraform API: ${server.url}\n`);

const env = {
  ...process.env,
  PULUMI_BACKEND_URL: `file://${join(dataDir, "pulumi-state")}`,
  PULUMI_CONFIG_PASSPHRASE: process.env.PULUMI_CONFIG_PASSPHRASE ?? "quickstart",
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

function pulumi(args, { quiet = false, cwd = root } = {}) {
  if (stopSignal) return Promise.reject(new Error(`stopped by ${stopSignal}`));
  return new Promise((resolveRun, reject) => {
    const child = spawn("pulumi", [...args, "--non-interactive"], {
      cwd,
      env,
      detached: true,
      stdio: ["ignore", quiet ? "pipe" : "inherit", quiet ? "pipe" : "inherit"],
    });
    running.add(child);
    child.on("exit", () => running.delete(child));
    let output = "";
    child.stdout?.on("data", (chunk) => (output += chunk));
    child.stderr?.on("data", (chunk) => (output += chunk));
    child.on("error", reject);
    child.on("exit", (code) =>
      code === 0 ? resolveRun(output) : reject(new Error(`pulumi ${args.join(" ")} exited ${code}\n${output}`)),
    );
  });
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
    `The local server's data is in ${data}, the state of both programs' stack "${stack}" in ${shown(state)}.`,
    "Run the quickstart again: nothing changes. To preview, check for drift, fix it and destroy, in this directory:",
    "",
    ...[
      'eval "$(npm run -s env)"',
      `node dist/server/cli.js --data ${quoted(data)} --seed quickstart --port 8080 --quiet &`,
      // A passphrase of the user's own, from the environment, stays there rather than on the screen.
      `export PULUMI_BACKEND_URL=${quoted(`file://${state}`)}${process.env.PULUMI_CONFIG_PASSPHRASE ? "" : " PULUMI_CONFIG_PASSPHRASE=quickstart"}`,
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
  if (!stopSignal) throw error;
  process.exitCode = stopSignal === "SIGINT" ? 130 : 143;
} finally {
  await server.close();
}
