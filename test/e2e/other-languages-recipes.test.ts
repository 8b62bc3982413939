import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TfeClient } from "../../src/client";
import type { RunningServer } from "../../src/server";
import { startSeededServer } from "../seeded-server";
import { docBlocks, freshEnv, repoRoot, script, substitute } from "./doc-recipes";
import { type PluginArtifacts, pluginArtifacts } from "./plugin-artifacts";
import { policiesOnService } from "./service-and-state";

// README's "From Python, YAML, Go or C#" and docs/other-languages.md's YAML recipe, run as a user types them in a
// project of their own with the files `npm run package` makes: a fresh shell, its own PULUMI_HOME, a file backend,
// and the local server in place of HCP Terraform (TFE_ADDRESS; the recipes name no address).

const organization = "acme";
const token = "other-languages-recipes-token";
const ownerPolicy = "main = rule { true }\n";

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
    expect(basename(artifacts.tarball)).toBe(`pulumi-resource-tfegov-v${artifacts.version}.tar.gz`);
  });

  it("README: installs the plugin and the wheel and deploys the Python program", async () => {
    const [, install, deploy] = docBlocks("README.md", "## From Python, YAML, Go or C#", "sh");
    const [program] = docBlocks("README.md", "## From Python, YAML, Go or C#", "python");
    const { dir, env, client } = await project({
      // README: "`Pulumi.yaml` says `name: governance` and `runtime: python`".
      "Pulumi.yaml": "name: governance\nruntime: python\n",
      "__main__.py": program as string,
      "policies/require-owner.sentinel": ownerPolicy,
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

  it("docs/other-languages.md: installs the plugin and deploys the YAML program", async () => {
    const [program] = docBlocks("docs/other-languages.md", "## YAML", "yaml");
    const [commands] = docBlocks("docs/other-languages.md", "## YAML", "sh");
    const { dir, env, client } = await project({
      "Pulumi.yaml": program as string,
      "policies/require-owner.sentinel": ownerPolicy,
    });
    await script(substitute(commands as string, "pulumi up\n", "pulumi up --yes\n"), dir, env);
    const names = (await policiesOnService(client, organization)).map((policy) => policy.name);
    expect(names).toEqual(["require-owner"]);
  }, 300_000);
});
