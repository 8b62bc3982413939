import { cpSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TfeClient } from "../../src/client";
import { type RunningServer, startServer } from "../../src/server";
import { GitRepository, thirdGenerationLibrary } from "../vcs-repository";
import { PulumiProject } from "./pulumi-project";

// What the guard compares a change with is what the service enforces, as the state's outputs record it: under the
// real engine and Node.js language host, a refresh (alone, or within preview and up) must not blank it, a level
// raised through a parameter must be remembered, and an adoption must compare with what the service holds.

const organization = "acme";
const token = "e2e-baseline-token-0123456789";
const oauthTokenId = "ot-baselineLibrary01";
const staging = "ws-staging000000001";
const tfpolicyExample = join(__dirname, "..", "..", "examples", "quickstart", "policy-sets", "terraform-policy");
const requireOwnerTag = 'policy "resource_policy.aws_s3_bucket.require_owner_tag"';

const program = (libraryPath: string) => `
const pulumi = require("@pulumi/pulumi");
const { Policy, PolicySet } = require("pulumi-tfe-governance");
const config = new pulumi.Config();

new PolicySet("from-vcs", {
  vcsRepo: { identifier: "acme/policy-library", branch: "main", oauthTokenId: "${oauthTokenId}" },
  policiesPath: "policies/aws",
  vcsCheckout: ${JSON.stringify(libraryPath)},
  global: true,
});
new PolicySet("terraform-policy", {
  directory: "terraform-policy",
  global: true,
  parameters: { require_tags_level: config.get("requireTagsLevel") ?? "advisory" },
});
if (config.getBoolean("adopt")) {
  new Policy("adopted-policy", {
    code: "main = rule { true }\\n",
    enforcementLevel: config.get("adoptedLevel"),
    adoptExisting: true,
  });
  new PolicySet("adopted-set", {
    workspaceIds: JSON.parse(config.get("adoptedWorkspaces") ?? "[]"),
    global: config.getBoolean("adoptedGlobal") ?? false,
    adoptExisting: true,
  });
}
`;

describe("the baseline every change is compared with, under the real engine", () => {
  let server: RunningServer;
  let client: TfeClient;
  let project: PulumiProject;
  let library: GitRepository;
  const writes = () => server.requestLog.entries().filter((entry) => entry.method !== "GET");
  const refused = async (args: string[]) => {
    server.requestLog.clear();
    const run = await project.run(args, { allowFailure: true });
    expect(run.code, run.output).not.toBe(0);
    expect(writes()).toEqual([]);
    return run.output;
  };

  beforeAll(async () => {
    library = GitRepository.create(thirdGenerationLibrary);
    server = await startServer({
      seed: {
        organizations: [{ name: organization, plus: true }],
        tokens: [{ token, organizations: [organization] }],
        workspaces: [{ id: staging, organization, name: "staging" }],
        vcsRepositories: [{ identifier: "acme/policy-library", path: library.path }],
        oauthTokens: [{ id: oauthTokenId, organization }],
      },
    });
    client = new TfeClient({ address: server.url, token, rateLimit: false });
    project = await PulumiProject.create({
      name: "tfe-governance-baseline",
      files: { "index.js": program(library.path) },
      config: { "tfe:address": server.url, "tfe:organization": organization },
      secrets: { "tfe:token": token },
    });
    cpSync(tfpolicyExample, join(project.dir, "terraform-policy"), { recursive: true });
    await project.up();
  }, 180_000);

  afterAll(async () => {
    await project?.dispose();
    await client?.close();
    await server?.close();
    library?.remove();
  });

  it("a level raised through a parameter stays the baseline through preview --refresh, up --refresh and refresh", async () => {
    await project.run(["config", "set", "requireTagsLevel", "mandatory"]);
    await project.up();
    await project.run(["config", "set", "requireTagsLevel", "advisory"]);
    for (const args of [["preview"], ["preview", "--refresh"], ["up", "--refresh", "--yes"]]) {
      expect(await refused(args), args.join(" ")).toContain(`${requireOwnerTag} goes from mandatory to advisory`);
    }
    await project.run(["refresh", "--yes"]);
    expect(await refused(["preview"])).toContain(`${requireOwnerTag} goes from mandatory to advisory`);
    // Nothing reached the service: the parameter still raises the level.
    for await (const set of client.policySets.listAll(organization)) {
      if (set.name !== "terraform-policy") continue;
      const parameters = await client.policySets.listParameters(set.id);
      expect(parameters.map(({ key, value }) => `${key}=${value}`)).toEqual(["require_tags_level=mandatory"]);
    }
    await project.run(["config", "set", "requireTagsLevel", "mandatory"]);
    await project.run(["preview", "--expect-no-changes"]);
  }, 300_000);

  it("a level lowered in the checkout of a set read from version control is refused after any refresh", async () => {
    const softened = thirdGenerationLibrary["policies/aws/sentinel.hcl"]!.replace('"hard-mandatory"', '"advisory"');
    await project.run(["refresh", "--yes"]);
    library.commit({ "policies/aws/sentinel.hcl": softened }, "Soften");
    try {
      for (const args of [["preview"], ["preview", "--refresh"], ["up", "--refresh", "--yes"]]) {
        expect(await refused(args), args.join(" ")).toContain(
          'policy set "from-vcs" weakens governance: policy "restrict-ec2" goes from hard-mandatory to advisory',
        );
      }
    } finally {
      library.commit({ "policies/aws/sentinel.hcl": thirdGenerationLibrary["policies/aws/sentinel.hcl"]! }, "Restore");
    }
    await project.up();
    await project.run(["preview", "--expect-no-changes"]);
  }, 300_000);

  it("refresh says when the service evaluates a commit the stack never checked, naming both", async () => {
    const pushed = library.commit({ "policies/aws/README.md": "Pushed straight to main.\n" }, "Push");
    const answer = await fetch(`${server.url}/_local/vcs-push`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ identifier: "acme/policy-library" }),
    });
    expect(answer.status).toBe(200);
    await new Promise((done) => setTimeout(done, 500));
    const refresh = await project.run(["refresh", "--yes"]);
    const checked = /and this stack last checked commit ([0-9a-f]{40}) \(vcsCheckout\)/.exec(refresh.output)?.[1];
    expect(refresh.output).toContain(`policy set "from-vcs" now evaluates commit ${pushed} of acme/policy-library`);
    expect(checked).toBeDefined();
    expect(checked).not.toBe(pushed);
    await project.up();
  }, 300_000);

  it("adopting compares the program with what the service holds: a level left out, global turned off", async () => {
    const held = await client.policies.create(organization, {
      name: "adopted-policy",
      enforcementLevel: "hard-mandatory",
    });
    await client.policies.upload(held.id, "main = rule { true }\n");
    const heldSet = await client.policySets.create(organization, { name: "adopted-set", global: true });
    await project.run(["config", "set", "adopt", "true"]);
    await project.run(["config", "set", "adoptedGlobal", "true"]);
    // The level left out: the default (soft-mandatory) would lower what the service holds.
    expect(await refused(["preview"])).toMatch(
      new RegExp(
        `adopting policy "adopted-policy" \\(${held.id}\\) weakens governance: enforcementLevel goes from hard-mandatory to soft-mandatory`,
      ),
    );
    // The set scoped to a workspace: global off, on a set that applies everywhere now.
    await project.run(["config", "set", "adoptedLevel", "hard-mandatory"]);
    await project.run(["config", "set", "adoptedGlobal", "false"]);
    await project.run(["config", "set", "adoptedWorkspaces", JSON.stringify([staging])]);
    expect(await refused(["preview"])).toMatch(
      new RegExp(`adopting policy set "adopted-set" \\(${heldSet.id}\\) weakens governance: global is turned off`),
    );
    await project.run(["config", "set", "adoptedGlobal", "true"]);
    await project.run(["config", "set", "adoptedWorkspaces", "[]"]);
    server.requestLog.clear();
    await project.up();
    expect(writes()).toEqual([]);
    expect(await client.policySets.read(heldSet.id)).toMatchObject({ global: true });
    expect(await client.policies.read(held.id)).toMatchObject({ enforcementLevel: "hard-mandatory" });
    await project.run(["destroy", "--yes"]);
  }, 300_000);
});
