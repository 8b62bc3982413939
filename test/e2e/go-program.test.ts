import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TfeClient } from "../../src/client";
import type { RunningServer } from "../../src/server";
import { startSeededServer } from "../seeded-server";
import { hostPlatform, pathWithoutNode, pluginArtifacts, type ServedRelease, servedRelease } from "./plugin-artifacts";
import { PulumiProject } from "./pulumi-project";
import { policiesOnService } from "./service-and-state";

// A Go program on the generated Go SDK (the module folder the packaging ships, made for a release's download URL),
// the plugin fetched by the engine itself, on a machine with no Node.js on PATH, run by Pulumi's Go language host:
// the newest the Go module proxy serves is v3.66.0's, from the sdk/v3 module, which builds and runs a program on the
// Go SDK of today under CLI 3.259.

const run = promisify(execFile);
const organization = "acme";
const token = "go-program-token-0123456789abcdef";

const program = (level: string) => `package main

import (
	"github.com/pulumi-tfe-governance/pulumi-tfe-governance/sdk/go/tfegov"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

func main() {
	pulumi.Run(func(ctx *pulumi.Context) error {
		guard, err := tfegov.NewPolicy(ctx, "guard", &tfegov.PolicyArgs{
			Code:             pulumi.ToSecret(pulumi.String("main = rule { true }\\n")).(pulumi.StringOutput),
			EnforcementLevel: pulumi.String("${level}"),
		})
		if err != nil {
			return err
		}
		_, err = tfegov.NewModuleVersionDeprecation(ctx, "deprecation", &tfegov.ModuleVersionDeprecationArgs{
			ModuleName:     pulumi.String("vpc"),
			ModuleProvider: pulumi.String("aws"),
			Version:        pulumi.String("1.0.0"),
			Reason:         pulumi.String("Use 1.1.0."),
		})
		if err != nil {
			return err
		}
		ctx.Export("guardId", guard.ID())
		return nil
	})
}
`;

describe("a Go program through the plugin, under the real engine and Go host", () => {
  let server: RunningServer;
  let client: TfeClient;
  let project: PulumiProject;
  let release: ServedRelease;

  beforeAll(async () => {
    server = await startSeededServer({
      organization,
      token,
      modules: [{ name: "vpc", provider: "aws", versions: ["1.0.0", "1.1.0"] }],
    });
    client = new TfeClient({ address: server.url, token, rateLimit: false });
    project = await PulumiProject.create({
      name: "tfegov-go",
      nodeModules: "own",
      files: { "Pulumi.yaml": "name: tfegov-go\nruntime: go\n", "main.go": program("hard-mandatory") },
      config: { "tfegov:address": server.url, "tfegov:organization": organization },
      secrets: { "tfegov:token": token },
      engineLog: false,
    });
    // The plugin is not installed: the engine fetches it from the release the Go SDK names, on a PATH with no Node.
    release = await servedRelease();
    const path = await pathWithoutNode(process.env.PATH ?? "", join(project.dir, ".path"));
    project.setEnv({ PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "false", PATH: path });
    const sdk = release.goSdk;
    await project.writeFile(
      "go.mod",
      "module tfegovgo\n\ngo 1.25.6\n\nrequire github.com/pulumi-tfe-governance/pulumi-tfe-governance/sdk/go v0.1.0\n\n" +
        `replace github.com/pulumi-tfe-governance/pulumi-tfe-governance/sdk/go => ${sdk}\n`,
    );
    await run("go", ["mod", "tidy"], { cwd: project.dir, env: { ...process.env, GOFLAGS: "-mod=mod" } });
  }, 300_000);

  afterAll(async () => {
    await client?.close();
    await server?.close();
    await release?.close();
    await project?.dispose();
  });

  it("gets the plugin from the release, previews, deploys, previews with no changes, refuses a lowered level, and destroys", async () => {
    await run("go", ["vet", "./..."], { cwd: release.goSdk });
    const preview = await project.run(["preview"]);
    expect(preview.output).toMatch(/\+ 3 to create/);
    const { version } = await pluginArtifacts();
    expect(release.requests).toEqual([
      `/releases/v${version}/pulumi-resource-tfegov-v${version}-${hostPlatform}.tar.gz`,
    ]);
    await project.up();
    const guard = (await policiesOnService(client, organization)).find((policy) => policy.name === "guard");
    expect(guard?.enforcementLevel).toBe("hard-mandatory");
    await project.run(["preview", "--expect-no-changes"]);

    await project.writeFile("main.go", program("advisory"));
    const refused = await project.run(["preview"], { allowFailure: true });
    expect(refused.code).not.toBe(0);
    // Arguments as Go writes them.
    expect(refused.output).toContain("weakens governance: EnforcementLevel goes from hard-mandatory to advisory");
    expect(refused.output).toContain("set AllowWeakening: pulumi.Bool(true) on this resource");

    await project.writeFile("main.go", program("hard-mandatory"));
    await project.run(["destroy", "--yes", "--skip-preview"]);
    expect(await policiesOnService(client, organization)).toEqual([]);
  }, 300_000);
});
