// What saying whom a stricter policy would block costs a preview: a Policy raised from advisory to hard-mandatory in a
// set of ten scoped to 200 workspaces with 20 runs each (a result of every policy in every run, this one failed in one
// of four), at the service's 30 requests per second, side by side with the same preview with the reads off
// (tfe:impactWindowDays 0), a raise of all ten at once (one budget, one read of each workspace, for the preview), and
// a preview that changes no level, with the reads on and off. Requests the server answered and seconds, medians.
// Writes bench/results/impact.md. Nothing is asserted.
//
//   npm run bench:impact          # 3 runs of each preview
//   BENCH_RUNS=1 npm run bench:impact
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { repoRoot, resultsDir, serviceLimit, startServer } from "./engine/settings.mts";

const run = promisify(execFile);
const runs = Number(process.env.BENCH_RUNS ?? 3);
const organization = "bench-impact";
const token = "bench-impact-token.atlasv1.0123456789";
const setId = "polset-BenchImpact0001";
const workspaceCount = 200;
const runsEach = 20;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

/** The set's other nine policies: a raise of all ten at once reads the same runs as a raise of one. */
const others = Array.from({ length: 9 }, (_, index) => `baseline-${index + 2}`);
const workspaces = Array.from({ length: workspaceCount }, (_, index) => ({
  id: `ws-BenchImpact${String(index).padStart(5, "0")}`,
  organization,
  name: `workspace-${index}`,
}));
const seededRuns = workspaces.flatMap((workspace, index) =>
  Array.from({ length: runsEach }, (_, runIndex) => ({
    id: `run-Bench${String(index).padStart(4, "0")}${String(runIndex).padStart(3, "0")}`,
    workspace: workspace.id,
    daysAgo: runIndex,
    policyResults: [
      {
        policySet: "baseline",
        policy: "require-tags",
        level: "advisory",
        status: (runIndex + index) % 4 === 0 ? ("failed" as const) : ("passed" as const),
      },
      // The set's other policies, evaluated in every run too, passing.
      ...others.map((policy) => ({ policySet: "baseline", policy, level: "advisory", status: "passed" as const })),
    ],
  })),
);

const server = await startServer({
  rateLimit: serviceLimit,
  seed: {
    organizations: [{ name: organization, plus: true }],
    tokens: [{ token, organizations: [organization] }],
    policySets: [{ id: setId, organization, name: "baseline" }],
    workspaces,
    runs: seededRuns,
  },
});
const root = await mkdtemp(join(tmpdir(), "bench-impact-"));
try {
  const distClient = "../dist/client/index.js";
  const { TfeClient } = (await import(distClient)) as typeof import("../src/client/index.js");
  const client = new TfeClient({ address: server.url, token });
  for (let index = 0; index < workspaces.length; index += 100) {
    await client.policySets.addToScope(
      setId,
      "workspaces",
      workspaces.slice(index, index + 100).map((workspace) => workspace.id),
    );
  }
  await client.close();

  const program = (level: string, othersLevel = "advisory") =>
    [
      'const { Policy } = require("pulumi-tfe-governance");',
      ...[["require-tags", level], ...others.map((name) => [name, othersLevel])].map(
        ([name, at]) =>
          `new Policy("${name}", { code: "main = rule { true }\\n", enforcementLevel: "${at}", policySetIds: ["${setId}"] });`,
      ),
      "",
    ].join("\n");
  await mkdir(join(root, ".state"));
  await writeFile(
    join(root, "Pulumi.yaml"),
    "name: bench-impact\nruntime:\n  name: nodejs\n  options:\n    typescript: false\nmain: index.js\n",
  );
  await symlink(join(repoRoot, "node_modules"), join(root, "node_modules"), "dir");
  const env = {
    ...process.env,
    PULUMI_BACKEND_URL: `file://${join(root, ".state")}`,
    PULUMI_CONFIG_PASSPHRASE: "bench",
    PULUMI_HOME: join(root, ".pulumi-home"),
  };
  const pulumi = async (args: string[], extra: NodeJS.ProcessEnv = {}) => {
    const before = server.requestLog.entries().length;
    const started = performance.now();
    const { stdout } = await run("pulumi", [...args, "--non-interactive"], {
      cwd: root,
      env: { ...env, ...extra },
      maxBuffer: 64 << 20,
    });
    return {
      seconds: (performance.now() - started) / 1000,
      requests: server.requestLog.entries().length - before,
      // One per resource that read: a raise of ten says it under each.
      read: [...new Set([...stdout.matchAll(/\((\d+ of \d+) workspaces read\)/g)].map((match) => match[1]))].join(", "),
    };
  };
  await pulumi(["stack", "init", "bench"]);
  for (const [key, value] of [
    ["tfe:address", server.url],
    ["tfe:organization", organization],
  ])
    await pulumi(["config", "set", key as string, value as string]);
  await pulumi(["config", "set", "--secret", "tfe:token", token]);
  await writeFile(join(root, "index.js"), program("advisory"));
  await pulumi(["up", "--yes", "--skip-preview"]);

  const cases = {
    "raise, reads on (default budget 300)": { level: "hard-mandatory", others: "advisory", window: "30" },
    "raise, reads off (impactWindowDays 0)": { level: "hard-mandatory", others: "advisory", window: "0" },
    "raise of all ten policies at once, reads on": { level: "hard-mandatory", others: "hard-mandatory", window: "30" },
    "no change, reads on": { level: "advisory", others: "advisory", window: "30" },
    "no change, reads off": { level: "advisory", others: "advisory", window: "0" },
  } as const;
  const measured: Record<string, { seconds: number[]; requests: number[]; read: string }> = {};
  for (let round = 0; round < runs; round++) {
    for (const [name, { level, others: othersLevel, window }] of Object.entries(cases)) {
      await writeFile(join(root, "index.js"), program(level, othersLevel));
      const result = await pulumi(["preview"], { TFE_IMPACT_WINDOW_DAYS: window });
      measured[name] ??= { seconds: [], requests: [], read: result.read };
      measured[name].seconds.push(result.seconds);
      measured[name].requests.push(result.requests);
      console.log(`${name}: ${result.seconds.toFixed(2)} s, ${result.requests} requests`);
    }
  }
  // The same reads with a round trip of 100 ms on every request, as from a runner far from the service: one workspace
  // at a time against four (the default), side by side, through the library (the engine adds nothing here).
  const distImpact = "../dist/impact/index.js";
  const { noReach, readImpact } = (await import(distImpact)) as typeof import("../src/impact/index.js");
  const reader = new TfeClient({ address: server.url, token });
  const farAway: Record<string, { seconds: number[]; requests: number[]; read: string }> = {};
  server.setFaults([{ route: "*", latencyMs: 100 }]);
  try {
    for (let round = 0; round < runs; round++) {
      for (const concurrency of [1, 4]) {
        const started = performance.now();
        const impact = await readImpact(
          reader,
          {
            organization,
            kind: "sentinel",
            policies: [{ name: "require-tags", sets: ["baseline"], level: "hard-mandatory" }],
            reach: [{ ...noReach, workspaceIds: workspaces.map((workspace) => workspace.id) }],
          },
          { windowDays: 30, requestBudget: 300, concurrency },
        );
        const name = `${concurrency === 1 ? "one workspace" : `${concurrency} workspaces`} at a time`;
        farAway[name] ??= { seconds: [], requests: [], read: `${impact.readWhole} of ${impact.reached}` };
        farAway[name].seconds.push((performance.now() - started) / 1000);
        farAway[name].requests.push(impact.requests);
        console.log(`100 ms away, ${name}: ${farAway[name].seconds.at(-1)?.toFixed(2)} s, ${impact.requests} requests`);
      }
    }
  } finally {
    server.setFaults([]);
    await reader.close();
  }
  const lines = [
    `# Whom a stricter policy would block: the cost at preview, ${new Date().toISOString().slice(0, 10)}`,
    "",
    `\`npm run bench:impact\`: ten Policies in a set scoped to ${workspaceCount} workspaces with ${runsEach} runs each, the`,
    `local server enforcing ${serviceLimit} requests per second, medians of ${runs} previews each.`,
    "",
    "| preview | requests | seconds | workspaces read |",
    "| --- | --- | --- | --- |",
    ...Object.entries(measured).map(
      ([name, { seconds, requests, read }]) =>
        `| ${name} | ${median(requests)} | ${median(seconds).toFixed(2)} | ${read || "none"} |`,
    ),
    "",
    "The same reads (budget 300) with 100 ms added to every answer, as for a runner far from the service, through",
    "the library:",
    "",
    "| reads | requests | seconds | workspaces read |",
    "| --- | --- | --- | --- |",
    ...Object.entries(farAway).map(
      ([name, { seconds, requests, read }]) =>
        `| ${name} | ${median(requests)} | ${median(seconds).toFixed(2)} | ${read} |`,
    ),
    "",
  ];
  await writeFile(join(resultsDir, "impact.md"), lines.join("\n"));
  console.log(`\n${lines.join("\n")}`);
} finally {
  await server.close();
  await rm(root, { recursive: true, force: true });
}
