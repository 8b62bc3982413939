import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TfeClient } from "../../src/client";
import type { RunningServer } from "../../src/server";
import { startSeededServer } from "../seeded-server";
import { PulumiProject } from "./pulumi-project";

// The Pulumi resources under the real engine against the local server in https mode (its self-signed
// certificate): trusted through NODE_EXTRA_CA_CERTS, the way any Node.js program trusts a private CA, and through
// the tfe:caCertificate stack setting; refused with neither.

const token = "e2e-tls-token-0123456789";
const organization = "acme";
const programSource = readFileSync(join(__dirname, "program", "index.js"), "utf8");
const code = 'main = rule { all tfplan.resources as _, r { r.applied.tags contains "owner" } }\n';

describe("the Pulumi resources against the server over https", () => {
  let server: RunningServer;
  let project: PulumiProject;
  let client: TfeClient;
  let certificateFile: string;

  beforeAll(async () => {
    server = await startSeededServer(
      { organization, token, modules: [{ name: "vpc", provider: "aws", versions: ["1.0.0"] }] },
      { tls: "self-signed" },
    );
    client = new TfeClient({ address: server.url, token, rateLimit: false, caCertificate: server.certificate });
    project = await PulumiProject.create({
      name: "tfe-governance-tls",
      files: { "index.js": programSource, "policies/require-tags.sentinel": code, "cert.pem": server.certificate! },
      config: { "tfe:address": server.url, "tfe:organization": organization },
      secrets: { "tfe:token": token },
    });
    certificateFile = join(project.dir, "cert.pem");
    await project.writeFile(
      "spec.json",
      JSON.stringify({
        policies: [
          { resource: "require-tags", enforcementLevel: "soft-mandatory", codeFile: "policies/require-tags.sentinel" },
        ],
        deprecations: [
          { resource: "vpc-1", moduleName: "vpc", moduleProvider: "aws", version: "1.0.0", reason: "Use 2.x." },
        ],
      }),
    );
  }, 120_000);

  afterAll(async () => {
    await client?.close();
    await server?.close();
    await project?.dispose();
  });

  it("up creates the policy and the deprecation with NODE_EXTRA_CA_CERTS, and refresh finds no drift", async () => {
    expect(server.url).toMatch(/^https:/);
    const trusted = { env: { NODE_EXTRA_CA_CERTS: certificateFile } };
    await project.run(["up", "--yes", "--skip-preview"], trusted);
    const policies = [];
    for await (const policy of client.policies.listAll(organization)) policies.push(policy);
    expect(policies.map((policy) => policy.name)).toEqual(["require-tags"]);
    expect((await client.policies.download(policies[0]!.id)).toString()).toBe(code);
    const version = await client.registry.getModuleVersion({
      namespace: organization,
      name: "vpc",
      provider: "aws",
      version: "1.0.0",
    });
    expect(version.deprecation?.reason).toMatch(/^Use 2\.x\./);
    // Refresh reads the policy and downloads its code through the https redirect.
    await project.run(["preview", "--refresh", "--expect-no-changes"], trusted);
  }, 240_000);

  it("is refused without trust, naming the certificate and the ways to trust it; tfe:caCertificate trusts it", async () => {
    const refused = await project.run(["preview", "--refresh", "--expect-no-changes"], { allowFailure: true });
    expect(refused.code).not.toBe(0);
    expect(refused.output).toMatch(/certificate/i);
    expect(refused.output).toContain("tfe:caCertificate");
    expect(refused.output).not.toContain(token);

    await project.run(["config", "set", "tfe:caCertificate", certificateFile]);
    // A refresh configures providers as the last update left them, so the new setting takes effect with an up
    // (which needs no request here: nothing changed).
    await project.run(["up", "--yes", "--skip-preview"]);
    await project.run(["preview", "--refresh", "--expect-no-changes"]);
    await project.run(["destroy", "--yes", "--skip-preview"]);
    const left = [];
    for await (const policy of client.policies.listAll(organization)) left.push(policy);
    expect(left).toEqual([]);
  }, 240_000);
});
