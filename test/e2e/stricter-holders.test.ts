import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TfeClient } from "../../src/client";
import { type RunningServer, startServer } from "../../src/server";
import { PulumiProject } from "./pulumi-project";

// Review of issue 51 under the real engine (TypeScript, the dynamic providers): a raise that meets a change of the
// policy's holders in the same preview. Each resource reads the other's side as the service holds it now, so:
// - a policy raised while its set's policyIds take it in: "reaches no workspace: it blocks no run", the set silent;
// - a policy raised while the set that holds it is widened: the policy reads the set's old scope, the set reads the
//   member's old (advisory) level and says "holds no blocking policy: it blocks no run more".
// The truth, from the seed: each change would stop a run that failed the policy at advisory. With
// tfe:requireNoBlockedRuns the preview must fail; it passes.

const organization = "acme";
const token = "review51-engine-token-0123456789";
const ws = { a: "ws-ReviewEngA000001", b: "ws-ReviewEngB000001", c: "ws-ReviewEngC000001" };
const daysAgo = (days: number) => new Date(Date.now() - days * 24 * 3600 * 1000).toISOString();

const program = (after: boolean) =>
  [
    'const { Policy, PolicySet } = require("pulumi-tfe-governance");',
    `const joined = new Policy("joined", { code: "main = rule { true }\\n", enforcementLevel: "${after ? "hard-mandatory" : "advisory"}" });`,
    `new PolicySet("holder", { policyIds: ${after ? "[joined.policyId]" : "[]"}, workspaceIds: ["${ws.a}"] });`,
    `const widened = new Policy("widened", { code: "main = rule { true }\\n", enforcementLevel: "${after ? "hard-mandatory" : "advisory"}" });`,
    `new PolicySet("widening", { policyIds: [widened.policyId], workspaceIds: ${JSON.stringify(after ? [ws.b, ws.c] : [ws.b])} });`,
  ].join("\n");

describe("review 51 under the real engine: a raise and its holders changed in one preview", () => {
  let server: RunningServer;
  let client: TfeClient;
  let project: PulumiProject | undefined;

  beforeAll(async () => {
    server = await startServer({
      seed: {
        organizations: [{ name: organization, plus: true }],
        tokens: [{ token, organizations: [organization] }],
        workspaces: [
          { id: ws.a, organization, name: "alpha" },
          { id: ws.b, organization, name: "bravo" },
          { id: ws.c, organization, name: "charlie" },
        ],
        runs: [
          {
            id: "run-ReviewEngA1",
            workspace: ws.a,
            createdAt: daysAgo(2),
            policyResults: [{ policySet: "holder", policy: "joined", level: "advisory", status: "failed" }],
          },
          {
            id: "run-ReviewEngB1",
            workspace: ws.b,
            createdAt: daysAgo(3),
            policyResults: [{ policySet: "widening", policy: "widened", level: "advisory", status: "passed" }],
          },
          {
            id: "run-ReviewEngC1",
            workspace: ws.c,
            createdAt: daysAgo(4),
            policyResults: [{ policySet: "widening", policy: "widened", level: "advisory", status: "failed" }],
          },
        ],
      },
    });
    client = new TfeClient({ address: server.url, token, rateLimit: false });
  }, 60_000);

  afterAll(async () => {
    await client?.close();
    await server?.close();
    await project?.dispose();
  });

  it("refuses both raises under tfe:requireNoBlockedRuns, saying no 'blocks no run'", async () => {
    project = await PulumiProject.create({
      name: "review51-engine",
      files: { "index.js": program(false) },
      config: { "tfe:address": server.url, "tfe:organization": organization },
      secrets: { "tfe:token": token },
    });
    await project.up();
    await project.writeFile("index.js", program(true));
    await project.run(["config", "set", "tfe:requireNoBlockedRuns", "true"]);
    const preview = await project.run(["preview"], { allowFailure: true });
    const text = preview.output.replace(/\s+/g, " ");
    const claimsOfNone = [
      ...text.matchAll(
        // A claim scoped to the sets that hold a policy now ("... blocked in the workspaces of the sets that hold it
        // now") is true of them; the set of the same update that takes it in or widens says the rest.
        /(policy (?:set )?"[^"]+"[^:]*?(?:reaches no workspace: it blocks no run|holds no blocking policy: it blocks no run more|: no run in the last 30 days would have been blocked \())/g,
      ),
    ].map((match) => match[1]);
    expect({ code: preview.code === 0 ? "passed" : "refused", claimsOfNone }).toEqual({
      code: "refused",
      claimsOfNone: [],
    });
  }, 300_000);
});
