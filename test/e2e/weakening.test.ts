import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TfeClient } from "../../src/client";
import type { RunningServer } from "../../src/server";
import { startSeededServer } from "../seeded-server";
import { PulumiProject } from "./pulumi-project";
import { policiesOnService } from "./service-and-state";

// A change that weakens governance fails `pulumi preview` under the real engine, before any request, unless the
// program or the stack says it is intended: a Policy's level lowered, and a level lowered in a PolicyFolder's file.

const organization = "acme";
const token = "weakening-token-0123456789abcdef";

function program(levels: { policy: string; allow?: boolean; folderAllow?: boolean }): string {
  return [
    'const { Policy, PolicyFolder } = require("pulumi-tfe-governance");',
    `new Policy("guard", { name: "guard", enforcementLevel: ${JSON.stringify(levels.policy)},`,
    `  code: "main = rule { true }\\n", allowWeakening: ${levels.allow === true} });`,
    `new PolicyFolder("folder", { directory: "folder", allowWeakening: ${levels.folderAllow === true} });`,
  ].join("\n");
}

function sentinelHcl(level: string): string {
  return `policy "folder-rule" {\n  enforcement_level = "${level}"\n}\n`;
}

describe("weakening governance under the real engine", () => {
  let server: RunningServer;
  let client: TfeClient;
  let project: PulumiProject;

  const writes = () => server.requestLog.entries().filter((entry) => entry.method !== "GET");
  const levels = async () =>
    Object.fromEntries(
      (await policiesOnService(client, organization)).map((policy) => [policy.name, policy.enforcementLevel]),
    );

  beforeAll(async () => {
    server = await startSeededServer({ organization, token });
    client = new TfeClient({ address: server.url, token, rateLimit: false });
    project = await PulumiProject.create({
      name: "tfe-weakening",
      files: {
        "index.js": program({ policy: "hard-mandatory" }),
        "folder/sentinel.hcl": sentinelHcl("hard-mandatory"),
        "folder/folder-rule.sentinel": "main = rule { true }\n",
      },
      config: { "tfe:address": server.url, "tfe:organization": organization },
      secrets: { "tfe:token": token },
    });
    await project.up();
  }, 180_000);

  afterAll(async () => {
    await client?.close();
    await server?.close();
    await project?.dispose();
  });

  it("a lowered Policy level, or a level lowered in a folder's file, fails preview and up with no request", async () => {
    const attempts = [
      {
        policy: "advisory",
        folder: "hard-mandatory",
        named: /policy "guard" weakens governance: enforcementLevel goes from hard-mandatory to advisory/,
      },
      {
        policy: "hard-mandatory",
        folder: "soft-mandatory",
        named:
          /policy "folder-rule" (weakens governance: enforcementLevel )?goes from hard-mandatory to soft-mandatory/,
      },
    ];
    server.requestLog.clear();
    for (const attempt of attempts) {
      await project.writeFile("index.js", program({ policy: attempt.policy }));
      await project.writeFile("folder/sentinel.hcl", sentinelHcl(attempt.folder));
      for (const command of [["preview"], ["up", "--yes"]]) {
        const failed = await project.run(command, { allowFailure: true });
        expect(failed.code).not.toBe(0);
        expect(failed.output).toMatch(attempt.named);
        expect(failed.output).toMatch(/weakens (enforcement|governance).*allowWeakening: true/);
      }
    }
    expect(writes()).toEqual([]);
    expect(await levels()).toEqual({ guard: "hard-mandatory", "folder-rule": "hard-mandatory" });
  }, 180_000);

  it("allowWeakening on the resources lets the same changes through, and preview still says what weakens", async () => {
    await project.writeFile("index.js", program({ policy: "advisory", allow: true, folderAllow: true }));
    await project.writeFile("folder/sentinel.hcl", sentinelHcl("soft-mandatory"));
    const preview = await project.run(["preview"]);
    expect(preview.output).toMatch(
      /warning: policy "guard" weakens governance: enforcementLevel goes from hard-mandatory to advisory.*allowed/,
    );
    await project.run(["up", "--yes", "--skip-preview"]);
    expect(await levels()).toEqual({ guard: "advisory", "folder-rule": "soft-mandatory" });
  }, 180_000);

  it("raising needs nothing; lowering again is refused until the stack allows it with tfe:allowWeakening", async () => {
    await project.writeFile("index.js", program({ policy: "hard-mandatory" }));
    await project.writeFile("folder/sentinel.hcl", sentinelHcl("hard-mandatory"));
    await project.run(["up", "--yes", "--skip-preview"]);
    expect(await levels()).toEqual({ guard: "hard-mandatory", "folder-rule": "hard-mandatory" });

    await project.writeFile("index.js", program({ policy: "soft-mandatory" }));
    expect((await project.run(["preview"], { allowFailure: true })).code).not.toBe(0);
    await project.run(["config", "set", "tfe:allowWeakening", "true"]);
    await project.run(["up", "--yes", "--skip-preview"]);
    expect(await levels()).toEqual({ guard: "soft-mandatory", "folder-rule": "hard-mandatory" });
  }, 180_000);

  it("README's protect: taking a protected policy out of the program fails, and the policy stays", async () => {
    const guarded =
      '\nnew Policy("no-public-buckets", { code: "main = rule { true }\\n", enforcementLevel: "hard-mandatory" },\n' +
      "  { protect: true });\n";
    await project.writeFile("index.js", `${program({ policy: "soft-mandatory" })}${guarded}`);
    await project.run(["up", "--yes", "--skip-preview"]);
    await project.writeFile("index.js", program({ policy: "soft-mandatory" }));
    server.requestLog.clear();
    const failed = await project.run(["up", "--yes", "--skip-preview"], { allowFailure: true });
    expect(failed.code).not.toBe(0);
    expect(failed.output).toMatch(/no-public-buckets[\s\S]*protected/);
    expect(writes()).toEqual([]);
    expect(await levels()).toMatchObject({ "no-public-buckets": "hard-mandatory" });
  }, 180_000);
});
