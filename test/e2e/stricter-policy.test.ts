import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TfeClient } from "../../src/client";
import { type RunningServer, startServer } from "../../src/server";
import { installPlugin } from "./plugin-artifacts";
import { PulumiProject } from "./pulumi-project";

// Before governance gets stricter, preview says whom it would stop, from the service's own recent results: under the
// real engine, a TypeScript program (the dynamic providers) and a YAML program (the plugin) raise policies from
// advisory to hard-mandatory. One failed seeded runs of two workspaces: preview names them and their runs. Another
// passed every run: preview says none would have been blocked. A third is held by its set (PolicySet.policyIds, the
// one-owner way): its raise reads the sets the service holds it in, and names the runs too. Nothing is written.

const organization = "acme";
const token = "stricter-policy-token-0123456789";
const setId = "polset-StricterBase001";
const daysAgo = (days: number) => new Date(Date.now() - days * 24 * 3600 * 1000).toISOString();
const failed = (policy: string) => ({ policySet: "baseline", policy, level: "advisory", status: "failed" as const });
const passed = (policy: string) => ({ ...failed(policy), status: "passed" as const });
const workspaces = { payments: "ws-StricterPay000001", web: "ws-StricterWeb000001", data: "ws-StricterData00001" };

const typescript = (level: string, allowStricter = false) =>
  [
    'const { Policy, PolicyFolder, PolicySet } = require("pulumi-tfe-governance");',
    // Held by its set, which declares it: the policy itself names no set.
    `const held = new Policy("held", { code: "main = rule { true }\\n", enforcementLevel: "${level}", allowStricter: ${allowStricter} });`,
    `new PolicySet("holder", { policyIds: [held.policyId], workspaceIds: ${JSON.stringify(Object.values(workspaces))} });`,
    `new PolicyFolder("folder", { directory: "folder", policySetIds: ["${setId}"], allowStricter: ${allowStricter} });`,
    ...["require-tags", "log-only"].map(
      (name) =>
        `new Policy(${JSON.stringify(name)}, { code: "main = rule { true }\\n", enforcementLevel: "${level}", ` +
        `policySetIds: ["${setId}"], allowStricter: ${allowStricter} });`,
    ),
    // Blocking from the start, in no set until the raise: it joins the set then.
    `new Policy("joiner", { code: "main = rule { true }\\n", enforcementLevel: "hard-mandatory", ` +
      `policySetIds: ${level === "advisory" ? "[]" : `["${setId}"]`}, allowStricter: ${allowStricter} });`,
  ].join("\n");

const folderHcl = (level: string, name = "folder-tags") => `policy "${name}" {\n  enforcement_level = "${level}"\n}\n`;

/**
 * Sets made stricter, and resources new at a blocking level: a level raised in a set's own folder, a set's scope
 * widened to a workspace, a new Policy and a new PolicySet that block from their first preview.
 */
const sets = (step: "before" | "after" | "newcomer only") =>
  [
    'const { Policy, PolicySet } = require("pulumi-tfe-governance");',
    `new PolicySet("scoped", { directory: "scoped", workspaceIds: ["${workspaces.payments}"] });`,
    `new PolicySet("wide", { directory: "wide", workspaceIds: ${JSON.stringify(
      step === "after" ? [workspaces.payments, workspaces.data] : [workspaces.payments],
    )} });`,
    ...(step === "before"
      ? []
      : [
          `new Policy("newcomer", { code: "main = rule { true }\\n", enforcementLevel: "hard-mandatory", policySetIds: ["${setId}"] });`,
        ]),
    ...(step === "after"
      ? [`new PolicySet("fresh", { directory: "fresh", workspaceIds: ["${workspaces.web}"] });`]
      : []),
  ].join("\n");

const yaml = (level: string) => `name: tfegov-stricter
runtime: yaml
resources:
  yaml-held:
    type: tfegov:index:Policy
    properties:
      code: "main = rule { true }\\n"
      enforcementLevel: ${level}
  yaml-holder:
    type: tfegov:index:PolicySet
    properties:
      policyIds:
        - \${yaml-held.policyId}
      workspaceIds: ${JSON.stringify(Object.values(workspaces))}
${["yaml-require-tags", "yaml-log-only"]
  .map(
    (name) => `  ${name}:
    type: tfegov:index:Policy
    properties:
      code: "main = rule { true }\\n"
      enforcementLevel: ${level}
      policySetIds:
        - ${setId}
`,
  )
  .join("")}variables:
  results:
    fn::invoke:
      function: tfegov:index:listPolicyResults
      arguments:
        policy: yaml-require-tags
outputs:
  failedRuns: \${results.items}
`;

describe("a stricter level, previewed against the runs it would have blocked", () => {
  let server: RunningServer;
  let client: TfeClient;
  const projects: PulumiProject[] = [];

  beforeAll(async () => {
    server = await startServer({
      seed: {
        organizations: [{ name: organization, plus: true }],
        tokens: [{ token, organizations: [organization] }],
        policySets: [{ id: setId, organization, name: "baseline" }],
        workspaces: [
          { id: workspaces.payments, organization, name: "payments-prod" },
          { id: workspaces.web, organization, name: "web" },
          { id: workspaces.data, organization, name: "data" },
        ],
        runs: [
          ...["", "yaml-"].flatMap((prefix, index) => [
            {
              id: `run-Pay${index}0001`,
              workspace: workspaces.payments,
              createdAt: daysAgo(1),
              policyResults: [failed(`${prefix}require-tags`), passed(`${prefix}log-only`)],
            },
            {
              id: `run-Pay${index}0002`,
              workspace: workspaces.payments,
              createdAt: daysAgo(6),
              policyResults: [failed(`${prefix}require-tags`)],
            },
            {
              id: `run-Data${index}0001`,
              workspace: workspaces.data,
              createdAt: daysAgo(3),
              policyResults: [failed(`${prefix}require-tags`), passed(`${prefix}log-only`)],
            },
            // The policy its set holds, failing at advisory in each of the set's three workspaces.
            ...Object.values(workspaces).map((workspace, ordinal) => ({
              id: `run-Held${index}${ordinal}001`,
              workspace,
              createdAt: daysAgo(7 + ordinal),
              policyResults: [{ ...failed(`${prefix}held`), policySet: `${prefix}holder` }],
            })),
          ]),
          // Results of the policies the sets' test makes stricter, each under its own set (a result names its set:
          // a policy of the same name in another set is another policy). The wide set reached data once before.
          {
            id: "run-SetPay0001",
            workspace: workspaces.payments,
            createdAt: daysAgo(2),
            policyResults: [{ ...failed("set-tags"), policySet: "scoped" }],
          },
          {
            id: "run-WideData001",
            workspace: workspaces.data,
            createdAt: daysAgo(4),
            policyResults: [{ ...failed("wide-rule"), policySet: "wide" }, failed("newcomer")],
          },
          {
            id: "run-FreshWeb001",
            workspace: workspaces.web,
            createdAt: daysAgo(5),
            policyResults: [{ ...failed("fresh-rule"), policySet: "fresh" }],
          },
          {
            id: "run-Web0001",
            workspace: workspaces.web,
            createdAt: daysAgo(2),
            policyResults: [
              failed("folder-tags"),
              failed("joiner"),
              ...["log-only", "yaml-log-only"].map((policy) => ({ ...failed(policy), status: "passed" as const })),
            ],
          },
        ],
      },
    });
    client = new TfeClient({ address: server.url, token, rateLimit: false });
    await client.policySets.addToScope(setId, "workspaces", Object.values(workspaces));
  }, 60_000);

  afterAll(async () => {
    await client?.close();
    await server?.close();
    for (const project of projects) await project.dispose();
  });

  const expectNamed = (output: string, prefix: string, runs: [string, string, string], index: number) => {
    const text = output.replace(/\s+/g, " ");
    expect(text).toMatch(
      new RegExp(
        `policy "${prefix}require-tags" at hard-mandatory \\(was advisory\\) would have blocked 3 runs in 2 of 3 ` +
          `workspaces in the last 30 days: payments-prod \\(${runs[0]}, [0-9-]+, failed at advisory; ${runs[1]}, ` +
          `[0-9-]+, failed at advisory\\), data \\(${runs[2]}, [0-9-]+, failed at advisory\\)`,
      ),
    );
    expect(text).toContain(
      `policy "${prefix}log-only" at hard-mandatory (was advisory): no run in the last 30 days would have been ` +
        "blocked in the workspaces of the sets that hold it now (3 of 3 workspaces read whole; it ran in each of " +
        "them that had runs)",
    );
    // Held by its set alone: the sets the service holds it in are read, with their scopes.
    expect(text).toMatch(
      new RegExp(
        `policy "${prefix}held" at hard-mandatory \\(was advisory\\) would have blocked 3 runs in 3 of 3 workspaces ` +
          `in the last 30 days: .*run-Held${index}0001.*run-Held${index}1001.*run-Held${index}2001`,
      ),
    );
  };

  it("in TypeScript: preview names the workspaces and runs a raise would have blocked, and says so where none", async () => {
    const project = await PulumiProject.create({
      name: "tfe-stricter",
      files: {
        "index.js": typescript("advisory"),
        "folder/sentinel.hcl": folderHcl("advisory"),
        "folder/folder-tags.sentinel": "main = rule { true }\n",
      },
      config: { "tfe:address": server.url, "tfe:organization": organization },
      secrets: { "tfe:token": token },
    });
    projects.push(project);
    await project.up();
    await project.writeFile("index.js", typescript("hard-mandatory"));
    await project.writeFile("folder/sentinel.hcl", folderHcl("hard-mandatory"));
    const writes = server.requestLog.entries().filter((entry) => entry.method !== "GET").length;
    const preview = await project.run(["preview"]);
    expectNamed(preview.output, "", ["run-Pay00001", "run-Pay00002", "run-Data00001"], 0);
    // A policy that joins a set at a blocking level: the workspaces of the set it joins.
    expect(preview.output.replace(/\s+/g, " ")).toContain(
      `policy "joiner" at hard-mandatory, joining ${setId}, would have blocked 1 run in 1 of 3 workspaces in the ` +
        "last 30 days: web (run-Web0001, ",
    );
    // A PolicyFolder's block is a Policy: a level raised in its file is read the same way.
    expect(preview.output.replace(/\s+/g, " ")).toMatch(
      /policy "folder-tags" at hard-mandatory \(was advisory\) would have blocked 1 run in 1 of 3 workspaces in the last 30 days: web \(run-Web0001, /,
    );
    expect(server.requestLog.entries().filter((entry) => entry.method !== "GET").length).toBe(writes);

    // A stack that wants no surprise refuses the raise that would have blocked runs, until the resource approves it.
    await project.run(["config", "set", "tfe:requireNoBlockedRuns", "true"]);
    const refused = await project.run(["preview"], { allowFailure: true });
    expect(refused.code).not.toBe(0);
    expect(refused.output).toContain(
      "tfe:requireNoBlockedRuns refuses a stricter change that would have blocked recent runs: set allowStricter: true on this resource",
    );
    await project.writeFile("index.js", typescript("hard-mandatory", true));
    const approved = await project.run(["preview"]);
    expect(approved.output).toContain(
      'policy "require-tags" at hard-mandatory (was advisory) would have blocked 3 runs',
    );
    await project.run(["config", "rm", "tfe:requireNoBlockedRuns"]);
  }, 240_000);

  it("through the plugin, from YAML: the same message under each resource", async () => {
    const project = await PulumiProject.create({
      name: "tfegov-stricter",
      nodeModules: "own",
      files: { "Pulumi.yaml": yaml("advisory") },
      config: { "tfegov:address": server.url, "tfegov:organization": organization },
      secrets: { "tfegov:token": token },
      engineLog: false,
    });
    projects.push(project);
    await installPlugin(project);
    await project.up();
    // The numbers behind the message, for a program that wants them: the function the plugin serves.
    const outputs = JSON.parse((await project.run(["stack", "output", "--json"])).stdout);
    expect(
      (outputs.failedRuns as { runId: string; status: string; workspaceName: string }[])
        .map((result) => `${result.workspaceName} ${result.runId} ${result.status}`)
        .sort(),
    ).toEqual(["data run-Data10001 failed", "payments-prod run-Pay10001 failed", "payments-prod run-Pay10002 failed"]);
    await project.writeFile("Pulumi.yaml", yaml("hard-mandatory"));
    const preview = await project.run(["preview"]);
    expectNamed(preview.output, "yaml-", ["run-Pay10001", "run-Pay10002", "run-Data10001"], 1);
    // A stack that asks for certainty refuses the raise of the set-held policy too, through the plugin.
    await project.run(["config", "set", "tfegov:requireNoBlockedRuns", "true"]);
    const refused = await project.run(["preview"], { allowFailure: true });
    expect(refused.code).not.toBe(0);
    expect(refused.output.replace(/\s+/g, " ")).toMatch(
      /policy "yaml-(held|require-tags)" at hard-mandatory \(was advisory\) would have blocked 3 runs.*tfegov:requireNoBlockedRuns refuses a stricter change that would have blocked recent runs/,
    );
  }, 240_000);

  it("a set made stricter, and a new policy or set that blocks, are said at preview too", async () => {
    const project = await PulumiProject.create({
      name: "tfe-stricter-sets",
      files: {
        "index.js": sets("before"),
        "scoped/sentinel.hcl": folderHcl("advisory", "set-tags"),
        "scoped/set-tags.sentinel": "main = rule { true }\n",
        "wide/sentinel.hcl": folderHcl("hard-mandatory", "wide-rule"),
        "wide/wide-rule.sentinel": "main = rule { true }\n",
        "fresh/sentinel.hcl": folderHcl("hard-mandatory", "fresh-rule"),
        "fresh/fresh-rule.sentinel": "main = rule { true }\n",
      },
      config: { "tfe:address": server.url, "tfe:organization": organization },
      secrets: { "tfe:token": token },
    });
    projects.push(project);
    await project.up();
    await project.writeFile("index.js", sets("after"));
    await project.writeFile("scoped/sentinel.hcl", folderHcl("hard-mandatory", "set-tags"));
    const writes = server.requestLog.entries().filter((entry) => entry.method !== "GET").length;
    const { output } = await project.run(["preview"]);
    const said = (text: string) => expect(output.replace(/\s+/g, " ")).toContain(text);
    said(
      'policy set "scoped" with set-tags at hard-mandatory (was advisory) would have blocked 1 run in 1 of 1 ' +
        "workspaces in the last 30 days: payments-prod (run-SetPay0001, ",
    );
    // Only the workspace the scope newly reaches is read: payments-prod ran the set before.
    said(
      'policy set "wide" widened (wide-rule at hard-mandatory) would have blocked 1 run in 1 of 1 workspaces in the ' +
        "last 30 days: data (run-WideData001, ",
    );
    said(
      'new policy "newcomer" at hard-mandatory would have blocked 1 run in 1 of 3 workspaces in the last 30 days: data (run-WideData001, ',
    );
    said(
      'new policy set "fresh" with fresh-rule at hard-mandatory would have blocked 1 run in 1 of 1 workspaces ' +
        "in the last 30 days: web (run-FreshWeb001, ",
    );
    expect(server.requestLog.entries().filter((entry) => entry.method !== "GET").length).toBe(writes);

    // A stack that wants no surprise refuses each of them (the engine stops at the first it meets), before any write.
    await project.run(["config", "set", "tfe:requireNoBlockedRuns", "true"]);
    const refused = await project.run(["preview"], { allowFailure: true });
    expect(refused.code).not.toBe(0);
    expect(refused.output.replace(/\s+/g, " ")).toMatch(
      /(new )?policy (set )?"(fresh|newcomer|scoped|wide)".* would have blocked 1 run .*tfe:requireNoBlockedRuns refuses a stricter change that would have blocked recent runs: set allowStricter: true on this resource/,
    );
    // A new resource alone is refused at the engine's check, where a create has no diff.
    await project.writeFile("index.js", sets("newcomer only"));
    await project.writeFile("scoped/sentinel.hcl", folderHcl("advisory", "set-tags"));
    const newcomer = await project.run(["preview"], { allowFailure: true });
    expect(newcomer.code).not.toBe(0);
    expect(newcomer.output.replace(/\s+/g, " ")).toContain(
      'new policy "newcomer" at hard-mandatory would have blocked 1 run in 1 of 3 workspaces in the last 30 days: ' +
        "data (run-WideData001, ",
    );
    expect(newcomer.output).toContain("tfe:requireNoBlockedRuns refuses a stricter change");
    expect(server.requestLog.entries().filter((entry) => entry.method !== "GET").length).toBe(writes);
  }, 240_000);
});
