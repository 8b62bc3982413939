import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TfeClient } from "../../src/client";
import type { RunningServer } from "../../src/server";
import { startSeededServer } from "../seeded-server";
import { PulumiProject } from "./pulumi-project";
import { policiesOnService } from "./service-and-state";

// A stack whose address moves to another service (tfe:address changed, or TFE_ADDRESS in CI) under the real engine:
// the other service would answer 404 for every id, and a refresh would drop everything from state while the
// policies stay in force on the first service, owned by no one. Every command is refused once the new address
// answers 404 for the stack's objects (asked by id, read only), naming both addresses; with the address set back,
// nothing has changed. The same service at a new address (test/e2e/credentials-rotation.test.ts) goes on.

const organization = "acme";
const token = "service-move-token-0123456789abcdef";
const modules = [{ name: "vpc", provider: "aws", versions: ["1.0.0", "1.1.0"] }];

const program = [
  'const { ModuleVersionDeprecation, Policy, PolicySet } = require("pulumi-tfe-governance");',
  'const guard = new Policy("guard", { enforcementLevel: "hard-mandatory", code: "main = rule { true }\\n" });',
  'new PolicySet("baseline", { global: true, policyIds: [guard.policyId] });',
  'new ModuleVersionDeprecation("vpc-1.0.0", { moduleName: "vpc", moduleProvider: "aws", version: "1.0.0",',
  '  reason: "Use 1.1.0." });',
].join("\n");

describe("a stack whose service address moves, under the real engine", () => {
  let first: RunningServer;
  let second: RunningServer;
  let client: TfeClient;
  let project: PulumiProject;

  beforeAll(async () => {
    [first, second] = await Promise.all([
      startSeededServer({ organization, token, modules }),
      startSeededServer({ organization, token, modules }),
    ]);
    client = new TfeClient({ address: first.url, token, rateLimit: false });
    project = await PulumiProject.create({
      name: "tfe-service-move",
      files: { "index.js": program },
      config: { "tfe:address": first.url, "tfe:organization": organization },
      secrets: { "tfe:token": token },
    });
    await project.up();
  }, 240_000);

  afterAll(async () => {
    await project?.dispose();
    await client?.close();
    await Promise.all([first?.close(), second?.close()]);
  });

  it("refuses preview, up and a refresh against another service, writing nothing there, naming both", async () => {
    const before = await project.exportState();
    await project.run(["config", "set", "tfe:address", second.url]);
    second.requestLog.clear();
    for (const command of [["preview"], ["up", "--yes"], ["preview", "--refresh"]]) {
      const refused = await project.run(command, { allowFailure: true });
      expect(refused.code, command.join(" ")).not.toBe(0);
      expect(refused.output).toContain(`is held by the service at ${first.url}`);
      expect(refused.output).toContain(`this run talks to ${second.url}`);
      expect(refused.output).toContain("pulumi state delete");
    }
    // `pulumi refresh` alone configures the provider as the state's provider resource recorded it: it reads the
    // first service, which holds everything, and drops nothing.
    await project.run(["refresh", "--yes"], { allowFailure: true });
    // The other service was asked for each object by id (an answer would have meant the same service, moved) and
    // answered 404: nothing was written there, and the stack still owns all it made.
    expect(second.requestLog.entries().filter((entry) => entry.method !== "GET")).toEqual([]);
    expect(second.requestLog.entries().filter((entry) => entry.path.startsWith("/api/v2/organizations"))).toEqual([]);
    const after = JSON.parse(await project.exportState()).deployment.resources.map((r: { urn: string }) => r.urn);
    expect(after).toEqual(JSON.parse(before).deployment.resources.map((r: { urn: string }) => r.urn));
    expect((await policiesOnService(client, organization)).map((policy) => policy.name)).toEqual(["guard"]);
  }, 240_000);

  it("with the address set back, has nothing to change", async () => {
    await project.run(["config", "set", "tfe:address", first.url]);
    const again = await project.run(["preview", "--refresh", "--expect-no-changes"], { allowFailure: true });
    expect(again.code, again.output).toBe(0);
  }, 240_000);
});
