import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../../src/server";
import { PulumiProject } from "./pulumi-project";

// Issue 39 item 2: what a team reads when the service is down or refuses the token. One message per cause, once
// per run, saying what was tried and what failed; no stack trace; the advice about recorded config only when the
// recorded setting differs from the stack's config of now.

const organization = "acme";
const token = "failure-messages-token-0123456789";
const programSource = readFileSync(`${__dirname}/program/index.js`, "utf8");
const spec = {
  policies: Array.from({ length: 8 }, (_, index) => ({
    resource: `policy-${index}`,
    enforcementLevel: "advisory",
    code: `main = rule { ${index} >= 0 }\n`,
  })),
  deprecations: [{ resource: "vpc-1-0-0", moduleName: "vpc", moduleProvider: "aws", version: "1.0.0", reason: "Old" }],
};

function serve(port = 0, accepted = token): Promise<RunningServer> {
  return startServer({
    port,
    seed: {
      organizations: [{ name: organization, plus: true }],
      tokens: [{ token: accepted, organizations: [organization] }],
      modules: [{ organization, name: "vpc", provider: "aws", versions: ["1.0.0", "1.1.0"] }],
    },
  });
}

/**
 * Every resource's refresh in flight together, whatever the runner's cores: the engine's default parallelism scales
 * with them, and a step not yet started when the first fails is never run, so fewer would fail and be said.
 */
const allAtOnce = ["--parallel", "32"];

/**
 * The distinct messages of `output` that say `needle` in full, each from its request on: the engine may show one
 * message several times (under its resource, in its summary, and once more, prefixed "Preview failed: ", for the
 * step that failed first), but only one request may carry the full text.
 */
function toldInFull(output: string, needle: string): Set<string> {
  const told = new Set<string>();
  for (const line of output.split("\n")) {
    if (!line.includes(needle)) continue;
    const request = line.match(/\b(?:GET|POST|PATCH|PUT|DELETE) \S.*$/);
    told.add(request ? request[0] : line.trim());
  }
  return told;
}

/** How many times `needle` occurs in `text`. */
function count(text: string, needle: string): number {
  return text.split(needle).length - 1;
}

describe("failure messages under the real engine", () => {
  let server: RunningServer;
  let project: PulumiProject;

  beforeAll(async () => {
    server = await serve();
    project = await PulumiProject.create({
      name: "tfe-failure-messages",
      files: { "index.js": programSource, "spec.json": JSON.stringify(spec) },
      config: { "tfe:organization": organization, "tfe:address": server.url },
    });
    await project.run(["config", "set", "--secret", "tfe:token", token]);
    await project.up();
  }, 180_000);

  afterAll(async () => {
    await server?.close().catch(() => undefined);
    await project?.dispose();
  });

  it("a server that is down: the address, its source and the refusal said once; no stack trace, no advice", async () => {
    await server.close();
    const run = await project.run(["refresh", "--yes", ...allAtOnce], { allowFailure: true });
    expect(run.code).not.toBe(0);
    // Nine resources fail alike: the first says it in full, the others name their request and point at it.
    const full = `${server.url} (the address from stack config tfe:address) refused the connection`;
    expect(toldInFull(run.output, full).size).toBe(1);
    expect(count(run.output, "as said in full for")).toBeGreaterThanOrEqual(8);
    expect(run.output).not.toMatch(/\bat .*\.[jt]s:\d+/);
    expect(run.output).not.toContain("TfeConnectionError");
    // The stack's config holds the address Pulumi recorded: the service is down, and no setting is stale.
    expect(run.output).not.toContain("recorded");
  }, 120_000);

  it("a token the service refuses: the 401 said once, with the recorded-token advice once", async () => {
    server = await serve(Number(new URL(server.url).port), "another-token-0123456789");
    const run = await project.run(["refresh", "--yes", ...allAtOnce], { allowFailure: true });
    expect(run.code).not.toBe(0);
    expect(toldInFull(run.output, "the token was not accepted (401)").size).toBe(1);
    expect(toldInFull(run.output, "tfe:token came from the stack config Pulumi recorded").size).toBe(1);
    expect(count(run.output, "as said in full for")).toBeGreaterThanOrEqual(8);
    expect(run.output).not.toMatch(/\bat .*\.[jt]s:\d+/);
    expect(run.output).not.toContain("TfeApiError");
    expect(run.output).not.toContain(token);
  }, 120_000);

  // Issue 52 item 7: the advice to run the program is dropped where the command ran it, and the cause said once.
  it("a token refused under preview --refresh --run-program: the 401 said once, no advice to run what ran", async () => {
    const run = await project.run(["preview", "--refresh", "--run-program"], { allowFailure: true });
    expect(run.code).not.toBe(0);
    expect(toldInFull(run.output, "the token was not accepted (401)").size).toBe(1);
    expect(run.output).not.toContain("recorded at the last");
    expect(run.output).not.toMatch(/run "pulumi (refresh|preview)[^"]*--run-program"/);
  }, 120_000);

  // Issue 52 item 6: a wrong organization names the setting that gives it, and the organization, once.
  it("an organization the service does not have: tfe:organization and its value named, said in full once", async () => {
    // The server as the first up met it, and the token it accepts: only the organization is wrong.
    await server.close().catch(() => undefined);
    server = await serve(Number(new URL(server.url).port));
    await project.run(["config", "set", "--secret", "tfe:token", token]);
    await project.run(["config", "set", "tfe:organization", "acmee"]);
    try {
      const run = await project.run(["preview"], { allowFailure: true });
      expect(run.code).not.toBe(0);
      const full =
        'organization "acmee" does not exist, or this token has no access to it (404). Check the organization\'s name in tfe:organization';
      expect(toldInFull(run.output, full).size).toBe(1);
      expect(run.output).not.toMatch(/not found.*not found/);
      expect(run.output).not.toMatch(/\bat .*\.[jt]s:\d+/);
    } finally {
      await project.run(["config", "set", "tfe:organization", organization]);
    }
  }, 120_000);
});
