// The engine benchmark's results: the table (bench/results/engine.md and docs/performance.md), the JSON and the plot.
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type Chart, renderChart } from "./chart.mts";
import { log } from "./projects.mts";
import {
  goals,
  type LimitedSample,
  limitedOperations,
  type Operation,
  operations,
  type Phase,
  paceGoal,
  repoRoot,
  resultsDir,
  roundsSize,
  runs,
  type Sample,
  type StateSize,
  serviceLimit,
  shareOfAdvertisedLimit,
  sizes,
  type UncheckedSample,
  type Variant,
} from "./settings.mts";

export interface Spread {
  median: number;
  min: number;
  max: number;
}

export function spread(values: number[]): Spread {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
  return { median, min: sorted[0]!, max: sorted[sorted.length - 1]! };
}

/** The least-squares line through the points, and the largest distance of a point from it relative to the point. */
export function straightLine(points: { size: number; ms: number }[]): {
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

export const seconds = (ms: number) => (ms / 1000).toFixed(2);
export const describeSpread = (value: Spread) =>
  `${seconds(value.median)} (${seconds(value.min)}–${seconds(value.max)})`;
export const kilobytes = (bytes: number) => `${(bytes / 1024).toFixed(2)} KB`;

export function environment(): string {
  return `Node ${process.versions.node}, ${process.platform}/${process.arch}; ${runs} run(s) per N, interleaved`;
}

export async function writeResults(results: {
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
  const limitedWithCheckpoints = limitedSamples.filter((s) => !s.checkpointsSkipped);
  for (const size of sizes) {
    for (const operation of limitedOperations) {
      const matching = limitedWithCheckpoints.filter((s) => s.size === size && s.operation === operation);
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
  lines.push(...updatePhaseTable(samples, limitedSamples));
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
  await updatePerformancePage(table);
  process.stdout.write(`${table}\n`);
}

/**
 * The update phase of each change at the limit beside its pace (see {@link Phase}), with what the server counted in
 * its busiest second; and the same phase with no limit, and at the limit with the engine's checkpoints skipped, which
 * say where the time goes: the engine, or the pacing.
 */
function updatePhaseTable(samples: Sample[], limitedSamples: LimitedSample[]): string[] {
  const pacePerSecond = serviceLimit * shareOfAdvertisedLimit;
  const lines = [
    "",
    `The update phase of each change at the limit: from the first request that changes something to the last answer, ` +
      `as the server logs them. Its pace: its requests at ${Math.round(shareOfAdvertisedLimit * 100)}% of the limit ` +
      `(${pacePerSecond} per second), what the client keeps to. Goal: within ${paceGoal}x of the pace, and no ` +
      `second over the limit: the server counts any one-second window (sliding, by arrival; its busiest is shown), ` +
      `as a service counting per second would. The same phase with no limit (the server above) is what the engine ` +
      "and the provider allow with no pacing at all; with the engine's per-step checkpoint skipped, what pacing " +
      "allows once the engine keeps up: where the first is above the pace, the engine, not the pacing, sets the time.",
    "",
    "| N | operation | update phase | requests | pace | phase / pace | the same, no limit | at the limit, checkpoints skipped | busiest second | 429s answered (retried) |",
    "|---|---|---|---|---|---|---|---|---|---|",
  ];
  const phaseSpread = (phases: (Phase | null)[]) => {
    const known = phases.filter((phase): phase is Phase => phase !== null);
    return known.length ? spread(known.map((phase) => phase.ms)) : undefined;
  };
  for (const size of sizes) {
    for (const operation of ["up", "destroy"] as const) {
      const limited = limitedSamples.filter((s) => s.size === size && s.operation === operation);
      const withCheckpoints = limited.filter((s) => !s.checkpointsSkipped);
      const phase = phaseSpread(withCheckpoints.map((s) => s.phase));
      if (!phase) continue;
      const requests = spread(withCheckpoints.map((s) => s.phase?.requests ?? 0)).median;
      const pace = (requests / pacePerSecond) * 1000;
      const ratio = phase.median / pace;
      const unlimited = phaseSpread(
        samples.filter((s) => s.size === size && s.operation === operation && s.variant === "ours").map((s) => s.phase),
      );
      const skipped = limited.filter((s) => s.checkpointsSkipped);
      const skippedPhase = phaseSpread(skipped.map((s) => s.phase));
      const skippedRatio = skippedPhase
        ? ` (${(skippedPhase.median / ((spread(skipped.map((s) => s.phase?.requests ?? 0)).median / pacePerSecond) * 1000)).toFixed(2)}x)`
        : "";
      lines.push(
        `| ${size} | ${operation} | ${describeSpread(phase)} | ${requests} | ${seconds(pace)} | ` +
          `${ratio.toFixed(2)}x (goal ${paceGoal}x: ${ratio <= paceGoal ? "met" : "missed"}) | ` +
          `${unlimited ? describeSpread(unlimited) : "–"} | ${skippedPhase ? describeSpread(skippedPhase) : "–"}${skippedRatio} | ` +
          `${limited.map((s) => s.busiestSecond).join(", ")} of ${serviceLimit} | ${limited.map((s) => s.rejected).join(", ")} |`,
      );
    }
  }
  return lines;
}

export const tableStart = "<!-- bench:engine:start -->";
export const tableEnd = "<!-- bench:engine:end -->";

/** Puts the latest table between docs/performance.md's markers, so that page and bench/results never disagree. */
export async function updatePerformancePage(table: string): Promise<void> {
  const file = join(repoRoot, "docs", "performance.md");
  const text = await readFile(file, "utf8");
  const from = text.indexOf(tableStart);
  const to = text.indexOf(tableEnd);
  if (from < 0 || to < from) {
    log("docs/performance.md has no bench:engine markers; left as is");
    return;
  }
  await writeFile(file, `${text.slice(0, from + tableStart.length)}\n${table}\n${text.slice(to)}`);
}
