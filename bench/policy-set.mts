// One folder of N Sentinel policies declared two ways under the real Pulumi engine, side by side against one local
// server: N `Policy` resources, and one `PolicySet` that uploads the folder as a version. For each it times `up` from
// empty, a no-change `preview`, an `up` after one file changed, a no-drift `refresh` and `destroy`, counts the
// requests of each from the server's log, and measures the stack's state. Operations alternate between the two, run
// after run. Writes bench/results/policy-set.md. Nothing is asserted.
//
//   npm run bench:policy-set                                   # N = 200, 3 runs
//   BENCH_POLICIES=50 BENCH_RUNS=1 npm run bench:policy-set
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { policyCode } from "./engine/projects.mts";
import { organization, type RunningServer, repoRoot, resultsDir, startServer, token } from "./engine/settings.mts";

const policies = Number(process.env.BENCH_POLICIES ?? 200);
const runs = Number(process.env.BENCH_RUNS ?? 3);
// Floor: the engine's own cost, one no-op dynamic resource, what a PolicySet stack costs at the least.
const variants = ["Policy", "PolicySet", "Floor"] as const;
type Variant = (typeof variants)[number];
const operations = ["up", "preview", "edit one file", "refresh", "destroy"] as const;
type Operation = (typeof operations)[number];

const commands: Record<Operation, string[]> = {
  up: ["up", "--yes", "--skip-preview"],
  preview: ["preview", "--expect-no-changes"],
  "edit one file": ["up", "--yes", "--skip-preview"],
  refresh: ["refresh", "--yes", "--skip-preview", "--expect-no-changes"],
  destroy: ["destroy", "--yes", "--skip-preview"],
};

const programs: Record<Variant, string> = {
  Policy: [
    'const { Policy } = require("pulumi-tfe-governance");',
    `for (let index = 0; index < ${policies}; index++) {`,
    '  new Policy("policy-" + index, { codeFile: "folder/policy-" + index + ".sentinel", enforcementLevel: "soft-mandatory" });',
    "}",
  ].join("\n"),
  PolicySet: [
    'const { PolicySet } = require("pulumi-tfe-governance");',
    'new PolicySet("folder", { directory: "folder" });',
  ].join("\n"),
  Floor: [
    'const pulumi = require("@pulumi/pulumi");',
    "const noop = {",
    '  async create() { return { id: "floor", outs: {} }; },',
    "  async diff() { return { changes: false }; },",
    "  async read(id, props) { return { id, props }; },",
    "  async delete() {},",
    "};",
    'new pulumi.dynamic.Resource(noop, "floor", {});',
  ].join("\n"),
};

class Project {
  readonly variant: Variant;
  readonly dir: string;
  private readonly env: NodeJS.ProcessEnv;

  // Plain fields: Node runs this file by stripping types, which leaves parameter properties out.
  constructor(variant: Variant, dir: string, env: NodeJS.ProcessEnv) {
    this.variant = variant;
    this.dir = dir;
    this.env = env;
  }

  static async create(root: string, variant: Variant, server: RunningServer): Promise<Project> {
    const dir = join(root, variant);
    await mkdir(join(dir, ".state"), { recursive: true });
    await mkdir(join(dir, "folder"));
    await symlink(join(repoRoot, "node_modules"), join(dir, "node_modules"), "dir");
    await writeFile(join(dir, "index.js"), programs[variant]);
    await writeFile(
      join(dir, "Pulumi.yaml"),
      `name: ${variant}\nruntime:\n  name: nodejs\n  options:\n    typescript: false\n`,
    );
    const blocks = [];
    for (let index = 0; index < policies; index++) {
      await writeFile(join(dir, "folder", `policy-${index}.sentinel`), policyCode(index));
      blocks.push(
        `policy "policy-${index}" {\n  source            = "./policy-${index}.sentinel"\n  enforcement_level = "soft-mandatory"\n}\n`,
      );
    }
    await writeFile(join(dir, "folder", "sentinel.hcl"), blocks.join("\n"));
    const env = {
      ...process.env,
      PULUMI_BACKEND_URL: `file://${join(dir, ".state")}`,
      PULUMI_CONFIG_PASSPHRASE: "bench",
      PULUMI_HOME: join(dir, ".pulumi-home"),
    };
    const project = new Project(variant, dir, env);
    await project.pulumi(["stack", "init", "bench"]);
    await project.pulumi(["config", "set", "tfe:address", server.url]);
    await project.pulumi(["config", "set", "tfe:organization", organization]);
    await project.pulumi(["config", "set", "--secret", "tfe:token", token]);
    return project;
  }

  pulumi(args: string[]): Promise<string> {
    return new Promise((resolve, reject) => {
      const child = spawn("pulumi", [...args, "--non-interactive"], { cwd: this.dir, env: this.env });
      let output = "";
      child.stdout.on("data", (chunk) => (output += chunk));
      child.stderr.on("data", (chunk) => (output += chunk));
      child.on("error", reject);
      child.on("close", (code) =>
        code === 0 ? resolve(output) : reject(new Error(`pulumi ${args.join(" ")} exited ${code}:\n${output}`)),
      );
    });
  }
}

interface Sample {
  run: number;
  variant: Variant;
  operation: Operation;
  ms: number;
  requests: number;
  writes: number;
}

async function main(): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), "bench-policy-set-"));
  const server = await startServer({
    data: join(root, "server.sqlite"),
    seed: {
      organizations: [{ name: organization, plus: true }],
      tokens: [{ token, organizations: [organization], managePolicies: true, manageModules: true }],
    },
  });
  const samples: Sample[] = [];
  const stateBytes: Partial<Record<Variant, number>> = {};
  try {
    const projects = {
      Policy: await Project.create(root, "Policy", server),
      PolicySet: await Project.create(root, "PolicySet", server),
      Floor: await Project.create(root, "Floor", server),
    };
    for (let run = 0; run <= runs; run++) {
      const order = run % 2 === 0 ? variants : ([...variants].reverse() as Variant[]);
      for (const operation of operations) {
        for (const variant of order) {
          const project = projects[variant];
          if (operation === "edit one file") {
            await writeFile(join(project.dir, "folder", "policy-7.sentinel"), `${policyCode(7)}# run ${run}\n`);
          }
          server.requestLog.clear();
          const started = performance.now();
          await project.pulumi(commands[operation]);
          const ms = performance.now() - started;
          const entries = server.requestLog.entries();
          // Run 0 warms caches (plugins, modules, files) and is not counted.
          if (run > 0) {
            samples.push({
              run,
              variant,
              operation,
              ms,
              requests: entries.length,
              writes: entries.filter((entry) => entry.method !== "GET").length,
            });
          }
          if (operation === "up" && run === 1) {
            stateBytes[variant] = Buffer.byteLength(await project.pulumi(["stack", "export"]));
          }
          process.stderr.write(
            `[bench:policy-set] run ${run} ${variant} ${operation}: ${(ms / 1000).toFixed(2)} s, ${entries.length} requests\n`,
          );
        }
      }
    }
  } finally {
    await server.close();
    await rm(root, { recursive: true, force: true });
  }
  await writeFile(join(resultsDir, "policy-set.md"), report(samples, stateBytes));
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

function report(samples: Sample[], stateBytes: Partial<Record<Variant, number>>): string {
  const of = (variant: Variant, operation: Operation) =>
    samples.filter((sample) => sample.variant === variant && sample.operation === operation);
  const rows = operations.map((operation) => {
    const [policy, set, floor] = variants.map((variant) => of(variant, operation));
    const [policyMs, setMs, floorMs] = [policy, set, floor].map((list) =>
      median((list ?? []).map((sample) => sample.ms)),
    );
    const count = (list: Sample[] | undefined, key: "requests" | "writes") => median((list ?? []).map((s) => s[key]));
    return (
      `| ${operation} | ${(Number(policyMs) / 1000).toFixed(2)} s | ${(Number(setMs) / 1000).toFixed(2)} s | ` +
      `${(Number(setMs) / Number(policyMs)).toFixed(2)} | ${(Number(floorMs) / 1000).toFixed(2)} s | ` +
      `${(Number(setMs) / Number(floorMs)).toFixed(2)} | ${count(policy, "requests")} (${count(policy, "writes")}) | ` +
      `${count(set, "requests")} (${count(set, "writes")}) |`
    );
  });
  return [
    `# ${policies} Sentinel policies: ${policies} \`Policy\` resources next to one \`PolicySet\``,
    "",
    `Written by \`bench/policy-set.mts\` on ${new Date().toISOString().slice(0, 10)}: median of ${runs} runs on this machine,`,
    "the three interleaved operation by operation against one local server (the built `dist/`), under the real engine.",
    "Floor is the engine's own cost: one no-op dynamic resource. Requests are all the server answered, writes in",
    "brackets.",
    "",
    "| operation | Policy × N | PolicySet | PolicySet / Policy × N | floor | PolicySet / floor | requests, Policy × N | requests, PolicySet |",
    "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ...rows,
    "",
    `State after \`up\`: ${stateBytes.Policy ?? "?"} bytes with ${policies} \`Policy\` resources, ${stateBytes.PolicySet ?? "?"} bytes with one \`PolicySet\`.`,
    "",
  ].join("\n");
}

await main();
