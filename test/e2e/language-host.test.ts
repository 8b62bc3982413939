import { readdir, readFile, readlink } from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { PulumiProject } from "./pulumi-project";

// Which Node.js language host runs the programs of the end-to-end tests, and what is left behind when one fails.

let project: PulumiProject | undefined;
afterEach(async () => {
  await project?.dispose();
  project = undefined;
});

const createProject = async (program: string) => {
  project = await PulumiProject.create({ name: "language-host", files: { "index.js": program }, config: {} });
  return project;
};

it("the engine launches Pulumi's own Node.js language host, read from the engine's log", async () => {
  const run = await (await createProject("exports.answer = 42;\n")).run(["preview"]);

  expect(run.languageHost?.mainPackage).toMatch(/^github\.com\/pulumi\/pulumi\/sdk\/.*pulumi-language-nodejs/);
  expect(run.languageHost?.module).toMatch(/^github\.com\/pulumi\/pulumi\/sdk\//);
});

/** Processes (besides this test's) whose working directory or command line is inside `dir`. */
async function processesIn(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const pid of (await readdir("/proc")).filter((name) => /^\d+$/.test(name))) {
    const cwd = await readlink(`/proc/${pid}/cwd`).catch(() => "");
    const commandLine = (await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "")).replaceAll("\0", " ");
    if (cwd.startsWith(dir) || commandLine.includes(dir)) found.push(`${pid} ${commandLine}`);
  }
  return found;
}

/** Waits a bounded while for processes that are still exiting, then reports those that are not. */
async function processesLeftIn(dir: string): Promise<string[]> {
  let left = await processesIn(dir);
  for (let attempt = 0; attempt < 20 && left.length > 0; attempt++) {
    await sleep(250);
    left = await processesIn(dir);
  }
  return left;
}

describe.runIf(process.platform === "linux")("a failed preview leaves no process running", () => {
  it.each([
    ["the program throws", 'require("@pulumi/pulumi");\nthrow new Error("the program failed on purpose");\n'],
    [
      "a provider rejects while the program still has work pending",
      [
        'const pulumi = require("@pulumi/pulumi");',
        'const provider = { async check() { throw new Error("check rejects on purpose"); }, async create() { return { id: "x" }; } };',
        'new pulumi.dynamic.Resource(provider, "rejected", {});',
        "setTimeout(() => {}, 120_000);",
        "",
      ].join("\n"),
    ],
  ])("when %s", async (_, program) => {
    const failing = await createProject(program);
    const run = await failing.run(["preview"], { allowFailure: true });

    expect(run.code).not.toBe(0);
    expect(run.output).toMatch(/on purpose/);
    expect(run.languageHost).toBeDefined();
    expect(await processesLeftIn(failing.dir)).toEqual([]);
  });
});
