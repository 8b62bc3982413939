import { execFile, spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TfeClient } from "../../src/client";
import type { RunningServer } from "../../src/server";
import { startSeededServer } from "../seeded-server";
import {
  docBlocks,
  documentationFiles,
  fencedBlocks,
  freshClone,
  freshEnv,
  processesWith,
  type Run,
  repoRoot,
  run,
  script,
  substitute,
  succeeds,
} from "./doc-recipes";
import { PulumiProject } from "./pulumi-project";

// The recipes of README.md and docs/, run as written, in fresh directories. The commands are read out of the
// documentation and examples/ci/ themselves, so that neither can change without the other. What cannot be reached
// from here is replaced where the test says so: HCP Terraform by the local server, Pulumi Cloud by a file backend.
// README's "Use it in your project" runs in installed-package.test.ts, the quickstart's closing lines in
// quickstart.test.ts.

/**
 * Shell blocks no test runs, each with the reason. Every other `sh` block of the documentation must be one that a
 * test reads with `docBlocks(file, heading, "sh")`.
 */
const notRunHere: Array<{ file: string; heading: string; why: string }> = [
  {
    file: "docs/other-languages.md",
    heading: "## Publishing a release",
    why:
      "publishes to hosts this machine cannot reach; the same command with a URL on 127.0.0.1 makes the SDKs " +
      "with which the Python and Go programs get the plugin by download (python-program, go-program)",
  },
  {
    file: "docs/local-server.md",
    heading: "## Using the local server with Terraform and Go tools",
    why:
      "needs the terraform CLI, which no registry reachable here serves; test/conformance runs go-tfe against " +
      "the same server over http and https with the same settings",
  },
];

describe("the documentation's recipes", () => {
  it("every sh block of README.md and docs/ is run by a test, or listed above with the reason it is not", async () => {
    const covered = new Set<string>();
    for (const { file, heading } of [...(await docBlockCalls()), ...notRunHere]) {
      for (const block of docBlocks(file, heading, "sh")) covered.add(`${file}\n${block}`);
    }
    const unrun = documentationFiles().flatMap((file) =>
      fencedBlocks(readFileSync(join(repoRoot, file), "utf8"), "sh")
        .filter((block) => !covered.has(`${file}\n${block}`))
        .map((block) => `${file}:\n${block}`),
    );
    expect(unrun).toEqual([]);
  });

  it('"The toolchain in your own shell": the eval line puts node, pulumi, opa and the commands on PATH, and changes nothing else', async () => {
    const [line] = docBlocks("docs/toolchain.md", "## The toolchain in your own shell", "sh");
    expect(docBlocks("README.md", "## The two commands", "sh")).toEqual([line]);
    // A shell without the toolchain on PATH, and none of Pulumi's settings: it comes from the cache the test run's
    // own setup filled, so nothing is built and nothing is said.
    const path = (process.env.PATH ?? "")
      .split(":")
      .filter((dir) => !dir.includes("pulumi-tfe-governance") && !dir.includes("node_modules"))
      .join(":");
    const {
      PULUMI_SKIP_UPDATE_CHECK: _check,
      PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: _acquire,
      ...shell
    } = freshEnv({ PATH: path });
    const inShell = (lines: string) =>
      new Promise<{ stdout: string; stderr: string }>((done, fail) =>
        execFile("bash", ["-c", lines], { cwd: repoRoot, env: shell }, (error, stdout, stderr) =>
          error ? fail(new Error(`${error.message}\n${stdout}\n${stderr}`)) : done({ stdout, stderr }),
        ),
      );
    const { stdout, stderr } = await inShell(
      [
        "before=$-",
        "pulumi_before=$(env | grep -c '^PULUMI_' || true)",
        line,
        'echo "options $before $-"',
        "echo \"pulumi settings $pulumi_before $(env | grep -c '^PULUMI_' || true)\"",
        "node -p process.versions.node",
        "pulumi version",
        "opa version",
        "tfe-governance --help | head -n 1",
        "tfe-governance-server --help | head -n 1",
        // A language host not asked for is not on PATH, unless beside the CLI (where the CLI looks first).
        'echo "python host $(dirname "$(command -v pulumi-language-python || command -v pulumi)") cli $(dirname "$(command -v pulumi)")"',
      ].join("\n"),
    );
    expect(stderr).toBe("");
    const [, before, after] = /options (\S+) (\S+)/.exec(stdout) ?? [];
    expect(after).toBe(before);
    expect(stdout).toMatch(/^pulumi settings 0 0$/m);
    expect(stdout).toMatch(/^(2[3-9]|22\.(19|[2-9]\d))\.\d+/m);
    expect(stdout).toMatch(/^v3\.\d+\.\d+$/m);
    expect(stdout).toMatch(/^Version: \d+\.\d+\.\d+$/m);
    expect(stdout).toMatch(/^Usage: tfe-governance <command>/m);
    expect(stdout).toMatch(/^Usage: tfe-governance-server /m);
    const [, hostDir, cliDir] = /^python host (\S+) cli (\S+)$/m.exec(stdout) ?? [];
    expect(hostDir).toBe(cliDir);
    // Asked for, the Python host is there, beside the CLI: Pulumi warns "using ... from $PATH" only elsewhere.
    const asked = await inShell(
      `eval "$(npm run -s env -- python)"\necho "$(dirname "$(command -v pulumi-language-python)") $(dirname "$(command -v pulumi)")"`,
    );
    const [hostAsked, cliAsked] = asked.stdout.trim().split(" ");
    expect(hostAsked).toBe(cliAsked);
    expect(asked.stderr).toBe("");
  }, 120_000);
});

describe("docs/development.md", () => {
  it('"The governance oracle": the long run is one command, here with 3 sequences', async () => {
    const [block] = docBlocks("docs/development.md", "### The governance oracle", "sh");
    const output = await succeeds("bash", ["-c", block as string], repoRoot, { ...process.env, ORACLE_RUNS: "3" });
    expect(output).toMatch(/oracle: 3 sequences, \d+ ups/);
  }, 300_000);
});

/** The (file, heading) of every `docBlocks(file, heading, "sh")` call in the tests. */
async function docBlockCalls(): Promise<Array<{ file: string; heading: string }>> {
  const calls: Array<{ file: string; heading: string }> = [];
  const visit = async (dir: string): Promise<void> => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) await visit(path);
      else if (entry.name.endsWith(".ts")) {
        const source = await readFile(path, "utf8");
        for (const match of source.matchAll(/docBlocks\(\s*"([^"]+)",\s*"([^"]+)",\s*"sh"\s*\)/g)) {
          calls.push({ file: match[1] as string, heading: match[2] as string });
        }
      }
    }
  };
  await visit(join(repoRoot, "test"));
  return calls;
}
const token = "recipes-token-not-a-secret";
const organization = "recipes-org";

describe("README recipes, each in a fresh directory", () => {
  let base: string;
  let clone: string;
  let server: RunningServer;
  let client: TfeClient;

  beforeAll(async () => {
    base = await mkdtemp(join(tmpdir(), "readme-recipes-"));
    clone = join(base, "clone");
    await freshClone(clone);
    server = await startSeededServer({
      organization,
      token,
      policySetId: "polset-RecipesBaseline1",
      modules: [{ name: "vpc", provider: "aws", versions: ["1.0.0", "1.1.0"] }],
    });
    client = new TfeClient({ address: server.url, token, rateLimit: false });
  });

  afterAll(async () => {
    await client?.close();
    await server?.close();
    if (base) await rm(base, { recursive: true, force: true });
  });

  const policies = async () => {
    const found = new Map<string, { id: string; description: string | null; policySetCount: number }>();
    for await (const policy of client.policies.listAll(organization)) found.set(policy.name, policy);
    return found;
  };
  const backend = () => `file://${join(base, "backend")}`;
  const passphrase = "recipes-passphrase";

  // "Leave it out" for quickstart:baselinePolicySetId, as README offers: the program must then send no policy set.
  it('"Pointing the quickstart at HCP Terraform" runs as written in a fresh clone, leaving the optional line out', async () => {
    const [block] = docBlocks("docs/configuration.md", "### Pointing the quickstart at HCP Terraform", "sh");
    let recipe = block as string;
    recipe = substitute(recipe, "pulumi login ", `pulumi login ${backend()} `);
    recipe = substitute(recipe, "<your API token>", token);
    recipe = substitute(recipe, "<your organization>", organization);
    recipe = substitute(recipe, "https://app.terraform.io ", `${server.url} `);
    const optional = recipe
      .split("\n")
      .filter((line) => /quickstart:baselinePolicySetId polset-|quickstart:workspaceId ws-/.test(line));
    expect(optional).toHaveLength(2);
    for (const line of optional) recipe = substitute(recipe, `${line}\n`, "");
    await mkdir(join(base, "backend"));

    const output = await script(
      recipe,
      clone,
      freshEnv({
        PULUMI_HOME: join(base, "pulumi-home"),
        // The answers a user types: the passphrase `pulumi stack init` asks for, and "yes" to `pulumi up`.
        PULUMI_CONFIG_PASSPHRASE: passphrase,
        PULUMI_SKIP_CONFIRMATIONS: "true",
      }),
    );
    expect(output).toMatch(/\+ 8 created/);
    expect(output).not.toMatch(/TS2209|QuickstartBase1/);

    const held = await policies();
    expect([...held.keys()].sort()).toEqual(["deny-public-buckets", "require-tags", "restrict-instance-types"]);
    expect(held.get("require-tags")?.policySetCount).toBe(0);
    const [version] = await client.registry.listModuleVersions({
      namespace: organization,
      name: "vpc",
      provider: "aws",
    });
    expect(version?.deprecation?.reason).toMatch(/^1\.0\.0 creates one NAT gateway per subnet/);
    expect(await readFile(join(clone, "Pulumi.prod.yaml"), "utf8")).not.toContain(token);
  }, 240_000);

  // The user's repository after that recipe: Pulumi.prod.yaml committed, the stack on a shared file backend. Each job
  // starts from a fresh Pulumi home, with the repository's secrets and variables in the environment as the CI file maps
  // them. `npm ci`, every job's first step, already ran in this checkout (the recipe's first line).
  it("the CI files' jobs: a pull request's preview, its up, a drift check that passes, then one that fails and writes nothing", async () => {
    const settings: Record<string, string> = {
      PULUMI_ACCESS_TOKEN: "",
      PULUMI_BACKEND_URL: backend(),
      PULUMI_CONFIG_PASSPHRASE: passphrase,
      TFE_TOKEN: token,
    };
    const jobs = new Map<string, { commands: string[]; env: NodeJS.ProcessEnv }>();
    for (const file of ["github-actions-policies.yml", "github-actions-drift-check.yml"]) {
      const text = await readFile(join(repoRoot, "examples", "ci", file), "utf8");
      const env: NodeJS.ProcessEnv = {};
      for (const [, name, kind, key] of text.matchAll(/^ {2}(\w+): \$\{\{ (secrets|vars)\.(\w+) \}\}$/gm)) {
        expect(settings, `${file} reads ${kind}.${key}`).toHaveProperty(key as string);
        env[name as string] = settings[key as string];
      }
      expect(Object.keys(env).sort()).toEqual(Object.keys(settings).sort());
      // The file's own settings, as written (its `uses:` steps, such as OPA's setup-opa, the test's PATH stands for).
      for (const [, name, value] of text.matchAll(/^ {2}(\w+): "([^"]*)"$/gm)) env[name as string] = value;
      expect(env.TFE_REQUIRE_CODE_CHECKS, `${file} makes a missing opa an error`).toBe("true");
      expect(env.PULUMI_RUN_PROGRAM, `${file}: refresh takes the stack config of now`).toBe("true");
      for (const [name, commands] of ciJobs(text)) jobs.set(name, { commands, env });
    }
    // GitLab's jobs are the same commands; they run once, as GitHub's.
    const gitlab = ciJobs(await readFile(join(repoRoot, "examples", "ci", "gitlab-ci.yml"), "utf8"));
    expect(gitlab.get("preview")).toEqual(jobs.get("preview")?.commands);
    expect(gitlab.get("up")).toEqual(jobs.get("apply")?.commands);
    expect(gitlab.get("drift-check")).toEqual(jobs.get("drift")?.commands);

    let runner = 0;
    const runJob = async (name: string) => {
      const job = jobs.get(name);
      expect(job, `a job named ${name}`).toBeDefined();
      const env = freshEnv({ ...job?.env, PULUMI_HOME: join(base, `runner-${++runner}`) });
      const results: Run[] = [];
      for (const command of job?.commands ?? []) {
        if (command === "npm ci") continue;
        const result = await run("bash", ["-c", command], clone, env);
        results.push(result);
        if (result.code !== 0) break;
      }
      return results;
    };
    const lastOf = (results: Run[]) => results[results.length - 1] as Run;

    const policyFile = join(clone, "examples", "quickstart", "policies", "require-tags.sentinel");
    await writeFile(policyFile, `${await readFile(policyFile, "utf8")}\n# Reviewed in a pull request.\n`);
    const preview = lastOf(await runJob("preview"));
    expect(preview.code, preview.output).toBe(0);
    expect(preview.output).toMatch(/~ 1 to update/);
    expect(preview.output).toContain("codeHash");

    const apply = lastOf(await runJob("apply"));
    expect(apply.code, apply.output).toBe(0);
    expect(apply.output).toMatch(/~ 1 updated/);
    const requireTags = (await policies()).get("require-tags");
    const code = await client.policies.download(requireTags?.id as string);
    expect(code.toString()).toContain("# Reviewed in a pull request.");

    const quiet = await runJob("drift");
    expect(lastOf(quiet).code, lastOf(quiet).output).toBe(0);

    await client.policies.update(requireTags?.id as string, { description: "Changed in the HCP Terraform UI." });
    const stateFile = join(base, "backend", ".pulumi", "stacks", "tfe-governance-quickstart", "prod.json");
    const stateBefore = await readFile(stateFile);
    const drift = lastOf(await runJob("drift"));
    expect(drift.code).not.toBe(0);
    expect(drift.output).toMatch(/~ 1 to update/);
    expect(drift.output).toContain("Changed in the HCP Terraform UI.");
    expect(drift.output).toMatch(/description/);
    expect(drift.output).toContain("no changes were expected");
    expect(await readFile(stateFile)).toEqual(stateBefore);
    expect(processesWith(base)).toEqual([]);
  }, 240_000);

  it('"The local server" example runs as written where the package is installed, and says which Node it needs', async () => {
    const packed = await succeeds("npm", ["pack", "--silent", "--pack-destination", base], clone, freshEnv({}));
    const tarball = join(base, packed.trim().split("\n").pop() as string);
    const project = join(base, "server-user");
    await mkdir(project);
    // README's install line names @pulumi/pulumi beside the package; it comes as the package's dependency anyway,
    // and asking for it by name would install whichever version the registry now calls latest.
    await succeeds("npm", ["install", "--no-audit", "--no-fund", tarball], project, freshEnv({}));
    const installed = join(project, "node_modules", "pulumi-tfe-governance");

    const [json] = docBlocks("docs/local-server.md", "## The local server", "json");
    const shipped = JSON.parse(await readFile(join(installed, "examples", "quickstart", "seed.json"), "utf8"));
    expect(JSON.parse(json as string)).toEqual(shipped);

    const [block] = docBlocks("docs/local-server.md", "## The local server", "sh");
    const command = substitute((block as string).trim(), "--port 8080", "--port 0");
    // Its own process group, so that stopping it stops npx and the server npx started.
    const child = spawn("bash", ["-c", `exec ${command}`], { cwd: project, env: freshEnv({}), detached: true });
    try {
      let printed = "";
      child.stderr.on("data", (chunk) => (printed += chunk));
      const url = await new Promise<string>((found, failed) => {
        child.stdout.on("data", (chunk) => {
          printed += chunk;
          const match = /listening on (http:\/\/\S+)[\s\S]*tokens:\n {2}(\S+)/.exec(printed);
          if (match && printed.includes("manage-modules")) found(match[1] as string);
        });
        child.on("exit", (code) => failed(new Error(`the server exited ${code}:\n${printed}`)));
      });
      expect(printed).toContain(`  ${shipped.tokens[0].token}  organizations: acme`);
      expect(existsSync(join(project, ".tfe", "state.sqlite"))).toBe(true);
      const local = new TfeClient({ address: url, token: shipped.tokens[0].token, rateLimit: false });
      const versions = await local.registry.listModuleVersions({ namespace: "acme", name: "vpc", provider: "aws" });
      await local.close();
      expect(versions.map((version) => version.version).sort()).toEqual(["1.0.0", "1.1.0"]);
    } finally {
      const exited = new Promise((done) => child.once("exit", done));
      process.kill(-(child.pid as number), "SIGTERM");
      await exited;
    }

    // An older Node, as process.versions tells it to the package.
    const olderNode = join(base, "older-node.cjs");
    await writeFile(
      olderNode,
      'Object.defineProperty(process, "versions", { value: { ...process.versions, node: "20.20.2" } });\n' +
        'Object.defineProperty(process, "version", { value: "v20.20.2" });\n',
    );
    const refused = await run(
      "node",
      ["--require", olderNode, join(project, "node_modules", ".bin", "tfe-governance-server"), "--port", "0"],
      project,
      freshEnv({}),
    );
    expect(refused.code).not.toBe(0);
    expect(refused.output).toContain("tfe-governance-server needs Node.js 22.19.0 or newer; this is Node.js v20.20.2.");
    expect(refused.output).not.toMatch(/\n\s+at /);
    expect(refused.output).not.toContain("listening");
  }, 240_000);
});

/**
 * Each job's commands, by job name: its `- run:` steps (GitHub, jobs under `jobs:`), or the `before_script` and
 * `script` lines (GitLab, jobs at the top level).
 */
function ciJobs(text: string): Map<string, string[]> {
  const lines = text.split("\n");
  const jobsLine = lines.indexOf("jobs:");
  const jobKey = jobsLine >= 0 ? /^ {2}([\w-]+):$/ : /^([\w-]+):$/;
  const jobs = new Map<string, string[]>();
  let before: string[] = [];
  let current: string[] | undefined;
  for (const line of lines.slice(jobsLine + 1)) {
    const key = jobKey.exec(line)?.[1];
    if (key === "before_script") {
      before = [];
      current = before;
    } else if (key !== undefined) {
      current = [...before];
      jobs.set(key, current);
    }
    if (key !== undefined) continue;
    const command = /^\s*- (?:run: )?((?:npm|pulumi) .+)$/.exec(line)?.[1];
    if (command !== undefined) current?.push(command);
  }
  return jobs;
}

describe("README: adoption, retainOnDelete and the tfe: tuning keys under the real engine", () => {
  let server: RunningServer;
  let client: TfeClient;
  let project: PulumiProject;
  const adoptOrganization = "adopt-org";
  const code = "main = rule { true }\n";
  const vpc = { organization: adoptOrganization, name: "vpc", provider: "aws" };

  beforeAll(async () => {
    server = await startSeededServer({
      organization: adoptOrganization,
      token,
      modules: [{ name: "vpc", provider: "aws", versions: ["1.0.0", "1.1.0"] }],
    });
    client = new TfeClient({ address: server.url, token, rateLimit: false });
    for (const name of ["require-tags", "other-policy"]) {
      const policy = await client.policies.create(adoptOrganization, { name, enforcementLevel: "advisory" });
      await client.policies.upload(policy.id, Buffer.from(code));
    }
    for (const version of ["1.0.0", "1.1.0"]) {
      await client.moduleVersions.deprecate({ ...vpc, version, reason: "Deprecated before Pulumi." });
    }
  });

  afterAll(async () => {
    await project?.dispose();
    await client?.close();
    await server?.close();
  });

  const held = async () => {
    const names: string[] = [];
    for await (const policy of client.policies.listAll(adoptOrganization)) names.push(policy.name);
    const versions = await client.registry.listModuleVersions({
      namespace: adoptOrganization,
      name: "vpc",
      provider: "aws",
    });
    for (const { version, deprecation } of versions) if (deprecation) names.push(`vpc ${version} deprecated`);
    return names.sort();
  };

  it("destroy deletes adopted policies and reinstates versions deprecated before, unless retainOnDelete was recorded by an up first; tfe:maxRetries reaches the provider", async () => {
    const [snippet] = docBlocks("docs/resources.md", "## `Policy`", "ts").filter((block) =>
      block.includes("retainOnDelete"),
    );
    const retained = (snippet as string).trim();
    // README's policy, another adopted policy, and two versions deprecated before Pulumi, adopted at create.
    const program = (readmeSnippet: string, retainDeprecation: boolean) =>
      'const { ModuleVersionDeprecation, Policy } = require("pulumi-tfe-governance");\n' +
      `${readmeSnippet}\n` +
      'new Policy("other-policy", { code: "main = rule { true }\\n", enforcementLevel: "advisory", adoptExisting: true });\n' +
      'const vpc = { moduleName: "vpc", moduleProvider: "aws", reason: "Deprecated before Pulumi.", adoptExisting: true };\n' +
      `new ModuleVersionDeprecation("vpc-1.0.0", { ...vpc, version: "1.0.0" }, { retainOnDelete: ${retainDeprecation} });\n` +
      'new ModuleVersionDeprecation("vpc-1.1.0", { ...vpc, version: "1.1.0" });\n';
    // A 503 on reading a policy, which the provider's client retries unless told not to.
    const refreshUnder503 = async () => {
      server.setFaults([{ route: "GET /api/v2/policies/:policyId", status: 503, times: 1 }]);
      server.requestLog.clear();
      const refresh = await project.run(["refresh", "--yes", "--skip-preview"], { allowFailure: true });
      server.setFaults([]);
      const failed = server.requestLog.entries().find((entry) => entry.status === 503);
      const attempts = server.requestLog.entries().filter((entry) => entry.path === failed?.path).length;
      return { succeeded: refresh.code === 0, attempts };
    };

    project = await PulumiProject.create({
      name: "readme-adoption",
      files: {
        "index.js": program(substitute(retained, ", { retainOnDelete: true }", ""), false),
        "policies/require-tags.sentinel": code,
      },
      config: { "tfe:address": server.url, "tfe:organization": adoptOrganization, "tfe:maxRetries": "0" },
      secrets: { "tfe:token": token },
    });
    await project.up();
    const everything = ["other-policy", "require-tags", "vpc 1.0.0 deprecated", "vpc 1.1.0 deprecated"];
    expect(await held()).toEqual(everything);
    expect(await refreshUnder503()).toEqual({ succeeded: false, attempts: 1 });

    // README: add the option, then up once so that the stack records it (and, README says, the changed tfe: keys).
    await project.run(["config", "rm", "tfe:maxRetries"]);
    await project.writeFile("index.js", program(retained, true));
    await project.up();
    expect(await refreshUnder503()).toEqual({ succeeded: true, attempts: 2 });

    await project.run(["destroy", "--yes", "--skip-preview"]);
    expect(await held()).toEqual(["require-tags", "vpc 1.0.0 deprecated"]);
    for await (const kept of client.policies.listAll(adoptOrganization)) {
      expect((await client.policies.download(kept.id)).toString()).toBe(code);
    }
  }, 240_000);
});
