import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TfeClient } from "../../src/client";
import type { RunningServer } from "../../src/server";
import { startSeededServer } from "../seeded-server";
import { PulumiProject } from "./pulumi-project";

// What fails at `up` must fail at `pulumi preview`, or a pull request's check passes and the main branch breaks:
// a name another object holds, a workspace or project that does not exist, a module version that does not. Under
// the real engine: each preview fails naming the fix, and sends nothing but reads.

const token = "preview-reads-token-0123456789";
const organization = "acme";
const workspace = "ws-previewReads0001";
const programSource = readFileSync(join(__dirname, "program", "index.js"), "utf8");
const code = "main = rule { true }\n";

describe("pulumi preview reads what up would meet, and fails there with no write", () => {
  let server: RunningServer;
  let project: PulumiProject;
  let outside: TfeClient;
  let theirPolicy: string;
  let theirSet: string;

  beforeAll(async () => {
    server = await startSeededServer({
      organization,
      token,
      workspaceIds: [workspace],
      modules: [{ name: "vpc", provider: "aws", versions: ["1.0.0", "1.1.0"] }],
    });
    outside = new TfeClient({ address: server.url, token, rateLimit: false });
    theirPolicy = (await outside.policies.create(organization, { name: "theirs", enforcementLevel: "advisory" })).id;
    theirSet = (await outside.policySets.create(organization, { name: "their-set" })).id;
    project = await PulumiProject.create({
      name: "tfe-governance-preview-reads",
      files: { "index.js": programSource, "spec.json": JSON.stringify({ policies: [], deprecations: [] }) },
      config: { "tfe:address": server.url, "tfe:organization": organization },
      secrets: { "tfe:token": token },
    });
  }, 120_000);

  afterAll(async () => {
    await outside?.close();
    await project?.dispose();
    await server?.close();
  });

  const policy = { resource: "mine", name: "mine", enforcementLevel: "advisory", code };
  const deprecation = { resource: "vpc", moduleName: "vpc", moduleProvider: "aws", version: "1.0.0", reason: "Old" };

  it.each([
    [
      "a policy name another object holds",
      { policies: [{ ...policy, name: "theirs" }] },
      (): string => `a policy named "theirs" already exists in organization "acme" (${theirPolicy})`,
    ],
    [
      "a policy set name another object holds",
      { policySets: [{ resource: "set", name: "their-set", policies: [] }] },
      (): string => `a policy set named "their-set" already exists in organization "acme" (${theirSet})`,
    ],
    [
      "a workspace that does not exist",
      { policySets: [{ resource: "set", name: "mine", workspaceIds: ["ws-doesNotExist0001"] }] },
      (): string => 'workspace ws-doesNotExist0001 does not exist in organization "acme"',
    ],
    [
      "a project that does not exist",
      { policySets: [{ resource: "set", name: "mine", global: true, excludedProjectIds: ["prj-doesNotExist001"] }] },
      (): string => 'project prj-doesNotExist001 does not exist in organization "acme"',
    ],
    [
      "a module version that does not exist",
      { deprecations: [{ ...deprecation, version: "1.2.0" }] },
      (): string => "version 1.2.0 of module acme/vpc/aws does not exist: it has 1.0.0, 1.1.0",
    ],
    [
      "a module the registry does not hold",
      { deprecations: [{ ...deprecation, moduleName: "vcp" }] },
      (): string => "module acme/vcp/aws is not in the private registry",
    ],
  ])(
    "%s",
    async (_case, declared, says) => {
      await project.writeFile("spec.json", JSON.stringify({ policies: [], deprecations: [], ...declared }));
      server.requestLog.clear();
      const preview = await project.run(["preview"], { allowFailure: true });
      expect(preview.code).not.toBe(0);
      expect(preview.output).toContain(says());
      const requests = server.requestLog.entries();
      expect(requests.length).toBeGreaterThan(0);
      expect(requests.filter((request) => request.method !== "GET")).toEqual([]);
    },
    120_000,
  );

  it("passes what exists and is free, adopts what it is told to, and up then writes it", async () => {
    const declared = {
      policies: [
        policy,
        { resource: "adopted", name: "theirs", enforcementLevel: "advisory", code, adoptExisting: true },
      ],
      policySets: [{ resource: "set", name: "mine", workspaceIds: [workspace], policies: ["mine"] }],
      deprecations: [deprecation],
    };
    await project.writeFile("spec.json", JSON.stringify(declared));
    await project.run(["preview"]);
    await project.up();
    await project.run(["preview", "--expect-no-changes"]);
    await project.run(["destroy", "--yes"]);
  }, 180_000);
});
