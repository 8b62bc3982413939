import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import * as pulumi from "@pulumi/pulumi";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Policy } from "../../src/resources/policy";
import { providerSource } from "../../src/resources/shim";
import { startSeededServer } from "../seeded-server";

const run = promisify(execFile);
const repoRoot = resolve(__dirname, "..", "..");
const token = "shim-token-must-never-be-serialized";
const organization = "acme";

// What Pulumi stores in state for each resource (twice: in inputs and outputs): the provider's text. It must stay
// small, hold no secret, and work on its own in a new process, loaded the way the engine's dynamic-provider host
// loads it (require-from-string, resolving modules from the program's directory).
describe.each(["Policy", "ModuleVersionDeprecation"] as const)("the serialized %s provider", (type) => {
  let text: string;
  let server: Awaited<ReturnType<typeof startSeededServer>>;

  beforeAll(async () => {
    process.env.TFE_TOKEN = token;
    text = providerSource(type);
    server = await startSeededServer({
      organization,
      token,
      modules: [{ name: "vpc", provider: "aws", versions: ["1.0.0"] }],
    });
  });

  afterAll(async () => {
    delete process.env.TFE_TOKEN;
    await server.close();
  });

  it("is at most 128 bytes and holds no token", () => {
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(128);
    expect(text).not.toContain(token);
    expect(text).not.toMatch(/TFE_TOKEN|tfe:token/);
  });

  it("runs in a fresh Node process, loading the installed library", async () => {
    const dir = await mkdtemp(join(tmpdir(), "serialized-provider-"));
    try {
      const providerFile = join(dir, "provider.js");
      await writeFile(providerFile, text);
      const inputs =
        type === "Policy"
          ? { organization, name: "from-a-fresh-process", code: "main = rule { true }", enforcementLevel: "advisory" }
          : { organization, moduleName: "vpc", moduleProvider: "aws", version: "1.0.0", reason: "superseded" };
      const driver = `
        const text = require("node:fs").readFileSync(${JSON.stringify(providerFile)}, "utf8");
        const provider = require("require-from-string")(text).handler();
        const config = { "tfe:address": ${JSON.stringify(server.url)}, "tfe:token": ${JSON.stringify(token)} };
        (async () => {
          await provider.configure({ config: { get: (key) => config[key] } });
          const checked = await provider.check({}, ${JSON.stringify(inputs)});
          if (checked.failures.length) throw new Error(JSON.stringify(checked.failures));
          const created = await provider.create(checked.inputs);
          await provider.delete(created.id, created.outs);
          console.log(JSON.stringify(created.id));
        })().catch((error) => { console.error(error.message); process.exit(1); });`;
      const { stdout } = await run(process.execPath, ["-e", driver], {
        cwd: repoRoot,
        env: { ...process.env, TFE_TOKEN: "" },
      });
      const id = JSON.parse(stdout) as string;
      expect(id).toEqual(type === "Policy" ? expect.stringMatching(/^pol-/) : "acme/vpc/aws/1.0.0");
      const methods = server.requestLog.entries().map((entry) => entry.method);
      expect(methods).toContain(type === "Policy" ? "POST" : "PATCH");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("registering a resource through the shim", () => {
  beforeAll(() => {
    pulumi.runtime.setMocks(
      { newResource: async (args) => ({ id: `${args.name}-id`, state: args.inputs }), call: () => ({}) },
      "project",
      "stack",
      false,
    );
  });

  it("leaves Error.stackTraceLimit as it found it", () => {
    const before = Error.stackTraceLimit;
    new Policy("limit-kept", { organization, code: "main = rule { true }", enforcementLevel: "advisory" });
    expect(Error.stackTraceLimit).toBe(before);
  });

  it("still gives an error thrown while registering a stack that leads to the program", () => {
    const before = Error.stackTraceLimit;
    const notAResource = {} as pulumi.Resource;
    let thrown: unknown;
    try {
      new Policy("bad-parent", { organization, code: "x", enforcementLevel: "advisory" }, { parent: notAResource });
    } catch (error) {
      thrown = error;
    }
    expect((thrown as Error).message).toMatch(/parent is not a valid Resource/);
    expect((thrown as Error).stack).toContain("shim.test.ts");
    expect(Error.stackTraceLimit).toBe(before);
  });
});
