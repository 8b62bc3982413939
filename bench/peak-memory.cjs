// Loaded into every Node process of a benchmarked Pulumi run through NODE_OPTIONS=--require (see bench/engine.mts).
// In the dynamic provider's process (and the plugin's, bench/plugin.mts) it records the peak resident set size into
// BENCH_PEAK_MEMORY_DIR/<pid>, again and again: the engine may kill the process at the end without an exit event, so the last write must be recent.
const { writeFileSync } = require("node:fs");
const { join } = require("node:path");

const dir = process.env.BENCH_PEAK_MEMORY_DIR;
if (dir && /dynamic-provider|plugin[\\/]main\.js$/.test(process.argv[1] ?? "")) {
  const file = join(dir, String(process.pid));
  const record = () => writeFileSync(file, String(process.resourceUsage().maxRSS * 1024));
  setInterval(record, 100).unref();
  process.on("exit", record);
}
