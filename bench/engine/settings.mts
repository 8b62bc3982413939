// What a run of the engine benchmark measures and how: sizes, runs, the goals, the service's limit, and the shapes
// of the samples it records. Read from the environment (BENCH_QUICK, BENCH_SIZES, BENCH_RUNS, BENCH_ROUNDS_SIZE).
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

// The built server is measured, as users run it; typed from the source so typechecking needs no build.
const distServer = "../../dist/server/index.js";
export const { startServer } = (await import(distServer)) as typeof import("../../src/server/index.js");
const distRateLimiter = "../../dist/client/rate-limiter.js";
/** The share of the advertised limit the client paces to: the pace an update phase is measured against. */
export const { shareOfAdvertisedLimit } = (await import(
  distRateLimiter
)) as typeof import("../../src/client/rate-limiter.js");
export type RunningServer = Awaited<ReturnType<typeof startServer>>;

export const benchDir = join(dirname(fileURLToPath(import.meta.url)), "..");
export const repoRoot = join(benchDir, "..");
export const resultsDir = join(benchDir, "results");

export const quick = process.env.BENCH_QUICK === "1";
export const sizes = numbersFromEnv("BENCH_SIZES") ?? (quick ? [50, 100] : [50, 100, 200, 400]);
export const runs = Number(process.env.BENCH_RUNS ?? (quick ? 1 : 3));
export const roundsSize = Number(process.env.BENCH_ROUNDS_SIZE ?? (quick ? 50 : 200));
export const rounds = 3;
export const warmUpSize = 10;
export const serviceLimit = 30;
/**
 * The limited server counts any one-second window (sliding), as a service counting per second would: a token bucket
 * lets a burst plus its refill through, twice the limit in one second, and so hides pacing that bursts.
 */
export const serviceLimitCounting = "every-second" as const;
/** Goal: an update phase at the limit within this ratio of its pace (its requests at 95% of the limit). */
export const paceGoal = 1.1;
export const organization = "bench";
export const token = "bench-token.atlasv1.0123456789abcdef";
export const moduleName = "bench";
export const moduleProvider = "aws";
export const operations = ["up", "preview", "refresh", "drift check", "update", "destroy"] as const;
export type Operation = (typeof operations)[number];
export type Variant = "ours" | "floor";
export const goals: Partial<Record<Operation, number>> = { up: 1.15, preview: 1.15, "drift check": 1.0, destroy: 1.1 };
/** What runs against the server that enforces the service's rate limit, in this order. */
export const limitedOperations = ["up", "refresh", "drift check", "destroy"] as const;
export type LimitedOperation = (typeof limitedOperations)[number];

/** The most policies any run declares, the warm-up's included: files and module versions are made for that many. */
export function largestSize(): number {
  return Math.max(...sizes, roundsSize, warmUpSize);
}

export function numbersFromEnv(name: string): number[] | undefined {
  const value = process.env[name];
  return value ? value.split(",").map(Number) : undefined;
}

/**
 * The part of an operation that changes the service, read from the server's request log: from the start of the
 * first request that changes something (not a GET) to the last answer, and the requests in it (reads between the
 * changes included). Null where nothing changed.
 */
export interface Phase {
  ms: number;
  requests: number;
}

export interface Sample {
  size: number;
  run: number;
  operation: Operation;
  variant: Variant;
  ms: number;
  requests: number;
  phase: Phase | null;
  requestsByRoute: Record<string, number>;
  peakProviderRssBytes: number | null;
}

export interface LimitedSample {
  size: number;
  run: number;
  operation: LimitedOperation;
  /** The same operation with the engine's per-step checkpoint skipped (PULUMI_SKIP_CHECKPOINTS=true). */
  checkpointsSkipped: boolean;
  ms: number;
  requests: number;
  rejected: number;
  phase: Phase | null;
  /** The most requests the server took within any one second (sliding, by arrival). */
  busiestSecond: number;
}

/** `up` and `destroy` with the engine's per-step checkpoint turned off (`PULUMI_SKIP_CHECKPOINTS=true`). */
export interface UncheckedSample {
  size: number;
  run: number;
  operation: "up" | "destroy";
  variant: Variant;
  ms: number;
}

export interface StateSize {
  size: number;
  variant: Variant;
  /** Compact JSON of one resource in `pulumi stack export`, averaged by type. */
  bytesPerPolicy: number;
  bytesPerDeprecation: number;
  /** The serialized provider (`__provider`), once. */
  providerBytes: number;
}
