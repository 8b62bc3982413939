// The plugin for other languages, measured as users run it (installed from the tarball `npm run package` makes):
//   0. what `npm run package` makes for every platform: how long it takes, each tarball's size and files, and
//      whether a second build of the same checkout gives the same bytes (the signed macOS executables included);
//   1. its start-up, from spawn to the port on stdout (the engine starts it two or three times per command), on each
//      platform that runs here: the linux-amd64 executable, the linux-arm64 one under qemu-user (emulated: slower
//      than an arm64 machine by far), and macOS's script under the Node version macOS carries (its Linux build: not
//      a Mac's start-up); next to the JavaScript plugin it replaced (dist/plugin/main.js under Node with the
//      packages installed, as the tarball of 0.1.0 held it), Node's compile cache cold (NODE_DISABLE_COMPILE_CACHE=1)
//      and warm, and `node -e ""` alone;
//   2. up / preview / refresh / destroy of the same 50 policies from a YAML program through the plugin and from a
//      JavaScript program on the dynamic providers, interleaved operation by operation, several runs, medians;
//   3. the plugin process's peak memory during a YAML `up` of 200 policies, next to the dynamic provider's.
// Writes bench/results/plugin.md (bench/results/plugin-platforms.md for 0 and 1 only). Nothing is asserted. Windows' executable does not run here (wine 8.0 cannot start
// Node 24), nor macOS's.
//
//   npm run bench:plugin                 # 10 start-ups each (3 under qemu), 3 runs of each operation
//   BENCH_RUNS=1 npm run bench:plugin
//   BENCH_PARTS=platforms npm run bench:plugin   # 0 and 1 only
import { execFile, spawn } from "node:child_process";
import { cp, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { seaMainScript } from "../scripts/plugin-binaries.mts";
import { blobMakers, runtimeBinary, runtimeVersion } from "../scripts/plugin-platforms.mjs";
import { benchDir, repoRoot, resultsDir, startServer } from "./engine/settings.mts";

// The built client, as the benchmark's server; typed from the source so typechecking needs no build.
const distClient = "../dist/client/index.js";
const { TfeClient } = (await import(distClient)) as typeof import("../src/client/index.js");

const run = promisify(execFile);
const runs = Number(process.env.BENCH_RUNS ?? 3);
const startups = Number(process.env.BENCH_STARTUPS ?? 10);
/** Start-ups under qemu: each takes seconds. */
const emulatedStartups = Math.min(startups, 3);
const platformsOnly = process.env.BENCH_PARTS === "platforms";
const startLoad = loadavg();
const arm64Root = process.env.TFEGOV_ARM64_ROOT ?? "/usr/aarch64-linux-gnu";
// One organization each: the programs are interleaved, and both declare the same 50 names.
const organizations = { yaml: "bench-yaml", javascript: "bench-javascript" } as const;
const token = "bench-plugin-token.atlasv1.0123456789";
const operations = ["up", "preview", "refresh", "destroy"] as const;
type Operation = (typeof operations)[number];
const commands: Record<Operation, string[]> = {
  up: ["up", "--yes", "--skip-preview"],
  preview: ["preview", "--expect-no-changes"],
  refresh: ["refresh", "--yes", "--skip-preview", "--expect-no-changes"],
  destroy: ["destroy", "--yes", "--skip-preview"],
};

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
};
const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

const root = await mkdtemp(join(tmpdir(), "bench-plugin-"));
const peakDir = join(root, "peak-memory");
await mkdir(peakDir);

/** Spawns `command` and resolves with the milliseconds until its first line on stdout; then kills it. */
function timeToFirstLine(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(command, args, { env, stdio: ["ignore", "pipe", "pipe"] });
    child.stdout.once("data", () => {
      resolve(performance.now() - started);
      child.kill("SIGKILL");
    });
    child.on("error", reject);
    child.on("exit", (code) => code !== null && code !== 0 && reject(new Error(`${command} exited ${code}`)));
  });
}

class Project {
  readonly dir: string;
  private readonly env: NodeJS.ProcessEnv;

  constructor(dir: string, env: NodeJS.ProcessEnv) {
    this.dir = dir;
    this.env = env;
  }

  static async create(name: string, files: Record<string, string>, config: Record<string, string>, env = {}) {
    const dir = join(root, name);
    await mkdir(join(dir, ".state"), { recursive: true });
    for (const [path, content] of Object.entries(files)) await writeFile(join(dir, path), content);
    const project = new Project(dir, {
      ...process.env,
      PULUMI_BACKEND_URL: `file://${join(dir, ".state")}`,
      PULUMI_CONFIG_PASSPHRASE: "bench",
      PULUMI_HOME: join(dir, ".pulumi-home"),
      BENCH_PEAK_MEMORY_DIR: peakDir,
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --require ${join(benchDir, "peak-memory.cjs")}`.trim(),
      ...env,
    });
    await project.pulumi(["stack", "init", "bench"]);
    for (const [key, value] of Object.entries(config)) {
      await project.pulumi(["config", "set", ...(key.endsWith(":token") ? ["--secret"] : []), key, value]);
    }
    return project;
  }

  async pulumi(args: string[]): Promise<number> {
    const started = performance.now();
    await run("pulumi", [...args, "--non-interactive"], { cwd: this.dir, env: this.env, maxBuffer: 64 << 20 });
    return performance.now() - started;
  }
}

const code = (index: number) => `# policy ${index}\nmain = rule { true }\n`;
const yamlProgram = (count: number) =>
  [
    "name: bench-yaml",
    "runtime: yaml",
    "resources:",
    ...Array.from({ length: count }, (_, index) =>
      [
        `  p${index}:`,
        "    type: tfegov:index:Policy",
        "    properties:",
        `      code: ${JSON.stringify(code(index))}`,
        "      enforcementLevel: soft-mandatory",
      ].join("\n"),
    ),
    "",
  ].join("\n");
const javascriptProgram = (count: number) =>
  [
    'const { Policy } = require("pulumi-tfe-governance");',
    `for (let index = 0; index < ${count}; index++) {`,
    '  new Policy("p" + index, { code: "# policy " + index + "\\nmain = rule { true }\\n", enforcementLevel: "soft-mandatory" });',
    "}",
    "",
  ].join("\n");

/** The highest peak RSS recorded by a process whose entry matched, since the last call. */
async function takePeak(): Promise<number | null> {
  let peak: number | null = null;
  for (const file of await readdir(peakDir)) {
    const bytes = Number(await readFile(join(peakDir, file), "utf8"));
    peak = Math.max(peak ?? 0, bytes);
    await rm(join(peakDir, file));
  }
  return peak;
}

/**
 * The highest peak RSS (VmHWM) of running processes whose command line includes `name`, sampled every 20 ms until
 * `stop`: the plugin is one executable now, which takes no `--require` of the peak-memory hook.
 */
function samplePeak(name: string): { stop(): number | null } {
  let peak: number | null = null;
  const sample = async () => {
    for (const pid of await readdir("/proc").catch(() => [])) {
      if (!/^\d+$/.test(pid)) continue;
      const cmdline = await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "");
      if (!cmdline.includes(name)) continue;
      const status = await readFile(`/proc/${pid}/status`, "utf8").catch(() => "");
      const kib = Number(/^VmHWM:\s+(\d+) kB/m.exec(status)?.[1] ?? Number.NaN);
      if (!Number.isNaN(kib)) peak = Math.max(peak ?? 0, kib * 1024);
    }
  };
  const timer = setInterval(() => void sample(), 20);
  return {
    stop: () => {
      clearInterval(timer);
      return peak;
    },
  };
}

const server = await startServer({
  seed: {
    organizations: Object.values(organizations).map((name) => ({ name, plus: true })),
    tokens: [{ token, organizations: Object.values(organizations), managePolicies: true, manageModules: true }],
  },
});
try {
  console.log("packaging the plugin for every platform, twice (npm run package's script) ...");
  const artifacts = join(root, "artifacts");
  const again = join(root, "artifacts-again");
  const packaging: number[] = [];
  for (const folder of [artifacts, again]) {
    const started = performance.now();
    await run(process.execPath, [join(repoRoot, "scripts", "package-plugin.mjs"), folder], { maxBuffer: 64 << 20 });
    packaging.push(performance.now() - started);
  }
  const sums = async (folder: string) => (await readFile(join(folder, "SHA256SUMS"), "utf8")).trim().split("\n");
  const [first, second] = [await sums(artifacts), await sums(again)];
  const differing = first.filter((line) => !second.includes(line)).map((line) => line.split("  ")[1]);
  const tarballs: { name: string; bytes: number; files: number }[] = [];
  for (const name of (await readdir(artifacts)).filter((file) => file.endsWith(".tar.gz")).sort()) {
    const listing = (await run("tar", ["-tzf", join(artifacts, name)], { maxBuffer: 64 << 20 })).stdout;
    const bytes = (await readFile(join(artifacts, name))).byteLength;
    tarballs.push({ name, bytes, files: listing.split("\n").filter((line) => line && !line.endsWith("/")).length });
  }
  const platform = `${process.platform}-${process.arch === "x64" ? "amd64" : process.arch}`;
  const tarball = join(artifacts, tarballs.find((entry) => entry.name.endsWith(`-${platform}.tar.gz`))?.name as string);
  const version = /-v(\d+\.\d+\.\d+[^-]*)-/.exec(tarball)?.[1] as string;
  const extracted = async (name: string) => {
    const folder = join(root, name);
    await mkdir(folder);
    await run("tar", ["-xzf", join(artifacts, `pulumi-resource-tfegov-v${version}-${name}.tar.gz`), "-C", folder]);
    return folder;
  };
  const arm64 = join(await extracted("linux-arm64"), "pulumi-resource-tfegov");
  // macOS's script beside what its executable has beside it (package.json, docs, hcl2json's WebAssembly).
  const darwinFolder = await extracted("darwin-arm64");
  const darwinScript = join(root, "darwin-script", "plugin.js");
  await cp(darwinFolder, join(root, "darwin-script"), { recursive: true });
  await writeFile(darwinScript, seaMainScript(await readFile(join(darwinFolder, "pulumi-resource-tfegov"))) as Buffer);
  const darwinNode = runtimeVersion("darwin-arm64");
  const darwinNodeBinary = runtimeBinary(blobMakers[darwinNode] as Parameters<typeof runtimeBinary>[0]);

  const yaml = await Project.create(
    "yaml",
    { "Pulumi.yaml": yamlProgram(50) },
    {
      "tfegov:address": server.url,
      "tfegov:organization": organizations.yaml,
      "tfegov:token": token,
    },
  );
  await run("pulumi", ["plugin", "install", "resource", "tfegov", version, "-f", tarball], {
    env: { ...process.env, PULUMI_HOME: join(yaml.dir, ".pulumi-home") },
  });
  const launcher = join(yaml.dir, ".pulumi-home", "plugins", `resource-tfegov-v${version}`, "pulumi-resource-tfegov");
  const javascript = await Project.create(
    "javascript",
    {
      "Pulumi.yaml": "name: bench-javascript\nruntime:\n  name: nodejs\n  options:\n    typescript: false\n",
      "index.js": javascriptProgram(50),
    },
    { "tfe:address": server.url, "tfe:organization": organizations.javascript, "tfe:token": token },
  );
  await symlink(join(repoRoot, "node_modules"), join(javascript.dir, "node_modules"), "dir");

  // 1. Start-up.
  const cache = join(root, "compile-cache");
  const startupEnv = (variant: "cold" | "warm"): NodeJS.ProcessEnv => ({
    ...process.env,
    NODE_OPTIONS: "",
    ...(variant === "cold" ? { NODE_DISABLE_COMPILE_CACHE: "1" } : { NODE_COMPILE_CACHE: cache }),
  });
  const javascriptPlugin = [join(repoRoot, "dist", "plugin", "main.js")];
  // Each measured the same way, interleaved: [command, arguments, environment].
  const starts: Record<string, [string, string[], NodeJS.ProcessEnv]> = {
    "`node -e ''` alone": [process.execPath, ["-e", "process.stdout.write('x')"], startupEnv("cold")],
    "linux-amd64 executable (this release)": [launcher, ["127.0.0.1:1"], startupEnv("cold")],
    "linux-arm64 executable, under qemu-user (emulated)": [
      "qemu-aarch64-static",
      ["-L", arm64Root, arm64, "127.0.0.1:1"],
      startupEnv("cold"),
    ],
    [`macOS's script under Node ${darwinNode} for Linux`]: [
      darwinNodeBinary,
      [darwinScript, "127.0.0.1:1"],
      startupEnv("cold"),
    ],
    "JavaScript plugin (0.1.0), compile cache cold": [
      process.execPath,
      [...javascriptPlugin, "127.0.0.1:1"],
      startupEnv("cold"),
    ],
    "JavaScript plugin (0.1.0), compile cache warm": [
      process.execPath,
      [...javascriptPlugin, "127.0.0.1:1"],
      startupEnv("warm"),
    ],
  };
  const startup: Record<string, number[]> = Object.fromEntries(Object.keys(starts).map((name) => [name, []]));
  for (const [command, args, env] of Object.values(starts)) await timeToFirstLine(command, args, env); // fills caches
  for (let index = 0; index < startups; index++) {
    for (const [name, [command, args, env]] of Object.entries(starts)) {
      if (command.startsWith("qemu") && index >= emulatedStartups) continue;
      startup[name]?.push(await timeToFirstLine(command, args, env));
    }
  }
  console.log(
    Object.entries(startup)
      .map(([name, values]) => `${name}: ${seconds(median(values))}`)
      .join(", "),
  );

  // 2 and 3, unless BENCH_PARTS=platforms.
  const operationLines = platformsOnly ? [] : await operationsAndMemory();
  async function operationsAndMemory(): Promise<string[]> {
    // 2. YAML through the plugin against JavaScript on the dynamic providers, interleaved, the first alternating.
    const client = new TfeClient({ address: server.url, token, rateLimit: false });
    /** Every destroy leaves its organization empty: the next up of the same names would meet them. */
    const leftOver = async (variant: keyof typeof organizations) => {
      const names: string[] = [];
      for await (const policy of client.policies.listAll(organizations[variant])) names.push(policy.name);
      if (names.length > 0) throw new Error(`the ${variant} destroy left ${names.length} policies`);
    };
    await yaml.pulumi(commands.up);
    await yaml.pulumi(commands.destroy);
    await leftOver("yaml");
    await javascript.pulumi(commands.up);
    await javascript.pulumi(commands.destroy);
    await leftOver("javascript");
    const times: Record<"yaml" | "javascript", Record<Operation, number[]>> = {
      yaml: { up: [], preview: [], refresh: [], destroy: [] },
      javascript: { up: [], preview: [], refresh: [], destroy: [] },
    };
    for (let round = 0; round < runs; round++) {
      for (const operation of operations) {
        const order = round % 2 === 0 ? (["yaml", "javascript"] as const) : (["javascript", "yaml"] as const);
        for (const variant of order) {
          const project = variant === "yaml" ? yaml : javascript;
          times[variant][operation].push(await project.pulumi(commands[operation]));
          if (operation === "destroy") await leftOver(variant);
        }
        console.log(
          `run ${round + 1} ${operation}: YAML ${seconds(times.yaml[operation].at(-1) as number)}, JavaScript ${seconds(times.javascript[operation].at(-1) as number)}`,
        );
      }
    }

    // 3. Peak memory under 200 policies.
    await writeFile(join(yaml.dir, "Pulumi.yaml"), yamlProgram(200));
    await writeFile(join(javascript.dir, "index.js"), javascriptProgram(200));
    await takePeak();
    const sampler = samplePeak("pulumi-resource-tfegov");
    await yaml.pulumi(commands.up);
    const pluginPeak = sampler.stop();
    await yaml.pulumi(commands.destroy);
    await takePeak();
    await javascript.pulumi(commands.up);
    const dynamicPeak = await takePeak();
    await javascript.pulumi(commands.destroy);
    const mib = (bytes: number | null) => (bytes === null ? "n/a" : `${(bytes / 1024 / 1024).toFixed(0)} MiB`);
    return [
      "| 50 policies | YAML (plugin) | JavaScript (dynamic providers) | YAML / JavaScript |",
      "| --- | --- | --- | --- |",
      ...operations.map((operation) => {
        const [y, j] = [median(times.yaml[operation]), median(times.javascript[operation])];
        return `| ${operation} | ${seconds(y)} | ${seconds(j)} | ${(y / j).toFixed(2)} |`;
      }),
      "",
      `Peak RSS during \`up\` of 200 policies: the plugin ${mib(pluginPeak)}, the dynamic provider ${mib(dynamicPeak)}.`,
      "",
    ];
  }

  const lines = [
    `# The plugin for other languages, ${new Date().toISOString().slice(0, 10)}`,
    "",
    "`npm run bench:plugin`: the plugin installed from its tarball (the executable), the local server, Pulumi CLI 3.259, the YAML",
    `host v1.25.0, Node.js ${process.version}. Medians of ${startups} start-ups (${emulatedStartups} under qemu)${platformsOnly ? " (BENCH_PARTS=platforms)" : ` and of ${runs} runs per operation`}.`,
    `The machine's load average at the start: ${startLoad.map((load) => load.toFixed(1)).join(", ")} (compare ratios, not seconds, across runs).`,
    "",
    "| start-up, spawn to port | median | / JavaScript plugin, cold | / JavaScript plugin, warm |",
    "| --- | --- | --- | --- |",
    ...Object.entries(startup).map(([name, values]) => {
      const ratio = (to: string) => (median(values) / median(startup[to] as number[])).toFixed(2);
      const [cold, warm] = [
        "JavaScript plugin (0.1.0), compile cache cold",
        "JavaScript plugin (0.1.0), compile cache warm",
      ];
      return `| ${name} | ${seconds(median(values))} | ${ratio(cold)} | ${ratio(warm)} |`;
    }),
    "",
    "| tarball | Node.js | size | files |",
    "| --- | --- | --- | --- |",
    ...tarballs.map(
      ({ name, bytes, files }) =>
        `| ${name} | ${runtimeVersion(/-(\w+-\w+)\.tar\.gz$/.exec(name)?.[1] as string)} | ${(bytes / 1024 / 1024).toFixed(1)} MB | ${files} |`,
    ),
    "",
    `\`npm run package\` of every platform: ${packaging.map(seconds).join(" and ")} (the runtimes cached).`,
    differing.length === 0
      ? `Built twice from this checkout: every file the same bytes (${first.length} checksums in SHA256SUMS), the signed macOS executables included.`
      : `Built twice from this checkout: ${differing.join(", ")} differed.`,
    "",
    ...operationLines,
  ];
  await writeFile(join(resultsDir, platformsOnly ? "plugin-platforms.md" : "plugin.md"), lines.join("\n"));
  console.log(`\n${lines.join("\n")}`);
} finally {
  await server.close();
  await rm(root, { recursive: true, force: true });
}
