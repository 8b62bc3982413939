import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { createServer } from "node:net";
import { homedir, tmpdir } from "node:os";
import { basename, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TfeClient } from "../../src/client";
import type { RunningServer } from "../../src/server";
import { startSeededServer } from "../seeded-server";
import { docBlocks, freshEnv, repoRoot, script, substitute } from "./doc-recipes";
import { hostPlatform, type PluginArtifacts, pluginArtifacts } from "./plugin-artifacts";
import { policiesOnService } from "./service-and-state";

// README's "From Python, YAML, Go or C#" and docs/other-languages.md's YAML recipe, run as a user types them in a
// project of their own with the files `npm run package` makes: a fresh shell, its own PULUMI_HOME, a file backend,
// and the local server in place of HCP Terraform (TFE_ADDRESS; the recipes name no address).

const organization = "acme";
const token = "other-languages-recipes-token";

describe("the recipes for other languages, each in a project of its own", () => {
  let artifacts: PluginArtifacts;
  const cleanUp: Array<() => Promise<unknown>> = [];

  beforeAll(async () => {
    artifacts = await pluginArtifacts();
  }, 240_000);

  afterAll(async () => {
    for (const step of cleanUp) await step();
  });

  /** A project directory with the plugin tarball and the wheel beside it, a server, and a fresh shell's environment. */
  async function project(files: Record<string, string>) {
    const server = await startSeededServer({
      organization,
      token,
      modules: [{ name: "vpc", provider: "aws", versions: ["1.0.0", "1.1.0"] }],
    });
    const client = new TfeClient({ address: server.url, token, rateLimit: false });
    const dir = await mkdtemp(join(tmpdir(), "tfegov-recipe-"));
    cleanUp.push(
      () => client.close(),
      () => server.close(),
      () => rm(dir, { recursive: true, force: true }),
    );
    for (const file of [artifacts.tarball, artifacts.wheel]) await copyFile(file, join(dir, basename(file)));
    for (const [path, content] of Object.entries(files)) {
      await mkdir(join(dir, path, ".."), { recursive: true });
      await writeFile(join(dir, path), content);
    }
    await mkdir(join(dir, ".state"));
    const env = freshEnv({
      PULUMI_HOME: join(dir, ".pulumi-home"),
      PULUMI_BACKEND_URL: `file://${join(dir, ".state")}`,
      PULUMI_CONFIG_PASSPHRASE: "recipes",
      TFE_ADDRESS: server.url,
      TFE_TOKEN: token,
    });
    return { dir, env, client, server: server as RunningServer };
  }

  it("README: `npm run package` is the one command that makes the artifacts these recipes install", async () => {
    const [build] = docBlocks("README.md", "## From Python, YAML, Go or C#", "sh");
    expect(build).toBe("npm ci && npm run package\n");
    const scripts = JSON.parse(await readFile(join(repoRoot, "package.json"), "utf8")).scripts;
    // The artifacts of this test come from the same script, over the same build.
    expect(scripts.package).toMatch(/^npm run build && .*node scripts\/package-plugin\.mjs$/);
    expect(basename(artifacts.tarball)).toBe(`pulumi-resource-tfegov-v${artifacts.version}-${hostPlatform}.tar.gz`);
  });

  it("README: installs the plugin and the wheel and deploys the Python program", async () => {
    const [, install, deploy] = docBlocks("README.md", "## From Python, YAML, Go or C#", "sh");
    const [program] = docBlocks("README.md", "## From Python, YAML, Go or C#", "python");
    const { dir, env, client } = await project({
      // README: "`Pulumi.yaml` says `name: governance` and `runtime: python`".
      "Pulumi.yaml": "name: governance\nruntime: python\n",
      "__main__.py": program as string,
      // The policy file comes from README's own install block (issue 52: it was named and never made).
    });
    // One shell, as a user types both blocks: the second runs in the virtualenv the first activated.
    await script(`${install}${substitute(deploy as string, "pulumi up\n", "pulumi up --yes\n")}`, dir, env);
    const [policy] = await policiesOnService(client, organization);
    expect(policy).toMatchObject({ name: "require-owner", enforcementLevel: "hard-mandatory" });
    const version = await client.registry.getModuleVersion({
      namespace: organization,
      name: "vpc",
      provider: "aws",
      version: "1.0.0",
    });
    expect(version.deprecation?.reason).toContain("use 1.1.0");
  }, 300_000);

  /**
   * docs/other-languages.md's quick start in `language`, run as printed in one shell: the server block in the clone
   * (a free port for 8080, the artifacts of this build for `$PWD/artifacts`), the language's block and the deploy
   * block in a new directory, then the preview the page says passes.
   */
  async function quickStart(language: string, [program]: string[]) {
    const blocks = docBlocks("docs/other-languages.md", "## Quick start against the local server", "sh");
    const [serverBlock, deploy, cleanUpBlock] = blocks;
    const port = String(await freePort());
    const dir = await mkdtemp(join(tmpdir(), `tfegov-quickstart-${language.toLowerCase()}-`));
    cleanUp.push(() => rm(dir, { recursive: true, force: true }));
    await mkdir(join(dir, ".state"));
    const env = freshEnv({
      PULUMI_HOME: join(dir, ".pulumi-home"),
      PULUMI_BACKEND_URL: `file://${join(dir, ".state")}`,
      PULUMI_CONFIG_PASSPHRASE: "quick start",
      // A shell of a machine where the toolchain was never put on PATH: `pulumi`, its hosts and Node.js 24 come from
      // the page's own first line, or the quick start fails.
      PATH: pathWithoutToolchain(),
    });
    // Review of issue 52: README's `eval "$(npm run -s env)"` puts only the Node.js and YAML hosts on PATH, and on a
    // fresh machine a Python or Go program then finds no host. On this machine the hosts the tests built sit beside
    // the CLI whatever the line asks for, so that the line asks for this language's host is read from it too.
    const envLine = (serverBlock as string).split("\n").find((line) => line.includes("npm run -s env")) ?? "";
    expect(envLine).toMatch(/^eval "\$\(npm run -s env( -- [a-z ]+)?\)"$/);
    if (language !== "YAML")
      expect(envLine.split(" -- ")[1] ?? "").toMatch(new RegExp(`\\b${language.toLowerCase()}\\b`));
    const server = substitute(
      substitute(serverBlock as string, "--port 8080", `--port ${port}`),
      "export ARTIFACTS=$PWD/artifacts",
      `export ARTIFACTS=${artifacts.folder}`,
    );
    const tarball = `pulumi-resource-tfegov-v${artifacts.version}-linux-amd64.tar.gz`;
    const deployHere = substitute(
      substitute(deploy as string, "http://127.0.0.1:8080", `http://127.0.0.1:${port}`),
      tarball,
      basename(artifacts.tarball),
    );
    await script(
      [
        `cd ${repoRoot}`,
        server,
        // The test's own lines: the server stops with the shell, and is up before the first request.
        "trap 'kill $! 2>/dev/null || true' EXIT",
        `until (exec 3<>/dev/tcp/127.0.0.1/${port}) 2>/dev/null; do sleep 0.1; done`,
        `mkdir ${dir}/project && cd ${dir}/project`,
        program,
        deployHere,
        "pulumi preview --expect-no-changes",
        "pulumi stack export > state.json",
        // The page's last block: destroy, and stop the server (the job the server block started).
        cleanUpBlock,
        // The server stopped: its port answers no more within ten seconds.
        `for _ in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/${port}) 2>/dev/null || break; sleep 0.2; done`,
        `! (exec 3<>/dev/tcp/127.0.0.1/${port}) 2>/dev/null`,
      ].join("\n"),
      dir,
      env,
    );
    const state = JSON.parse(await readFile(join(dir, "project", "state.json"), "utf8"));
    return (state.deployment.resources as { type: string; id?: string }[])
      .filter((resource) => resource.type.startsWith("tfegov:index:"))
      .map((resource) => `${resource.type} ${resource.id?.replace(/-[A-Za-z0-9]+$/, "-…")}`)
      .sort();
  }

  it("docs/other-languages.md: the YAML quick start runs as printed", async () => {
    expect(await quickStart("YAML", docBlocks("docs/other-languages.md", "### YAML", "sh"))).toEqual([
      "tfegov:index:ModuleVersionDeprecation acme/vpc/aws/1.0.0",
      "tfegov:index:Policy pol-…",
    ]);
  }, 300_000);

  it("docs/other-languages.md: the Python quick start runs as printed", async () => {
    const program = docBlocks("docs/other-languages.md", "### Python", "sh");
    expect(await quickStart("Python", program)).toEqual(["tfegov:index:Policy pol-…"]);
  }, 300_000);

  it("docs/other-languages.md: the Go quick start runs as printed", async () => {
    const program = docBlocks("docs/other-languages.md", "### Go", "sh");
    expect(await quickStart("Go", program)).toEqual(["tfegov:index:Policy pol-…"]);
  }, 300_000);
});

/** This process's PATH without the directories of the project's toolchain (scripts/toolchain.sh's cache). */
function pathWithoutToolchain(): string {
  const cache =
    process.env.PULUMI_TFE_GOVERNANCE_CACHE ??
    join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "pulumi-tfe-governance");
  return (process.env.PATH ?? "")
    .split(":")
    .filter((dir) => dir !== cache && !dir.startsWith(`${cache}/`))
    .join(":");
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}
