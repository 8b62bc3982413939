// What the provider process spends loading this library, module by module, after @pulumi/pulumi (which the
// dynamic-provider host loads first anyway): the numbers behind whether lazy loading, zod's mini entry or a start-up
// snapshot could bring a PolicySet operation nearer the engine's floor. Each figure is the median of 9 fresh node
// processes with the compile cache warm. Nothing is asserted.
//
//   npm run build && node bench/module-load.mts
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const root = join(import.meta.dirname, "..");
const work = mkdtempSync(join(tmpdir(), "module-load-"));
const probe = join(root, ".module-load-probe.cjs");
writeFileSync(
  probe,
  `const { performance } = require("node:perf_hooks");
if (process.argv[2] === "after-pulumi") require("@pulumi/pulumi");
const start = performance.now();
for (const name of process.argv.slice(3)) require(name);
process.stdout.write(String(performance.now() - start));
`,
);
const cache = join(work, "compile-cache");
function median(mode: string, modules: string[]): number {
  const times = Array.from({ length: 9 }, () =>
    Number(
      execFileSync(process.execPath, [probe, mode, ...modules], {
        cwd: root,
        env: { ...process.env, NODE_COMPILE_CACHE: cache },
      }),
    ),
  ).sort((a, b) => a - b);
  return times[4] as number;
}
const rows: [string, string, string[]][] = [
  ["@pulumi/pulumi (the host loads it before any provider)", "alone", ["@pulumi/pulumi"]],
  ["zod", "after-pulumi", ["zod"]],
  ["zod/mini", "after-pulumi", ["zod/mini"]],
  [
    "the wire contract (zod schemas of policies and sets)",
    "after-pulumi",
    ["./dist/contract/policies.js", "./dist/contract/policy-sets.js"],
  ],
  ["the client (contract included, undici not)", "after-pulumi", ["./dist/client/index.js"]],
  ["undici (loaded with the first request)", "after-pulumi", ["undici"]],
  ["the providers (what the engine's host loads)", "after-pulumi", ["./dist/resources/providers.js"]],
  [
    "the providers and undici: an operation that sends a request",
    "after-pulumi",
    ["./dist/resources/providers.js", "undici"],
  ],
];
try {
  console.log("| what is loaded | ms (median of 9) |\n|---|---|");
  for (const [label, mode, modules] of rows) console.log(`| ${label} | ${median(mode, modules).toFixed(1)} |`);
} finally {
  rmSync(probe, { force: true });
  rmSync(work, { recursive: true, force: true });
}
