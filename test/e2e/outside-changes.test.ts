import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../../src/server";
import { docBlocks, freshEnv, repoRoot, script, substitute } from "./doc-recipes";
import { PulumiProject } from "./pulumi-project";

// docs/local-server.md's curl recipes for changes made outside Pulumi, run as written against the quickstart's
// seed: the drift check fails on each of the four, and `up --refresh` puts them back, under the real engine.

const programSource = readFileSync(join(__dirname, "program", "index.js"), "utf8");
const spec = {
  policies: [{ resource: "require-tags", enforcementLevel: "hard-mandatory", code: "main = rule { false }\n" }],
  policySets: [
    {
      resource: "baseline-set",
      name: "baseline-set",
      workspaceIds: ["ws-QuickstartProd001"],
      policies: ["require-tags"],
    },
  ],
  deprecations: [
    { resource: "vpc-1.0.0", moduleName: "vpc", moduleProvider: "aws", version: "1.0.0", reason: "Use 1.1.0" },
  ],
};

describe("docs/local-server.md: changes made outside Pulumi, as its curl recipes make them", () => {
  let server: RunningServer;
  let project: PulumiProject;

  beforeAll(async () => {
    server = await startServer({ seed: join(repoRoot, "examples", "quickstart", "seed.json") });
    project = await PulumiProject.create({
      name: "tfe-governance-outside-changes",
      files: { "index.js": programSource, "spec.json": JSON.stringify(spec) },
      config: { "tfe:address": server.url, "tfe:organization": "acme" },
      secrets: { "tfe:token": "quickstart-token-not-a-secret" },
    });
    await project.up();
  }, 180_000);

  afterAll(async () => {
    await project?.dispose();
    await server?.close();
  });

  it("each fails the drift check, naming what changed; up --refresh puts all four back", async () => {
    // An upload made outside within the second the service answered our own upload is taken for ours (docs/ci.md,
    // Drift checks): the recipe's comes later, as any change a person makes after an up does.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const [recipe] = docBlocks("docs/local-server.md", "## Changes made outside Pulumi", "sh");
    await script(
      substitute(recipe as string, "TFE=http://127.0.0.1:8080", `TFE=${server.url}`),
      repoRoot,
      freshEnv({}),
    );

    const check = await project.run(["preview", "--refresh", "--expect-no-changes", "--diff"], { allowFailure: true });
    expect(check.code).not.toBe(0);
    expect(check.output).toMatch(/require-tags[\s\S]*enforcementLevel/);
    expect(check.output).toMatch(/require-tags[\s\S]*codeHash/);
    expect(check.output).toMatch(/baseline-set[\s\S]*workspaceIds/);
    expect(check.output).toMatch(/vpc-1\.0\.0/);

    await project.run(["up", "--refresh", "--yes"]);
    await project.run(["preview", "--refresh", "--expect-no-changes"]);
  }, 240_000);
});
