import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";
import EngineTestsFirst from "./test/sequencer";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    pool: "forks",
    // Vitest's default is one file at a time less than the machine's cores: one on a two-core runner. Much of an
    // engine test's time is a chain of processes (the CLI, a language host, a provider) waiting on each other, on a
    // paced server or a retry's delay, so one file more than the cores keeps them busy (two files at a time left a
    // fifth of two cores idle). TEST_WORKERS overrides it.
    maxWorkers: Number(process.env.TEST_WORKERS) || availableParallelism() + 1,
    sequence: { sequencer: EngineTestsFirst },
    // A test that starts processes (npm, tsc, the engine) waits for the machine's other file too.
    testTimeout: 120_000,
    hookTimeout: 300_000,
    reporters: ["default"],
  },
});
