import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TfeClient } from "../../src/client";
import type { RunningServer } from "../../src/server";
import { EngineDriver } from "../resources/engine-driver";
import {
  declaredResources,
  enforcedByResource,
  initialProgram,
  oracleServer,
  type Program,
  programArguments,
} from "../resources/oracle-program";
import type { GitRepository } from "../vcs-repository";
import { PulumiProject } from "./pulumi-project";
import { stackState } from "./service-and-state";

// The oracle (test/resources/governance-oracle.test.ts) drives the providers as the engine does, thousands of times
// a run; this test is what makes that a fair stand-in: the same steps, under the real Pulumi engine and Node.js
// language host and under the driver, each against a server of its own, must end each step with the same outcome
// (applied or refused) and leave the service enforcing the same.

const token = "engine-driver-token-0123456789";

/** The oracle's program as a Pulumi program: the arguments come from model.json, which each step writes. */
const program = `
const { Policy, PolicySet } = require("pulumi-tfe-governance");
const model = require("./model.json");
const setOfPolicies = new PolicySet("set-of-policies", model.setOfPolicies);
new Policy("policy", { ...model.policy, policySetIds: model.policyInSet ? [setOfPolicies.policySetId] : [] });
new PolicySet("folder-set", model.folderSet);
new PolicySet("terraform-policy", model.terraformPolicy);
`;

interface Side {
  server: RunningServer;
  client: TfeClient;
  library: GitRepository;
  folder: string;
  tfFolder: string;
  /** Applies `program`: whether `up` went through. */
  up(program: Program): Promise<boolean>;
  /** Resource name by the service's id. */
  names(): Promise<Map<string, string>>;
}

async function serverWithLibrary() {
  const { server, library } = await oracleServer(token);
  return { library, server, client: new TfeClient({ address: server.url, token, rateLimit: false }) };
}

/** What each target enforces, by the resource that owns each policy: the same on both sides whatever the ids. */
async function enforced(side: Side): Promise<Record<string, number>> {
  return Object.fromEntries(await enforcedByResource(side.server.url, await side.names()));
}

type Step = { edit: (program: Program) => Program } | { outside: (side: Side) => Promise<void> };

const steps: [string, Step][] = [
  ["a level lowered", { edit: (p) => ({ ...p, policy: { ...p.policy, level: "advisory" } }) }],
  ["the same, approved", { edit: (p) => ({ ...p, approve: true, policy: { ...p.policy, level: "advisory" } }) }],
  ["the level raised outside", { outside: raisePolicyOutside }],
  [
    "a rename that would replace it at the state's level",
    { edit: (p) => ({ ...p, policy: { ...p.policy, name: "p1-renamed" } }) },
  ],
  [
    "the folder's levels raised",
    {
      edit: (p) => ({
        ...p,
        folderSet: {
          ...p.folderSet,
          content: { kind: "sentinel", levels: { x: "hard-mandatory", y: "hard-mandatory" } },
        },
      }),
    },
  ],
  [
    "a workspace dropped from the folder's set",
    { edit: (p) => ({ ...p, folderSet: { ...p.folderSet, workspaces: [] } }) },
  ],
  [
    "the folder read from version control, without a checkout",
    { edit: (p) => ({ ...p, folderSet: { ...p.folderSet, source: "vcs-plain" } }) },
  ],
  [
    "the same, approved",
    { edit: (p) => ({ ...p, approve: true, folderSet: { ...p.folderSet, source: "vcs-plain" } }) },
  ],
  [
    "the Terraform policy's level lowered by its parameter",
    { edit: (p) => ({ ...p, terraformPolicy: { ...p.terraformPolicy, level: "advisory" } }) },
  ],
  ["the set of policies made global", { edit: (p) => ({ ...p, setOfPolicies: { ...p.setOfPolicies, global: true } }) }],
];

async function raisePolicyOutside(side: Side) {
  for (const [id, name] of await side.names()) {
    if (name === "policy") await side.client.policies.update(id, { enforcementLevel: "hard-mandatory" });
  }
}

describe("the engine driver against the real engine", () => {
  let engine: Side;
  let driver: Side;
  let project: PulumiProject;

  beforeAll(async () => {
    const real = await serverWithLibrary();
    project = await PulumiProject.create({
      name: "tfe-governance-engine-driver",
      files: { "index.js": program, "model.json": "{}" },
      config: { "tfe:address": real.server.url },
      secrets: { "tfe:token": token },
    });
    engine = {
      ...real,
      folder: join(project.dir, "folder"),
      tfFolder: join(project.dir, "terraform-policy"),
      up: async (model) => {
        const args = programArguments(model, engine);
        writeFileSync(join(project.dir, "model.json"), JSON.stringify(args));
        return (await project.run(["up", "--yes"], { allowFailure: true })).code === 0;
      },
      names: async () =>
        new Map(
          (await stackState(project)).resources.map((resource) => [
            resource.id ?? "",
            resource.urn.split("::").pop() ?? "",
          ]),
        ),
    };
    const stood = await serverWithLibrary();
    const engineDriver = new EngineDriver(stood.client);
    driver = {
      ...stood,
      folder: join(project.dir, "driver-folder"),
      tfFolder: join(project.dir, "driver-terraform-policy"),
      up: async (model) => {
        const args = programArguments(model, driver);
        const outcome = await engineDriver.up(declaredResources(args));
        return outcome.applied;
      },
      names: async () => new Map([...engineDriver.state].map(([name, recorded]) => [recorded.id, name])),
    };
    for (const side of [engine, driver]) {
      mkdirSync(side.folder, { recursive: true });
      mkdirSync(side.tfFolder, { recursive: true });
    }
  }, 120_000);

  afterAll(async () => {
    await project?.dispose();
    for (const side of [engine, driver]) {
      await side?.client.close();
      await side?.server.close();
      side?.library.remove();
    }
  });

  it("ends every step with the same outcome, and the service enforcing the same", async () => {
    let model: Program = initialProgram;
    expect(await engine.up(model)).toBe(true);
    expect(await driver.up(model)).toBe(true);
    expect(await enforced(driver)).toEqual(await enforced(engine));
    const outcomes: string[] = [];
    for (const [label, step] of steps) {
      if ("outside" in step) {
        await step.outside(engine);
        await step.outside(driver);
      } else {
        const next = step.edit(model);
        const [real, stood] = [await engine.up(next), await driver.up(next)];
        outcomes.push(`${label}: ${real ? "applied" : "refused"}`);
        expect(stood, `${label}: the driver's outcome`).toBe(real);
        // A refused change is backed out, as a user would; an approval lasts one run.
        model = real ? { ...next, approve: false } : model;
      }
      expect(await enforced(driver), `${label}: what the service enforces`).toEqual(await enforced(engine));
    }
    // The steps met both outcomes: a comparison of nothing but refusals would prove little.
    expect(outcomes).toEqual([
      "a level lowered: refused",
      "the same, approved: applied",
      "a rename that would replace it at the state's level: refused",
      "the folder's levels raised: applied",
      "a workspace dropped from the folder's set: refused",
      "the folder read from version control, without a checkout: refused",
      "the same, approved: applied",
      "the Terraform policy's level lowered by its parameter: refused",
      "the set of policies made global: applied",
    ]);
  }, 600_000);
});
