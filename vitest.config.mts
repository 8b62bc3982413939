import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";
import EngineTestsFirst from "./test/sequencer";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    pool: "forks",
    // Vitest's default is one file at a time less than the machine's cores: one on a two-core runner. Most of an
    // engine test's time is a chain of processes (the CLI, a language host, a provider) waiting on each other, so
    // two files at a time keep both cores busy. TEST_WORKERS overrides it.
    maxWorkers: Number(process.env.TEST_WORKERS) || Math.max(2, availableParallelism() - 1),
    sequence: { sequencer: EngineTestsFirst },
    // A test that starts processes (npm, tsc, the engine) waits for the machine's other file too.
    testTimeout: 120_000,
    hookTimeout: 60_000,
    reporters: ["default"],
  },
});
