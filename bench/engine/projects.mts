// The Pulumi projects the engine benchmark runs (ours and the floor), each operation timed with its requests counted
// from the local server's log and the dynamic provider's peak memory.
import { spawn } from "node:child_process";
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  benchDir,
  largestSize,
  moduleName,
  moduleProvider,
  type Operation,
  organization,
  type Phase,
  type RunningServer,
  repoRoot,
  type StateSize,
  token,
  type Variant,
} from "./settings.mts";

export const peakMemoryDir = await mkdtemp(join(tmpdir(), "bench-peak-memory-"));

export class Project {
  readonly dir: string;
  readonly variant: Variant;
  private readonly env: NodeJS.ProcessEnv;

  private constructor(dir: string, variant: Variant, env: NodeJS.ProcessEnv) {
    this.dir = dir;
    this.variant = variant;
    this.env = env;
  }

  static async create(
    root: string,
    name: string,
    variant: Variant,
    server: RunningServer,
    extraEnv: NodeJS.ProcessEnv = {},
  ): Promise<Project> {
    const dir = join(root, name);
    await mkdir(join(dir, ".state"), { recursive: true });
    await mkdir(join(dir, "policies"));
    await symlink(join(repoRoot, "node_modules"), join(dir, "node_modules"), "dir");
    await copyFile(join(benchDir, "engine-program", "index.js"), join(dir, "index.js"));
    await writeFile(
      join(dir, "Pulumi.yaml"),
      `name: ${name}\nruntime:\n  name: nodejs\n  options:\n    typescript: false\n`,
    );
    const largest = largestSize();
    for (let index = 0; index < largest; index++) {
      await writeFile(join(dir, "policies", `policy-${index}.sentinel`), policyCode(index));
    }
    // Offline as every run of this repository (run-with-toolchain.sh sets the rest); the stack's config below names
    // the server, the organization and the token, and wins over any TFE_* in the environment.
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      PULUMI_BACKEND_URL: `file://${join(dir, ".state")}`,
      PULUMI_CONFIG_PASSPHRASE: "bench",
      PULUMI_HOME: join(dir, ".pulumi-home"),
      BENCH_PEAK_MEMORY_DIR: peakMemoryDir,
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --require ${join(benchDir, "peak-memory.cjs")}`.trim(),
      ...extraEnv,
    };
    const project = new Project(dir, variant, env);
    await project.pulumi(["stack", "init", "bench"]);
    await project.pulumi(["config", "set", "tfe:address", server.url]);
    await project.pulumi(["config", "set", "tfe:organization", organization]);
    await project.pulumi(["config", "set", "--secret", "tfe:token", token]);
    return project;
  }

  declare(policies: number, enforcementLevel: string): Promise<void> {
    const spec = {
      variant: this.variant,
      policies,
      deprecations: Math.floor(policies / 4),
      enforcementLevel,
      moduleName,
      moduleProvider,
    };
    return writeFile(join(this.dir, "spec.json"), JSON.stringify(spec));
  }

  pulumi(args: string[]): Promise<string> {
    return new Promise((resolve, reject) => {
      const child = spawn("pulumi", [...args, "--non-interactive"], { cwd: this.dir, env: this.env });
      let output = "";
      child.stdout.on("data", (chunk) => {
        output += chunk;
      });
      child.stderr.on("data", (chunk) => {
        output += chunk;
      });
      child.on("error", reject);
      child.on("close", (code) =>
        code === 0 ? resolve(output) : reject(new Error(`pulumi ${args.join(" ")} exited ${code}:\n${output}`)),
      );
    });
  }
}

export function policyCode(index: number): string {
  const allowed = ["t3.micro", "t3.small", "m5.large", `c5.${index % 9}xlarge`];
  return [
    `# Benchmark policy ${index}: restricts instance types and requires tags.`,
    'import "tfplan/v2" as tfplan',
    "",
    `allowed_types = ${JSON.stringify(allowed)}`,
    'required_tags = ["owner", "cost-center", "environment"]',
    "",
    "instances = filter tfplan.resource_changes as _, rc {",
    '  rc.type is "aws_instance" and (rc.change.actions contains "create" or rc.change.actions contains "update")',
    "}",
    "",
    "types_allowed = rule { all instances as _, i { i.change.after.instance_type in allowed_types } }",
    "tags_present = rule { all instances as _, i { all required_tags as t { i.change.after.tags contains t } } }",
    "",
    "main = rule { types_allowed and tags_present }",
    "",
  ].join("\n");
}

export const commands: Record<Operation, string[]> = {
  up: ["up", "--yes", "--skip-preview"],
  // --expect-no-changes makes a preview or refresh that finds anything fail, so the no-change claim is checked.
  preview: ["preview", "--expect-no-changes"],
  refresh: ["refresh", "--yes", "--skip-preview", "--expect-no-changes"],
  "drift check": ["refresh", "--yes", "--skip-preview", "--expect-no-changes"],
  update: ["up", "--yes", "--skip-preview"],
  destroy: ["destroy", "--yes", "--skip-preview"],
};

export function levelFor(operation: Operation): string {
  // Raised, not lowered: lowering a level weakens governance, which the provider refuses unless allowed.
  return operation === "update" ? "hard-mandatory" : "soft-mandatory";
}

export async function takePeakMemory(): Promise<number | null> {
  let peak: number | null = null;
  for (const file of await readdir(peakMemoryDir)) {
    const bytes = Number(await readFile(join(peakMemoryDir, file), "utf8"));
    if (Number.isFinite(bytes)) peak = Math.max(peak ?? 0, bytes);
    await rm(join(peakMemoryDir, file));
  }
  return peak;
}

export function requestsByRoute(server: RunningServer): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const entry of server.requestLog.entries()) {
    const key = `${entry.method} ${entry.origin === "download" ? "(download origin)" : (entry.route ?? entry.path)}`;
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

export async function timed(project: Project, server: RunningServer, size: number, operation: Operation) {
  await project.declare(size, levelFor(operation));
  server.requestLog.clear();
  server.resetBusiestSecond();
  await takePeakMemory();
  const started = performance.now();
  await project.pulumi(commands[operation]);
  const ms = performance.now() - started;
  const byRoute = requestsByRoute(server);
  return {
    ms,
    requests: Object.values(byRoute).reduce((sum, count) => sum + count, 0),
    requestsByRoute: byRoute,
    peakProviderRssBytes: await takePeakMemory(),
    rejected: server.requestLog.entries().filter((entry) => entry.status === 429).length,
    phase: changePhase(server),
    busiestSecond: server.busiestSecond(),
  };
}

/** See {@link Phase}: from the server's log, each request from its start (answer less duration) to its answer. */
export function changePhase(server: RunningServer): Phase | null {
  const requests = server.requestLog.entries().map((entry) => {
    const end = Date.parse(entry.at);
    return { start: end - entry.durationMs, end, changes: entry.method !== "GET" };
  });
  const changes = requests.filter((request) => request.changes);
  if (changes.length === 0) return null;
  // The log's times are to the millisecond: a request that started with the first change may read 1 ms earlier.
  const from = Math.min(...changes.map((request) => request.start));
  const within = requests.filter((request) => request.start >= from - 1);
  return { ms: Math.max(...within.map((request) => request.end)) - from, requests: within.length };
}

export async function stateSize(project: Project, size: number): Promise<StateSize> {
  const exported = JSON.parse(await project.pulumi(["stack", "export"])) as {
    deployment: { resources?: { type: string; inputs?: { __provider?: string } }[] };
  };
  const resources = exported.deployment.resources ?? [];
  const average = (suffix: string) => {
    const matching = resources.filter((resource) => resource.type.endsWith(suffix));
    const total = matching.reduce((sum, resource) => sum + Buffer.byteLength(JSON.stringify(resource)), 0);
    return matching.length ? Math.round(total / matching.length) : 0;
  };
  const policy = resources.find((resource) => resource.type.endsWith(":Policy"));
  return {
    size,
    variant: project.variant,
    bytesPerPolicy: average(":Policy"),
    bytesPerDeprecation: average(":ModuleVersionDeprecation"),
    providerBytes: Buffer.byteLength(policy?.inputs?.__provider ?? ""),
  };
}

export function seed(versions: number) {
  return {
    organizations: [{ name: organization, plus: true }],
    tokens: [{ token, organizations: [organization], managePolicies: true, manageModules: true }],
    modules: [
      {
        organization,
        name: moduleName,
        provider: moduleProvider,
        versions: Array.from({ length: versions }, (_, index) => `1.0.${index}`),
      },
    ],
  };
}

export function log(message: string): void {
  process.stderr.write(`[bench:engine] ${message}\n`);
}
