import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TfeClient } from "../../src/client";
import type { RunningServer } from "../../src/server";
import { startSeededServer } from "../seeded-server";
import { PulumiProject } from "./pulumi-project";

// Issue 39 item 3: a reviewer reads in `preview --diff` and in refresh only what the user declared or what the
// service changed. A secret that changed is named, never shown.

const organization = "acme";
const token = "quiet-diffs-token-0123456789";
const secretValue = "first-secret-value-1234";

const program = (level: string) => `
const pulumi = require("@pulumi/pulumi");
const { Policy, PolicySet } = require("pulumi-tfe-governance");
const config = new pulumi.Config();
const tags = new Policy("require-tags", { enforcementLevel: "${level}", code: "main = rule { true }\\n" });
const types = new Policy("restrict-types", { enforcementLevel: "advisory", code: "main = rule { true }\\n" });
new PolicySet("baseline", {
  policyIds: [tags.policyId, types.policyId],
  parameters: { region: "eu-west-1", api_key: config.requireSecret("apiKey") },
});
`;

describe("diffs a reviewer reads", () => {
  let server: RunningServer;
  let project: PulumiProject;

  beforeAll(async () => {
    server = await startSeededServer({ organization, token });
    project = await PulumiProject.create({
      name: "tfe-quiet-diffs",
      files: { "index.js": program("advisory") },
      config: { "tfe:organization": organization, "tfe:address": server.url },
    });
    await project.run(["config", "set", "--secret", "tfe:token", token]);
    await project.run(["config", "set", "--secret", "apiKey", secretValue]);
    await project.up();
  }, 180_000);

  afterAll(async () => {
    await server?.close();
    await project?.dispose();
  });

  /** The property lines of a `--diff` output that mark a change (`~ key`, `+ key`, `- key`), keys only. */
  function markedProperties(output: string): string[] {
    return [...output.matchAll(/^\s+([~+-]) ([A-Za-z_][\w.]*)\s*:/gm)].map((match) => `${match[1]} ${match[2]}`);
  }

  it("right after up, refresh --diff and preview --refresh --diff show nothing, internal or not", async () => {
    const refresh = await project.run(["refresh", "--diff", "--yes", "--expect-no-changes"]);
    const preview = await project.run(["preview", "--refresh", "--diff", "--expect-no-changes"]);
    for (const run of [refresh, preview]) {
      expect(markedProperties(run.output)).toEqual([]);
      expect(run.output).not.toMatch(/applied|policySetCount|__checked|__urn/);
    }
  }, 120_000);

  it("a raised level marks the level and nothing else", async () => {
    await project.writeFile("index.js", program("soft-mandatory"));
    const preview = await project.run(["preview", "--diff"]);
    expect(markedProperties(preview.output)).toEqual(["~ enforcementLevel"]);
    await project.writeFile("index.js", program("advisory"));
  }, 120_000);

  it("a rotated secret parameter is named, its value never", async () => {
    const rotated = "second-secret-value-5678";
    await project.run(["config", "set", "--secret", "apiKey", rotated]);
    const preview = await project.run(["preview", "--diff"]);
    expect(preview.output).toContain("~ 1 to update");
    expect(preview.output).toContain("parameters.api_key (secret) changed");
    expect(preview.output).not.toContain(rotated);
    expect(preview.output).not.toContain(secretValue);
    const up = await project.run(["up", "--yes"]);
    expect(up.output).toContain("parameters.api_key (secret) changed");
    // Nothing to say once it is applied.
    const again = await project.run(["preview", "--diff", "--expect-no-changes"]);
    expect(again.output).not.toContain("(secret) changed");
  }, 120_000);

  it("a change made outside shows as the property the service changed", async () => {
    const client = new TfeClient({ address: server.url, token, rateLimit: false });
    try {
      const policy = (await client.policies.list(organization)).items.find((p) => p.name === "restrict-types");
      await client.policies.update(policy?.id as string, { description: "changed outside" });
    } finally {
      await client.close();
    }
    const refresh = await project.run(["refresh", "--yes"]);
    expect(refresh.output).toMatch(/restrict-types updated .*\[diff: \+description\]/);
    expect(refresh.output).toContain("~ 1 updated");
  }, 120_000);
});
