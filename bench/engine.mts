// The provider's cost under the real Pulumi engine, next to the engine's floor: the same program with the same
// number of dynamic resources under a provider that makes no request (bench/engine-program/index.js). For each N
// (policies, with code from files, plus N/4 module version deprecations) it times `up` from empty, a no-change
// `preview`, the first no-drift `refresh` after that up (it reads back the code just uploaded), the scheduled drift
// check (the same refresh again: nothing to download), an `up` that changes every enforcement level and `destroy`,
// ours and the floor interleaved operation by operation, several runs; counts requests from the local server's
// request log; measures state bytes per resource and the peak memory of the dynamic provider's process; times `up`,
// both refreshes and `destroy` against a server that enforces 30 requests per second; and repeats up/destroy rounds
// on one server to show whether time grows. Writes bench/results/engine.{json,md,svg} and the README's performance table. Nothing is asserted.
//
//   npm run bench:engine                      # N = 50, 100, 200, 400; 3 runs (about half an hour)
//   BENCH_QUICK=1 npm run bench:engine        # N = 50, 100; 1 run; rounds at N = 50
//   BENCH_SIZES=200 BENCH_RUNS=3 npm run bench:engine
//
// `.mts` because the package is CommonJS and Node runs a `.ts` file with import syntax only as ESM.
import { spawn } from "node:child_process";
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

// The built server is measured, as users run it; typed from the source so typechecking needs no build.
const distServer = "../dist/server/index.js";
const { startServer } = (await import(distServer)) as typeof import("../src/server/index.js");
type RunningServer = Awaited<ReturnType<typeof startServer>>;

const benchDir = dirname(fileURLToPath(import.meta.url));
const repoRoot = join(benchDir, "..");
const resultsDir = join(benchDir, "results");

const quick = process.env.BENCH_QUICK === "1";
const sizes = numbersFromEnv("BENCH_SIZES") ?? (quick ? [50, 100] : [50, 100, 200, 400]);
const runs = Number(process.env.BENCH_RUNS ?? (quick ? 1 : 3));
const roundsSize = Number(process.env.BENCH_ROUNDS_SIZE ?? (quick ? 50 : 200));
const rounds = 3;
const warmUpSize = 10;
const serviceLimit = 30;
const organization = "bench";
const token = "bench-token.atlasv1.0123456789abcdef";
const moduleName = "bench";
const moduleProvider = "aws";
const operations = ["up", "preview", "refresh", "drift check", "update", "destroy"] as const;
type Operation = (typeof operations)[number];
type Variant = "ours" | "floor";
const goals: Partial<Record<Operation, number>> = { up: 1.15, preview: 1.15, "drift check": 1.0, destroy: 1.1 };
/** What runs against the server that enforces the service's rate limit, in this order. */
const limitedOperations = ["up", "refresh", "drift check", "destroy"] as const;
type LimitedOperation = (typeof limitedOperations)[number];

/** The most policies any run declares, the warm-up's included: files and module versions are made for that many. */
function largestSize(): number {
  return Math.max(...sizes, roundsSize, warmUpSize);
}

function numbersFromEnv(name: string): number[] | undefined {
  const value = process.env[name];
  return value ? value.split(",").map(Number) : undefined;
}

interface Sample {
  size: number;
  run: number;
  operation: Operation;
  variant: Variant;
  ms: number;
  requests: number;
  requestsByRoute: Record<string, number>;
  peakProviderRssBytes: number | null;
}

interface LimitedSample {
  size: number;
  run: number;
  operation: LimitedOperation;
  ms: number;
  requests: number;
  rejected: number;
}

/** `up` and `destroy` with the engine's per-step checkpoint turned off (`PULUMI_SKIP_CHECKPOINTS=true`). */
interface UncheckedSample {
  size: number;
  run: number;
  operation: "up" | "destroy";
  variant: Variant;
  ms: number;
}

interface StateSize {
  size: number;
  variant: Variant;
  /** Compact JSON of one resource in `pulumi stack export`, averaged by type. */
  bytesPerPolicy: number;
  bytesPerDeprecation: number;
  /** The serialized provider (`__provider`), once. */
  providerBytes: number;
}

// ---------------------------------------------------------------------------------------------------------------
// Pulumi projects
// ---------------------------------------------------------------------------------------------------------------

const peakMemoryDir = await mkdtemp(join(tmpdir(), "bench-peak-memory-"));

class Project {
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

function policyCode(index: number): string {
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

const commands: Record<Operation, string[]> = {
  up: ["up", "--yes", "--skip-preview"],
  // --expect-no-changes makes a preview or refresh that finds anything fail, so the no-change claim is checked.
  preview: ["preview", "--expect-no-changes"],
  refresh: ["refresh", "--yes", "--skip-preview", "--expect-no-changes"],
  "drift check": ["refresh", "--yes", "--skip-preview", "--expect-no-changes"],
  update: ["up", "--yes", "--skip-preview"],
  destroy: ["destroy", "--yes", "--skip-preview"],
};

function levelFor(operation: Operation): string {
  // Raised, not lowered: lowering a level weakens governance, which the provider refuses unless allowed.
  return operation === "update" ? "hard-mandatory" : "soft-mandatory";
}

async function takePeakMemory(): Promise<number | null> {
  let peak: number | null = null;
  for (const file of await readdir(peakMemoryDir)) {
    const bytes = Number(await readFile(join(peakMemoryDir, file), "utf8"));
    if (Number.isFinite(bytes)) peak = Math.max(peak ?? 0, bytes);
    await rm(join(peakMemoryDir, file));
  }
  return peak;
}

function requestsByRoute(server: RunningServer): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const entry of server.requestLog.entries()) {
    const key = `${entry.method} ${entry.origin === "download" ? "(download origin)" : (entry.route ?? entry.path)}`;
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

async function timed(project: Project, server: RunningServer, size: number, operation: Operation) {
  await project.declare(size, levelFor(operation));
  server.requestLog.clear();
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
  };
}

async function stateSize(project: Project, size: number): Promise<StateSize> {
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

function seed(versions: number) {
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

function log(message: string): void {
  process.stderr.write(`[bench:engine] ${message}\n`);
}

// ---------------------------------------------------------------------------------------------------------------
// The runs
// ---------------------------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), "bench-engine-"));
  const versions = Math.floor(largestSize() / 4);
  const servers: RunningServer[] = [];
  const start = async (name: string, rateLimit?: number) => {
    const server = await startServer({ data: join(root, `${name}.sqlite`), seed: seed(versions), rateLimit });
    servers.push(server);
    return server;
  };
  try {
    const server = await start("main");
    const limitedServer = await start("limited", serviceLimit);
    const projects: Record<Variant, Project> = {
      ours: await Project.create(root, "ours", "ours", server),
      floor: await Project.create(root, "floor", "floor", server),
    };
    const limited = await Project.create(root, "limited", "ours", limitedServer);
    // The engine writes the whole state at every step (file backend), which makes a large `up` grow faster than N.
    // The same programs with that checkpoint skipped show how much of each time it is, and whether what is left
    // (the provider and the rest of the engine) grows with N.
    const skipCheckpoints = { PULUMI_SKIP_CHECKPOINTS: "true" };
    const unchecked: Record<Variant, Project> = {
      ours: await Project.create(root, "ours-unchecked", "ours", server, skipCheckpoints),
      floor: await Project.create(root, "floor-unchecked", "floor", server, skipCheckpoints),
    };

    // The first Pulumi run of a project pays for cold caches (plugins, modules, files): not measured.
    for (const [project, target] of [
      [projects.ours, server],
      [projects.floor, server],
      [limited, limitedServer],
      [unchecked.ours, server],
      [unchecked.floor, server],
    ] as const) {
      await timed(project, target, warmUpSize, "up");
      await timed(project, target, warmUpSize, "destroy");
    }

    const samples: Sample[] = [];
    const limitedSamples: LimitedSample[] = [];
    const uncheckedSamples: UncheckedSample[] = [];
    const stateSizes: StateSize[] = [];
    for (let run = 1; run <= runs; run++) {
      // N = 0: what every operation costs with nothing declared, the part of each time that is not per policy.
      for (const size of [0, ...sizes]) {
        // Which side goes first alternates, so a drift of the machine's load between the two does not favour one.
        const order: Variant[] = (run + size) % 2 === 0 ? ["ours", "floor"] : ["floor", "ours"];
        for (const operation of operations) {
          for (const variant of order) {
            const result = await timed(projects[variant], server, size, operation);
            samples.push({ size, run, operation, variant, ...result });
            log(
              `run ${run} N=${size} ${operation} ${variant}: ${(result.ms / 1000).toFixed(2)} s, ${result.requests} requests`,
            );
            if (operation === "up" && run === 1 && size > 0) stateSizes.push(await stateSize(projects[variant], size));
          }
        }
        if (size === 0) continue;
        for (const operation of ["up", "destroy"] as const) {
          for (const variant of order) {
            const result = await timed(unchecked[variant], server, size, operation);
            uncheckedSamples.push({ size, run, operation, variant, ms: result.ms });
            log(
              `run ${run} N=${size} ${operation} ${variant}, checkpoints skipped: ${(result.ms / 1000).toFixed(2)} s`,
            );
          }
        }
        for (const operation of limitedOperations) {
          const result = await timed(limited, limitedServer, size, operation);
          limitedSamples.push({ size, run, operation, ...result });
          log(
            `run ${run} N=${size} ${operation} at ${serviceLimit}/s: ${(result.ms / 1000).toFixed(2)} s, ${result.rejected} answered 429`,
          );
        }
      }
    }

    // Successive rounds on one new server and stack: time must not grow with what earlier rounds left behind.
    const roundsServer = await start("rounds");
    const roundsProject = await Project.create(root, "rounds", "ours", roundsServer);
    const roundTimes: { round: number; upMs: number; destroyMs: number }[] = [];
    for (let round = 1; round <= rounds; round++) {
      const up = await timed(roundsProject, roundsServer, roundsSize, "up");
      const destroy = await timed(roundsProject, roundsServer, roundsSize, "destroy");
      roundTimes.push({ round, upMs: up.ms, destroyMs: destroy.ms });
      log(
        `round ${round} N=${roundsSize}: up ${(up.ms / 1000).toFixed(2)} s, destroy ${(destroy.ms / 1000).toFixed(2)} s`,
      );
    }

    await writeResults({ samples, limitedSamples, uncheckedSamples, stateSizes, roundTimes });
  } finally {
    await Promise.allSettled(servers.map((server) => server.close()));
    await rm(root, { recursive: true, force: true });
    await rm(peakMemoryDir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Results
// ---------------------------------------------------------------------------------------------------------------

interface Spread {
  median: number;
  min: number;
  max: number;
}

function spread(values: number[]): Spread {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
  return { median, min: sorted[0]!, max: sorted[sorted.length - 1]! };
}

/** The least-squares line through the points, and the largest distance of a point from it relative to the point. */
function straightLine(points: { size: number; ms: number }[]): {
  fixedMs: number;
  perPolicyMs: number;
  largestStray: number;
} {
  const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
  const meanSize = mean(points.map((point) => point.size));
  const meanMs = mean(points.map((point) => point.ms));
  const covariance = points.reduce((sum, point) => sum + (point.size - meanSize) * (point.ms - meanMs), 0);
  const variance = points.reduce((sum, point) => sum + (point.size - meanSize) ** 2, 0);
  const perPolicyMs = covariance / variance;
  const fixedMs = meanMs - perPolicyMs * meanSize;
  const largestStray = Math.max(
    ...points.map((point) => Math.abs(point.ms - (fixedMs + perPolicyMs * point.size)) / point.ms),
  );
  return { fixedMs, perPolicyMs, largestStray };
}

const seconds = (ms: number) => (ms / 1000).toFixed(2);
const describeSpread = (value: Spread) => `${seconds(value.median)} (${seconds(value.min)}–${seconds(value.max)})`;
const kilobytes = (bytes: number) => `${(bytes / 1024).toFixed(2)} KB`;

function environment(): string {
  return `Node ${process.versions.node}, ${process.platform}/${process.arch}; ${runs} run(s) per N, interleaved`;
}

async function writeResults(results: {
  samples: Sample[];
  limitedSamples: LimitedSample[];
  uncheckedSamples: UncheckedSample[];
  stateSizes: StateSize[];
  roundTimes: { round: number; upMs: number; destroyMs: number }[];
}): Promise<void> {
  const { samples, limitedSamples, uncheckedSamples, stateSizes, roundTimes } = results;
  const pick = (size: number, operation: Operation, variant: Variant) =>
    samples.filter((s) => s.size === size && s.operation === operation && s.variant === variant);
  const median = (size: number, operation: Operation, variant: Variant) =>
    spread(pick(size, operation, variant).map((s) => s.ms)).median;
  const lines: string[] = [];
  lines.push(
    `Measured ${new Date().toISOString().slice(0, 10)}: ${environment()}. Times in seconds, median (min–max); ` +
      "N = 0 is the same operation with nothing declared.",
  );
  lines.push("");
  lines.push("| N | operation | ours | floor | ours / floor | requests | per policy |");
  lines.push("|---|---|---|---|---|---|---|");
  for (const size of [0, ...sizes]) {
    for (const operation of operations) {
      const ours = spread(pick(size, operation, "ours").map((s) => s.ms));
      const floor = spread(pick(size, operation, "floor").map((s) => s.ms));
      const requests = spread(pick(size, operation, "ours").map((s) => s.requests)).median;
      const ratio = ours.median / floor.median;
      const goal = size > 0 ? goals[operation] : undefined;
      const verdict = goal ? ` (goal ${goal}x: ${ratio <= goal ? "met" : "missed"})` : "";
      lines.push(
        `| ${size} | ${operation} | ${describeSpread(ours)} | ${describeSpread(floor)} | ${ratio.toFixed(2)}x${verdict} | ` +
          `${requests} | ${size > 0 ? (requests / size).toFixed(2) : "–"} |`,
      );
    }
  }
  lines.push("");
  lines.push("Requests of one run, by route (ours; the floor makes none):");
  lines.push("");
  lines.push("| N | operation | requests by route |");
  lines.push("|---|---|---|");
  for (const size of sizes) {
    for (const operation of operations) {
      const first = pick(size, operation, "ours")[0];
      const routes = Object.entries(first?.requestsByRoute ?? {})
        .map(([route, count]) => `${route}: ${count}`)
        .join("; ");
      lines.push(`| ${size} | ${operation} | ${routes || "none"} |`);
    }
  }
  // Per policy above the empty program: a Pulumi command's own start (CLI, plugins, program) is not per policy.
  const perPolicy = (variant: Variant, operation: Operation, size: number) =>
    (median(size, operation, variant) - median(0, operation, variant)) / size;
  lines.push("");
  lines.push(
    "Time per policy across N, ours (median ms per policy above N = 0, and in brackets the whole time / N; " +
      "spread = largest / smallest - 1, goal within 15%):",
  );
  lines.push("");
  lines.push(`| operation | ${sizes.map((size) => `N = ${size}`).join(" | ")} | spread |`);
  lines.push(`|---|${sizes.map(() => "---|").join("")}---|`);
  for (const operation of operations) {
    const values = sizes.map((size) => perPolicy("ours", operation, size));
    const whole = sizes.map((size) => median(size, operation, "ours") / size);
    const widest = Math.max(...values) / Math.min(...values) - 1;
    const cells = values.map((ms, index) => `${ms.toFixed(1)} (${whole[index]!.toFixed(1)})`);
    lines.push(`| ${operation} | ${cells.join(" | ")} | ${(widest * 100).toFixed(0)}% |`);
  }
  const uncheckedMedian = (size: number, operation: "up" | "destroy", variant: Variant) =>
    spread(
      uncheckedSamples
        .filter((s) => s.size === size && s.operation === operation && s.variant === variant)
        .map((s) => s.ms),
    ).median;
  lines.push("");
  lines.push(
    "The same `up` and `destroy` with the engine's per-step checkpoint skipped (`PULUMI_SKIP_CHECKPOINTS=true`): " +
      "the whole time in seconds and, in brackets, the share of the time with checkpoints that the checkpoints took; " +
      `then the straight line through N = ${sizes.join(", ")} (least squares: a fixed part, which includes starting ` +
      "the provider's process that N = 0 never starts, and a part per policy) and how far the times stray from it " +
      "(largest |time - line| / time). A cost per policy that grows with N shows as a large stray:",
  );
  lines.push("");
  lines.push(
    `| operation | ${sizes.map((size) => `N = ${size}`).join(" | ")} | line: fixed + per policy | largest stray |`,
  );
  lines.push(`|---|${sizes.map(() => "---|").join("")}---|---|`);
  const describeLine = (timeAt: (size: number) => number) => {
    if (sizes.length < 2) return "– (one size) | –";
    const line = straightLine(sizes.map((size) => ({ size, ms: timeAt(size) })));
    return `${seconds(line.fixedMs)} s + ${line.perPolicyMs.toFixed(1)} ms | ${(line.largestStray * 100).toFixed(0)}%`;
  };
  for (const operation of ["up", "destroy"] as const) {
    for (const variant of ["ours", "floor"] as const) {
      const cells = sizes.map((size) => {
        const whole = uncheckedMedian(size, operation, variant);
        return `${seconds(whole)} (${((1 - whole / median(size, operation, variant)) * 100).toFixed(0)}%)`;
      });
      const line = describeLine((size) => uncheckedMedian(size, operation, variant));
      lines.push(`| ${operation} (${variant}) | ${cells.join(" | ")} | ${line} |`);
    }
  }
  for (const operation of ["up", "destroy"] as const) {
    const cells = sizes.map((size) => seconds(median(size, operation, "ours")));
    const line = describeLine((size) => median(size, operation, "ours"));
    lines.push(`| ${operation} (ours, with checkpoints) | ${cells.join(" | ")} | ${line} |`);
  }
  lines.push("");
  lines.push(
    "State per resource (compact JSON of the resource in `pulumi stack export`) and the dynamic provider's peak RSS:",
  );
  lines.push("");
  lines.push(
    "| N | variant | per policy | per deprecation | serialized provider | provider peak RSS (largest of the operations) |",
  );
  lines.push("|---|---|---|---|---|---|");
  for (const state of stateSizes) {
    const rss = samples
      .filter((s) => s.size === state.size && s.variant === state.variant && s.peakProviderRssBytes !== null)
      .map((s) => s.peakProviderRssBytes as number);
    lines.push(
      `| ${state.size} | ${state.variant} | ${kilobytes(state.bytesPerPolicy)} | ${kilobytes(state.bytesPerDeprecation)} | ` +
        `${state.providerBytes} B | ${rss.length ? `${(spread(rss).max / 1024 / 1024).toFixed(0)} MB` : "n/a"} |`,
    );
  }
  lines.push("");
  lines.push(
    `Against a server enforcing ${serviceLimit} requests per second per token (\`--rate-limit ${serviceLimit}\`). ` +
      `Physical floor: the same operation with nothing declared (the engine's start, before any request can leave) ` +
      `plus the requests made at ${serviceLimit} per second (a deprecation costs 2, so more than 2N requests). ` +
      "Goal: up within 1.15x of the larger of the engine's floor and the physical floor, no 429 reaching the user " +
      "(a 429 answered and retried inside the provider does not). The issue's own measure, the larger of the " +
      "engine's floor and 2N / 30, counts neither the deprecations' requests nor the engine's start; it is shown too:",
  );
  lines.push("");
  lines.push(
    "| N | operation | time | requests | physical floor (N = 0 + requests / 30) | engine floor | ratio to the larger floor | 2N / 30 | ratio to max(engine floor, 2N / 30) | 429s answered (retried) |",
  );
  lines.push("|---|---|---|---|---|---|---|---|---|---|");
  for (const size of sizes) {
    for (const operation of limitedOperations) {
      const matching = limitedSamples.filter((s) => s.size === size && s.operation === operation);
      const time = spread(matching.map((s) => s.ms));
      const requests = spread(matching.map((s) => s.requests)).median;
      const physical = median(0, operation, "ours") + (requests / serviceLimit) * 1000;
      const engine = median(size, operation, "floor");
      const policiesOnly = ((2 * size) / serviceLimit) * 1000;
      lines.push(
        `| ${size} | ${operation} | ${describeSpread(time)} | ${requests} | ${seconds(physical)} | ${seconds(engine)} | ` +
          `${(time.median / Math.max(physical, engine)).toFixed(2)}x | ${seconds(policiesOnly)} | ` +
          `${(time.median / Math.max(policiesOnly, engine)).toFixed(2)}x | ${matching.map((s) => s.rejected).join(", ")} |`,
      );
    }
  }
  lines.push("");
  lines.push(`Successive up/destroy rounds on one server and stack, N = ${roundsSize} (seconds):`);
  lines.push("");
  lines.push(`| | ${roundTimes.map((round) => `round ${round.round}`).join(" | ")} |`);
  lines.push(`|---|${roundTimes.map(() => "---|").join("")}`);
  lines.push(`| up | ${roundTimes.map((round) => seconds(round.upMs)).join(" | ")} |`);
  lines.push(`| destroy | ${roundTimes.map((round) => seconds(round.destroyMs)).join(" | ")} |`);
  const table = lines.join("\n");

  const chart: Chart = {
    title: "Time per policy against N: ours (solid) and the engine's floor (dashed)",
    xLabel: "policies (N), with N/4 deprecations",
    yLabel: "ms per policy above N = 0 (median)",
    series: operations.flatMap((operation) =>
      (["ours", "floor"] as const).map((variant) => ({
        name: `${operation} (${variant})`,
        group: operation,
        dashed: variant === "floor",
        points: sizes.map((size) => ({ size, ms: perPolicy(variant, operation, size) })),
      })),
    ),
  };
  await mkdir(resultsDir, { recursive: true });
  await writeFile(
    join(resultsDir, "engine.json"),
    `${JSON.stringify({ environment: environment(), ...results }, null, 2)}\n`,
  );
  await writeFile(join(resultsDir, "engine.md"), `${table}\n`);
  await writeFile(join(resultsDir, "engine.svg"), renderChart(chart));
  await updateReadme(table);
  process.stdout.write(`${table}\n`);
}

const readmeStart = "<!-- bench:engine:start -->";
const readmeEnd = "<!-- bench:engine:end -->";

/** Puts the latest table between the README's markers, so README and bench/results never disagree. */
async function updateReadme(table: string): Promise<void> {
  const file = join(repoRoot, "README.md");
  const text = await readFile(file, "utf8");
  const from = text.indexOf(readmeStart);
  const to = text.indexOf(readmeEnd);
  if (from < 0 || to < from) {
    log("README.md has no bench:engine markers; left as is");
    return;
  }
  await writeFile(file, `${text.slice(0, from + readmeStart.length)}\n${table}\n${text.slice(to)}`);
}

// ---------------------------------------------------------------------------------------------------------------
// The plot, as plain SVG
// ---------------------------------------------------------------------------------------------------------------

interface Chart {
  title: string;
  xLabel: string;
  yLabel: string;
  series: { name: string; group: string; dashed: boolean; points: { size: number; ms: number }[] }[];
}

const palette = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"];

function escapeXml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** A step of 1, 2 or 5 times a power of ten that splits `max` into about five intervals. */
function tickStep(max: number): number {
  const rough = max / 5;
  const power = 10 ** Math.floor(Math.log10(rough));
  return [1, 2, 5, 10].map((factor) => factor * power).find((step) => step >= rough) ?? rough;
}

/** Lines over N on a doubling (log 2) axis, so N = 50, 100, 200, 400 are evenly spaced. */
function renderChart(chart: Chart): string {
  const width = 820;
  const height = 440;
  const margin = { top: 40, right: 190, bottom: 56, left: 64 };
  const plotWidth = width - margin.left - margin.right;
  const plotHeight = height - margin.top - margin.bottom;
  const xs = [...new Set(chart.series.flatMap((series) => series.points.map((point) => point.size)))].sort(
    (a, b) => a - b,
  );
  const ys = chart.series.flatMap((series) => series.points.map((point) => point.ms));
  const step = tickStep(Math.max(...ys, 1) * 1.05);
  const yMax = Math.ceil((Math.max(...ys, 1) * 1.05) / step) * step;
  const logMin = Math.log2(xs[0] ?? 1);
  const logSpan = Math.log2(xs[xs.length - 1] ?? 2) - logMin || 1;
  const x = (size: number) => margin.left + ((Math.log2(size) - logMin) / logSpan) * plotWidth;
  const y = (ms: number) => margin.top + plotHeight - (ms / yMax) * plotHeight;
  const groups = [...new Set(chart.series.map((series) => series.group))];
  const color = (group: string) => palette[groups.indexOf(group) % palette.length];
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<title>${escapeXml(chart.title)}</title>`,
    `<rect width="${width}" height="${height}" fill="white"/>`,
    `<text x="${width / 2}" y="22" text-anchor="middle" font-size="14">${escapeXml(chart.title)}</text>`,
  ];
  for (let value = 0; value <= yMax + step / 2; value += step) {
    parts.push(
      `<line x1="${margin.left}" x2="${margin.left + plotWidth}" y1="${y(value)}" y2="${y(value)}" stroke="#ddd"/>`,
      `<text x="${margin.left - 8}" y="${y(value) + 4}" text-anchor="end">${Number(value.toPrecision(6))}</text>`,
    );
  }
  for (const size of xs) {
    parts.push(
      `<line x1="${x(size)}" x2="${x(size)}" y1="${margin.top}" y2="${margin.top + plotHeight}" stroke="#eee"/>`,
      `<text x="${x(size)}" y="${margin.top + plotHeight + 18}" text-anchor="middle">${size}</text>`,
    );
  }
  parts.push(
    `<rect x="${margin.left}" y="${margin.top}" width="${plotWidth}" height="${plotHeight}" fill="none" stroke="#333"/>`,
    `<text x="${margin.left + plotWidth / 2}" y="${height - 14}" text-anchor="middle">${escapeXml(chart.xLabel)}</text>`,
    `<text transform="translate(16 ${margin.top + plotHeight / 2}) rotate(-90)" text-anchor="middle">${escapeXml(chart.yLabel)}</text>`,
  );
  chart.series.forEach((series, index) => {
    const stroke = color(series.group);
    const dash = series.dashed ? ' stroke-dasharray="6 4"' : "";
    const points = series.points.map((point) => `${x(point.size).toFixed(1)},${y(point.ms).toFixed(1)}`).join(" ");
    parts.push(`<polyline points="${points}" fill="none" stroke="${stroke}" stroke-width="2"${dash}/>`);
    for (const point of series.points) {
      parts.push(`<circle cx="${x(point.size).toFixed(1)}" cy="${y(point.ms).toFixed(1)}" r="3" fill="${stroke}"/>`);
    }
    const legendY = margin.top + 8 + index * 18;
    const legendX = margin.left + plotWidth + 16;
    parts.push(
      `<line x1="${legendX}" x2="${legendX + 28}" y1="${legendY}" y2="${legendY}" stroke="${stroke}" stroke-width="2"${dash}/>`,
      `<text x="${legendX + 36}" y="${legendY + 4}">${escapeXml(series.name)}</text>`,
    );
  });
  parts.push("</svg>");
  return `${parts.join("\n")}\n`;
}

await main();
