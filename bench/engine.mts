// The provider's cost under the real Pulumi engine, next to the engine's floor: the same program with the same
// number of dynamic resources under a provider that makes no request (bench/engine-program/index.js). For each N
// (policies, with code from files, plus N/4 module version deprecations) it times `up` from empty, a no-change
// `preview`, the first no-drift `refresh` after that up (it reads back the code just uploaded), the scheduled drift
// check (the same refresh again: nothing to download), an `up` that changes every enforcement level and `destroy`,
// ours and the floor interleaved operation by operation, several runs; counts requests from the local server's
// request log; measures state bytes per resource and the peak memory of the dynamic provider's process; times `up`,
// both refreshes and `destroy` against a server that enforces 30 requests per second; and repeats up/destroy rounds
// on one server to show whether time grows. Writes bench/results/engine.{json,md,svg} and docs/performance.md's table. Nothing is asserted.
//
//   npm run bench:engine                      # N = 50, 100, 200, 400; 3 runs (about half an hour)
//   BENCH_QUICK=1 npm run bench:engine        # N = 50, 100; 1 run; rounds at N = 50
//   BENCH_SIZES=200 BENCH_RUNS=3 npm run bench:engine
//
// `.mts` because the package is CommonJS and Node runs a `.ts` file with import syntax only as ESM.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { log, Project, peakMemoryDir, seed, stateSize, timed } from "./engine/projects.mts";
import { writeResults } from "./engine/results.mts";
import {
  type LimitedSample,
  largestSize,
  limitedOperations,
  operations,
  type RunningServer,
  rounds,
  roundsSize,
  runs,
  type Sample,
  type StateSize,
  serviceLimit,
  serviceLimitCounting,
  shareOfAdvertisedLimit,
  sizes,
  startServer,
  type UncheckedSample,
  type Variant,
  warmUpSize,
} from "./engine/settings.mts";

async function main(): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), "bench-engine-"));
  const versions = Math.floor(largestSize() / 4);
  const servers: RunningServer[] = [];
  const start = async (name: string, rateLimit?: number) => {
    const server = await startServer({
      data: join(root, `${name}.sqlite`),
      seed: seed(versions),
      rateLimit,
      rateLimitCounting: serviceLimitCounting,
    });
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
    // `up` at the limit with the checkpoints skipped: where the engine's checkpoints set an update phase's time, this
    // shows what pacing alone makes of it.
    const limitedUnchecked = await Project.create(root, "limited-unchecked", "ours", limitedServer, skipCheckpoints);

    // The first Pulumi run of a project pays for cold caches (plugins, modules, files): not measured.
    for (const [project, target] of [
      [projects.ours, server],
      [projects.floor, server],
      [limited, limitedServer],
      [limitedUnchecked, limitedServer],
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
        const atTheLimit = [
          ...limitedOperations.map((operation) => ({ operation, project: limited, checkpointsSkipped: false })),
          ...(["up", "destroy"] as const).map((operation) => ({
            operation,
            project: limitedUnchecked,
            checkpointsSkipped: true,
          })),
        ];
        for (const { operation, project, checkpointsSkipped } of atTheLimit) {
          const { ms, requests, rejected, phase, busiestSecond } = await timed(project, limitedServer, size, operation);
          limitedSamples.push({
            size,
            run,
            operation,
            checkpointsSkipped,
            ms,
            requests,
            rejected,
            phase,
            busiestSecond,
          });
          const pace = phase ? phase.requests / (serviceLimit * shareOfAdvertisedLimit) : 0;
          log(
            `run ${run} N=${size} ${operation}${checkpointsSkipped ? " (checkpoints skipped)" : ""} at ` +
              `${serviceLimit}/s: ${(ms / 1000).toFixed(2)} s, ${rejected} answered 429; update phase ` +
              `${phase ? `${(phase.ms / 1000).toFixed(2)} s for ${phase.requests} requests, pace ${pace.toFixed(2)} s` : "none"}; ` +
              `busiest second ${busiestSecond}`,
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

await main();
