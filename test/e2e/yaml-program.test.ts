import { execFile, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TfeClient } from "../../src/client";
import type { RunningServer } from "../../src/server";
import { startSeededServer } from "../seeded-server";
import { installPlugin, pathWithoutNode } from "./plugin-artifacts";
import { describePluginLoop, loopAccount, type ProgramOptions } from "./plugin-loop";
import { PulumiProject } from "./pulumi-project";
import { policiesOnService } from "./service-and-state";
import { scanForTokens } from "./token-scan";

// A Pulumi YAML program, run by Pulumi's YAML language host (v1.25.0, from the Go module proxy).

const { seededSetId, secretCodeMarker, workspaceId } = loopAccount;

function program(options: ProgramOptions): string {
  // What `pulumi import` wrote is a YAML document of its own: its resources go under the program's.
  const imported = options.imported ? options.imported.slice(options.imported.indexOf("resources:") + 10) : "";
  return `name: tfegov-yaml
runtime: yaml
config:
  apiKey:
    type: string
    secret: true
resources:
  guard:
    type: tfegov:index:Policy
    properties:
      code:
        fn::secret: |
          # ${secretCodeMarker}
          ${options.rule ?? "main = rule { true }"}
      ${options.typo ? "enforcmentLevel" : "enforcementLevel"}: ${options.level ?? "hard-mandatory"}
      policySetIds:
        - ${seededSetId}
      allowWeakening: ${options.allowWeakening === true}
  uploaded:
    type: tfegov:index:PolicySet
    properties:
      directory: policy-set
      workspaceIds:
        - ${workspaceId}
      parameters:
        region: eu-west-1
        apiKey: \${apiKey}
  folder:
    type: tfegov:index:PolicyFolder
    properties:
      directory: folder
  deprecation:
    type: tfegov:index:ModuleVersionDeprecation
    properties:
      moduleName: vpc
      moduleProvider: aws
      version: 1.0.0
      reason: Use 1.1.0, which closes the default security group.
${imported}variables:
  seeded:
    fn::invoke:
      function: tfegov:index:getPolicySet
      arguments:
        id: ${seededSetId}
outputs:
  guardId: \${guard.id}
  folderPolicies: \${folder.policyIds}
  seededSetName: \${seeded.name}
`;
}

describePluginLoop({
  title: "a YAML",
  projectName: "tfegov-yaml",
  program: (options) => ({ "Pulumi.yaml": program(options) }),
  importCode: { file: "imported.yaml", type: /type: tfegov:(index:)?Policy\n/ },
  argument: (name) => name,
  argumentTrue: (name) => `${name}: true`,
  typoMessage: /enforcmentLevel/,
});

describe("a YAML program's explicit tfegov provider and its stack settings", () => {
  const organization = "acme";
  const token = "yaml-explicit-provider-token-01234";
  let server: RunningServer;
  let client: TfeClient;
  let project: PulumiProject;

  const halfwayMarkers = { description: "halfway-secret-description-5e1a", parameter: "halfway-secret-parameter-77b3" };
  const explicitProgram = (options: {
    level: string;
    allowWeakening: boolean;
    halfway?: { description: string; parameter: string; more?: boolean };
    /** One more policy, on the default provider (the stack's tfegov: settings). */
    late?: boolean;
  }) => `name: tfegov-provider
runtime: yaml
config:
  tfeAddress:
    type: string
  tfeToken:
    type: string
    secret: true
resources:
  governance:
    type: pulumi:providers:tfegov
    properties:
      address: \${tfeAddress}
      organization: ${organization}
      token: \${tfeToken}
      allowWeakening: ${options.allowWeakening}
  guard:
    type: tfegov:index:Policy
    properties:
      code: "main = rule { true }\\n"
      enforcementLevel: ${options.level}
    options:
      provider: \${governance}
  defaulted:
    type: tfegov:index:Policy
    properties:
      code: "main = rule { true }\\n"
${options.late ? '  late:\n    type: tfegov:index:Policy\n    properties:\n      code: "main = rule { true }\\n"\n' : ""}${
  options.halfway
    ? `  halfway:
    type: tfegov:index:PolicySet
    properties:
      description:
        fn::secret: ${options.halfway.description}
      policyIds:
        - \${defaulted.id}
      parameters:
        region: eu-west-1
        apiKey:
          fn::secret: ${options.halfway.parameter}
${options.halfway.more ? "        more:\n          fn::secret: more-secret\n" : ""}    options:
      provider: \${governance}
`
    : ""
}`;

  beforeAll(async () => {
    server = await startSeededServer({ organization, token });
    client = new TfeClient({ address: server.url, token, rateLimit: false });
    project = await PulumiProject.create({
      name: "tfegov-provider",
      nodeModules: "own",
      files: { "Pulumi.yaml": explicitProgram({ level: "hard-mandatory", allowWeakening: false }) },
      config: {
        "tfegov-provider:tfeAddress": server.url,
        "tfegov:address": server.url,
        "tfegov:organization": organization,
      },
      secrets: { "tfegov-provider:tfeToken": token, "tfegov:token": token },
      engineLog: false,
    });
    await installPlugin(project);
  }, 240_000);

  afterAll(async () => {
    await client?.close();
    await server?.close();
    await project?.dispose();
  });

  const levelOf = async (name: string) =>
    (await policiesOnService(client, organization)).find((policy) => policy.name === name)?.enforcementLevel;

  it("fails preview on a Sentinel syntax error in a PolicyFolder's or a PolicySet's file, with no request", async () => {
    await project.writeFile("broken-folder/sentinel.hcl", 'policy "deny" {\n  enforcement_level = "advisory"\n}\n');
    await project.writeFile("broken-folder/deny.sentinel", "main = rule {\n  false\n");
    await project.writeFile(
      "broken-set/sentinel.hcl",
      'module "helpers" {\n  source = "./helpers.sentinel"\n}\n\npolicy "limit" {}\n',
    );
    await project.writeFile("broken-set/helpers.sentinel", "at_most = func(n) {\n  retrun n < 3\n}\n");
    await project.writeFile("broken-set/limit.sentinel", 'import "helpers"\nmain = rule { helpers.at_most(1) }\n');
    const only = (type: string, directory: string) =>
      `name: tfegov-provider\nruntime: yaml\nconfig:\n  tfeAddress:\n    type: string\n  tfeToken:\n    type: string\n    secret: true\nresources:\n  broken:\n    type: tfegov:index:${type}\n    properties:\n      directory: ${directory}\n`;
    try {
      for (const [type, directory, message] of [
        [
          "PolicyFolder",
          "broken-folder",
          'sentinel.hcl:1: policy "deny": deny.sentinel:3:1: syntax error: expected "}" to close the rule opened at 1:13',
        ],
        [
          "PolicySet",
          "broken-set",
          'sentinel.hcl:1: module "helpers": helpers.sentinel:2:10: syntax error: expected "=" or the end of the statement after retrun (did you mean return?), found identifier n',
        ],
      ] as const) {
        await project.writeFile("Pulumi.yaml", only(type, directory));
        server.requestLog.clear();
        const refused = await project.run(["preview"], { allowFailure: true });
        expect(refused.code, refused.output).not.toBe(0);
        expect(refused.output).toContain(message);
        expect(server.requestLog.entries()).toEqual([]);
      }
    } finally {
      await project.writeFile("Pulumi.yaml", explicitProgram({ level: "hard-mandatory", allowWeakening: false }));
    }
  }, 240_000);

  it("deploys through the explicit provider's arguments, its token encrypted", async () => {
    await project.up();
    expect(await levelOf("guard")).toBe("hard-mandatory");
    expect(await levelOf("defaulted")).toBe("soft-mandatory");
    expect((await scanForTokens([token], project, [server])).hits).toEqual([]);
  }, 240_000);

  it("takes allowWeakening from the explicit provider", async () => {
    await project.writeFile("Pulumi.yaml", explicitProgram({ level: "advisory", allowWeakening: false }));
    const refused = await project.run(["preview"], { allowFailure: true });
    expect(refused.code).not.toBe(0);
    expect(refused.output).toContain('policy "guard" weakens governance');

    await project.writeFile("Pulumi.yaml", explicitProgram({ level: "advisory", allowWeakening: true }));
    const allowed = await project.run(["up", "--yes", "--skip-preview"]);
    expect(allowed.output).toMatch(/allowed by .*allowWeakening/);
    expect(await levelOf("guard")).toBe("advisory");
  }, 240_000);

  it("keeps secrets encrypted in what an update that failed half-way records", async () => {
    const program = (halfway: { description: string; parameter: string; more?: boolean }) =>
      explicitProgram({ level: "advisory", allowWeakening: true, halfway });
    await project.writeFile("Pulumi.yaml", program({ description: "first description", parameter: "first value" }));
    await project.run(["up", "--yes", "--skip-preview"]);
    // The description changes first; then every new parameter fails past the retries: the engine records the set as
    // the service then holds it, the new description included.
    server.setFaults([{ route: "POST /api/v2/policy-sets/:policySetId/parameters", status: 500 }]);
    await project.writeFile(
      "Pulumi.yaml",
      program({ description: halfwayMarkers.description, parameter: halfwayMarkers.parameter, more: true }),
    );
    const failed = await project.run(["up", "--yes", "--skip-preview"], { allowFailure: true });
    server.setFaults([]);
    expect(failed.code, failed.output).not.toBe(0);
    const sets = [];
    for await (const set of client.policySets.listAll(organization)) if (set.name === "halfway") sets.push(set);
    expect(sets.map((set) => set.description)).toEqual([halfwayMarkers.description]);
    const state = await project.exportState();
    const parameterHash = createHash("sha256").update(halfwayMarkers.parameter).digest("hex");
    for (const plain of [halfwayMarkers.description, halfwayMarkers.parameter, parameterHash]) {
      expect(state).not.toContain(plain);
    }
    // The next up finishes what the failed one began.
    await project.run(["up", "--yes", "--skip-preview"]);
    expect(await project.exportState()).not.toContain(parameterHash);
    expect((await client.policySets.listParameters((sets[0] as { id: string }).id)).map((p) => p.key).sort()).toEqual([
      "apiKey",
      "more",
      "region",
    ]);
  }, 240_000);

  it("refuses a run against another service before any request, naming both addresses, through the plugin", async () => {
    const other = await startSeededServer({ organization, token });
    try {
      for (const key of ["tfegov-provider:tfeAddress", "tfegov:address"]) {
        await project.run(["config", "set", key, other.url]);
      }
      for (const command of [["preview"], ["preview", "--refresh"]]) {
        const refused = await project.run(command, { allowFailure: true });
        expect(refused.code, command.join(" ")).not.toBe(0);
        expect(refused.output).toContain(`is held by the service at ${server.url}`);
        expect(refused.output).toContain(`this run talks to ${other.url}`);
        expect(refused.output).toContain("tfegov:address");
      }
      expect(other.requestLog.entries().filter((entry) => entry.method !== "GET")).toEqual([]);
    } finally {
      for (const key of ["tfegov-provider:tfeAddress", "tfegov:address"]) {
        await project.run(["config", "set", key, server.url]);
      }
      await other.close();
    }
    const again = await project.run(["preview", "--expect-no-changes"], { allowFailure: true });
    expect(again.code, again.output).toBe(0);
  }, 240_000);

  it("imports a policy set with pulumi import, every identifying field the service's", async () => {
    const made = await client.policySets.create(organization, { name: "made-in-the-ui", global: true });
    const imported = await project.run(
      [
        "import",
        "tfegov:index:PolicySet",
        "made-in-the-ui",
        made.id,
        "--yes",
        "--protect=false",
        "--generate-code=false",
      ],
      { allowFailure: true },
    );
    expect(imported.code, imported.output).toBe(0);
    expect(imported.output).toMatch(/1 imported/);
    const state = JSON.parse(await project.exportState());
    const resource = state.deployment.resources.find((entry: { urn: string }) =>
      entry.urn.endsWith("::made-in-the-ui"),
    );
    expect(resource.outputs).toMatchObject({
      organization,
      name: "made-in-the-ui",
      policySetId: made.id,
      global: true,
    });
    await project.run(["state", "delete", resource.urn, "--yes"]);
    await client.policySets.delete(made.id);
  }, 240_000);

  it("stops at Ctrl-C during a create that waits to retry, and the next up makes the policy once", async () => {
    // Retries that would go on for ten minutes: only the plugin's Cancel ends this run before the test's timeout.
    await project.run(["config", "set", "tfegov:maxRetries", "60"]);
    await project.run(["config", "set", "tfegov:retryMaxElapsedMs", "600000"]);
    const listing = "GET /api/v2/organizations/:organization/policies";
    server.setFaults([{ route: listing, status: 503 }]);
    await project.writeFile("Pulumi.yaml", explicitProgram({ level: "advisory", allowWeakening: true, late: true }));
    const before = server.requestLog.entries().length;
    const run = project.start(["up", "--yes", "--skip-preview"], { allowFailure: true });
    let stopped: Awaited<typeof run.finished>;
    try {
      const listed = () =>
        server.requestLog
          .entries()
          .slice(before)
          .some((entry) => entry.method === "GET" && entry.status === 503);
      while (!listed()) await new Promise((wait) => setTimeout(wait, 100));
      run.interrupt();
      stopped = await run.finished;
    } finally {
      server.setFaults([]);
      await project.run(["config", "rm", "tfegov:maxRetries"]);
      await project.run(["config", "rm", "tfegov:retryMaxElapsedMs"]);
    }
    expect(stopped.code).not.toBe(0);
    expect(stopped.output).toMatch(/the run was cancelled/);
    expect(
      server.requestLog
        .entries()
        .slice(before)
        .filter((entry) => entry.method !== "GET"),
    ).toEqual([]);
    await project.run(["up", "--yes", "--skip-preview"]);
    expect((await policiesOnService(client, organization)).filter((policy) => policy.name === "late")).toHaveLength(1);
    await project.writeFile("Pulumi.yaml", explicitProgram({ level: "advisory", allowWeakening: true }));
    await project.run(["up", "--yes", "--skip-preview"]);
  }, 240_000);

  it("names a recovery command and docs that every install has: the plugin's own executable and its docs", async () => {
    const taken = await client.policies.create(organization, { name: "late", enforcementLevel: "advisory" });
    await project.writeFile("Pulumi.yaml", explicitProgram({ level: "advisory", allowWeakening: true, late: true }));
    const refused = await project.run(["up", "--yes", "--skip-preview"], { allowFailure: true });
    await project.writeFile("Pulumi.yaml", explicitProgram({ level: "advisory", allowWeakening: true }));
    await client.policies.delete(taken.id);
    expect(refused.code).not.toBe(0);
    const pluginFolder = join(project.env.PULUMI_HOME as string, "plugins", "resource-tfegov-v0.1.0");
    const executable = join(pluginFolder, "pulumi-resource-tfegov");
    expect(refused.output).toContain(`run ${executable} pending-creates --apply`);
    // A path that opens from where pulumi runs (relative here: the test's PULUMI_HOME is inside the project).
    const doc = resolve(project.dir, /\(([^()]*troubleshooting\.md)/.exec(refused.output)?.[1] as string);
    expect(doc).toBe(join(pluginFolder, "docs", "troubleshooting.md"));
    expect(await readFile(doc, "utf8")).toContain("After a cancelled run");
    // The command runs as printed, in the project's directory, with the stack's tfegov: settings, and no Node.js.
    const path = await pathWithoutNode(process.env.PATH ?? "", join(project.dir, ".path"));
    const { stdout, stderr } = await promisify(execFile)(executable, ["pending-creates", "--stack", project.stack], {
      cwd: project.dir,
      env: { ...project.env, PATH: path },
    });
    expect(stdout).toBe("");
    expect(stderr).toContain("0 pending creates left something on the service");
  }, 240_000);

  it("runs a folder's own tests with the plugin's executable, as tfe-governance test does, with no Node.js", async () => {
    await project.writeFile("tested/sentinel.hcl", 'policy "weekday" {\n  enforcement_level = "advisory"\n}\n');
    await project.writeFile(
      "tested/weekday.sentinel",
      'import "time"\n\nmain = rule { time.now.weekday_name is not "Sunday" }\n',
    );
    const timeCase = (day: string, main: boolean) =>
      `mock "time" {\n  data = { now = { weekday_name = "${day}" } }\n}\n\ntest {\n  rules = { main = ${main} }\n}\n`;
    await project.writeFile("tested/test/weekday/monday.hcl", timeCase("Monday", true));
    await project.writeFile("tested/test/weekday/sunday-wrongly-expected.hcl", timeCase("Sunday", true));
    const executable = join(
      project.env.PULUMI_HOME as string,
      "plugins",
      "resource-tfegov-v0.1.0",
      "pulumi-resource-tfegov",
    );
    const path = await pathWithoutNode(process.env.PATH ?? "", join(project.dir, ".path-for-tests"));
    const ran = await promisify(execFile)(executable, ["test", "tested", "--json"], {
      cwd: project.dir,
      env: { ...project.env, PATH: path },
    }).then(
      () => ({ code: 0, stdout: "", stderr: "" }),
      (error: { code: number; stdout: string; stderr: string }) => error,
    );
    expect(ran.code).toBe(1);
    expect(
      ran.stdout
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line)),
    ).toMatchObject([
      { file: "test/weekday/monday.hcl", policy: "weekday.sentinel", verdict: "pass" },
      {
        file: "test/weekday/sunday-wrongly-expected.hcl",
        verdict: "fail",
        rules: [{ name: "main", expected: true, computed: false }],
      },
    ]);
    expect(ran.stderr).toBe("1 passed, 1 failed, 0 not run\n");
  }, 120_000);

  it("names a misspelled stack setting, with the one meant, before any request", async () => {
    await project.run(["config", "set", "tfegov:organisation", organization]);
    const before = server.requestLog.entries().length;
    const refused = await project.run(["preview"], { allowFailure: true });
    expect(refused.code).not.toBe(0);
    expect(refused.output).toContain(
      "tfegov:organisation is no setting of this provider: did you mean tfegov:organization?",
    );
    expect(server.requestLog.entries().length).toBe(before);
    await project.run(["config", "rm", "tfegov:organisation"]);
    // A value the setting cannot take fails at preview too, naming the setting.
    await project.run(["config", "set", "tfegov:timeoutMs", "30s"]);
    const badValue = await project.run(["preview"], { allowFailure: true });
    expect(badValue.code).not.toBe(0);
    expect(badValue.output).toContain('tfegov:timeoutMs is "30s": use a whole number');
    await project.run(["config", "rm", "tfegov:timeoutMs"]);
    await project.run(["destroy", "--yes", "--skip-preview"]);
    expect(await policiesOnService(client, organization)).toEqual([]);
  }, 240_000);

  // The plugin's gRPC server (src/plugin/serve.ts) under the engine, on the stack emptied above: policies on the
  // default provider, each test a preview or two of its own.
  const policiesProgram = (properties: Record<string, string[]>) =>
    [
      "name: tfegov-provider",
      "runtime: yaml",
      "resources:",
      ...Object.entries(properties).flatMap(([name, lines]) => [
        `  ${name}:`,
        "    type: tfegov:index:Policy",
        "    properties:",
        '      code: "main = rule { true }\\n"',
        ...lines.map((line) => `      ${line}`),
      ]),
      "",
    ].join("\n");
  /** What the provider sends the engine, under the resource, of a new policy at a blocking level. */
  const engineMessage = /policy "guard" at soft-mandatory: whom it would block is not known/;

  it("fails preview of a Policy of an invalid kind with the provider's reason", async () => {
    await project.writeFile("Pulumi.yaml", policiesProgram({ guard: ["kind: tfpolicy"] }));
    const refused = await project.run(["preview"], { allowFailure: true });
    expect(refused.code).not.toBe(0);
    expect(refused.output).toMatch(/kind "tfpolicy" is no kind of individual policy/);
  }, 120_000);

  it("shows the provider's messages under the resource with `pulumi preview --tracing`", async () => {
    await project.writeFile("Pulumi.yaml", policiesProgram({ guard: ["enforcementLevel: soft-mandatory"] }));
    const traced = await project.run(["preview", "--tracing", `file:${join(project.dir, "preview.trace")}`]);
    expect(traced.output).toMatch(engineMessage);
  }, 120_000);

  /** Runs `use` with the plugin started by hand and the engine attached to it (PULUMI_DEBUG_PROVIDERS). */
  const withAttachedPlugin = async (use: (attached: { env: NodeJS.ProcessEnv }) => Promise<void>) => {
    const executable = join(
      project.env.PULUMI_HOME as string,
      "plugins",
      "resource-tfegov-v0.1.0",
      "pulumi-resource-tfegov",
    );
    const plugin = spawn(executable, [], { cwd: project.dir, env: project.env, stdio: ["ignore", "pipe", "inherit"] });
    try {
      const port = await new Promise<string>((started, failed) => {
        plugin.stdout.once("data", (chunk) => started(String(chunk).trim()));
        plugin.once("exit", (code) => failed(new Error(`the plugin exited ${code}`)));
      });
      await use({ env: { PULUMI_DEBUG_PROVIDERS: `tfegov:${port}` } });
    } finally {
      plugin.kill();
    }
  };

  it("sends each command's messages to its own engine from a plugin the engine attached to", async () => {
    await project.writeFile("Pulumi.yaml", policiesProgram({ guard: ["enforcementLevel: soft-mandatory"] }));
    await withAttachedPlugin(async (attached) => {
      for (const command of ["first", "second"]) {
        expect((await project.run(["preview"], attached)).output, command).toMatch(engineMessage);
      }
    });
  }, 120_000);

  it("says a refused token in full in each command's output from a plugin the engine attached to", async () => {
    await project.writeFile("Pulumi.yaml", policiesProgram({ guard: ["enforcementLevel: advisory"] }));
    await project.run(["config", "set", "--secret", "tfegov:token", "not-a-token-of-this-server-0123"]);
    try {
      await withAttachedPlugin(async (attached) => {
        for (const command of ["first", "second"]) {
          const refused = await project.run(["up", "--yes", "--skip-preview"], { allowFailure: true, ...attached });
          expect(refused.output, command).toContain("the token was not accepted (401)");
          expect(refused.output, command).not.toContain("as said in full for");
        }
      });
    } finally {
      await project.run(["config", "set", "--secret", "tfegov:token", token]);
    }
  }, 120_000);

  it("reads the service anew in each command of a plugin the engine attached to: a change outside is drift", async () => {
    const held = ["enforcementLevel: hard-mandatory", "allowWeakening: true"];
    await project.writeFile("Pulumi.yaml", policiesProgram({ heldA: held, heldB: held, heldC: held }));
    await project.run(["up", "--yes", "--skip-preview"]);
    try {
      await withAttachedPlugin(async (attached) => {
        // The first command reads all three, the later reads from one listing of the organization.
        await project.run(["refresh", "--yes"], attached);
        const lowered = (await policiesOnService(client, organization)).find((policy) => policy.name === "heldB")!;
        await client.policies.update(lowered.id, { enforcementLevel: "advisory" });
        const drift = await project.run(["preview", "--refresh", "--expect-no-changes", "--diff"], {
          allowFailure: true,
          ...attached,
        });
        expect(drift.code).not.toBe(0);
        expect(drift.output).toMatch(/enforcementLevel\s*: "hard-mandatory" => "advisory"/);
        expect(drift.output).toContain("no changes were expected");
        expect(drift.output).not.toContain("has a problem");
      });
    } finally {
      await project.run(["destroy", "--yes", "--skip-preview"]);
    }
  }, 240_000);

  it("serves the next command after a Ctrl-C from a plugin the engine attached to", async () => {
    await project.writeFile("Pulumi.yaml", policiesProgram({ guard: ["enforcementLevel: advisory"] }));
    await project.run(["config", "set", "tfegov:maxRetries", "60"]);
    await project.run(["config", "set", "tfegov:retryMaxElapsedMs", "600000"]);
    const listing = "GET /api/v2/organizations/:organization/policies";
    try {
      await withAttachedPlugin(async (attached) => {
        server.setFaults([{ route: listing, status: 503 }]);
        const before = server.requestLog.entries().length;
        const run = project.start(["up", "--yes", "--skip-preview"], { allowFailure: true, ...attached });
        const refused = () =>
          server.requestLog
            .entries()
            .slice(before)
            .some((entry) => entry.status === 503);
        while (!refused()) await new Promise((wait) => setTimeout(wait, 100));
        run.interrupt();
        const stopped = await run.finished;
        server.setFaults([]);
        expect(stopped.output).toMatch(/the run was cancelled/);
        // The Ctrl-C was the last command's: this one sends its requests, and the guard is made once.
        const next = await project.run(["up", "--yes", "--skip-preview"], attached);
        expect(next.output).not.toMatch(/cancelled/);
        expect(
          (await policiesOnService(client, organization)).filter((policy) => policy.name === "guard"),
        ).toHaveLength(1);
        await project.run(["destroy", "--yes", "--skip-preview"], attached);
      });
    } finally {
      server.setFaults([]);
      await project.run(["config", "rm", "tfegov:maxRetries"]);
      await project.run(["config", "rm", "tfegov:retryMaxElapsedMs"]);
    }
  }, 240_000);

  it("previews what an update's service computes anew as not known, and what the update keeps as it is", async () => {
    const baseline = await client.policySets.create(organization, { name: "count-baseline" });
    // A reader of the guard's outputs: its name reads the guard's id (an unknown one would replace the reader), its
    // description the count of sets that hold the guard, which joining a set changes.
    const program = (policySetIds: string[]) =>
      policiesProgram({
        guard: [`policySetIds: ${JSON.stringify(policySetIds)}`],
        reader: [`name: reader-\${guard.policyId}`, `description: held by \${guard.policySetCount} sets`],
      });
    try {
      await project.writeFile("Pulumi.yaml", program([]));
      await project.run(["up", "--yes", "--skip-preview"]);
      await project.writeFile("Pulumi.yaml", program([baseline.id]));
      const preview = await project.run(["preview", "--diff"]);
      expect(preview.output).toMatch(/~ tfegov:index:Policy: \(update\)\s+\[id=pol-\w+\]\s+\[urn=[^\]]+::reader\]/);
      expect(preview.output).toMatch(/~ description: "held by 0 sets" => \[unknown\]/);
      await project.run(["up", "--yes", "--skip-preview"]);
      const reader = (await policiesOnService(client, organization)).find((policy) =>
        policy.name.startsWith("reader-"),
      );
      expect(reader?.description).toBe("held by 1 sets");
    } finally {
      await project.run(["destroy", "--yes", "--skip-preview"]);
      await client.policySets.delete(baseline.id);
    }
  }, 240_000);
});
