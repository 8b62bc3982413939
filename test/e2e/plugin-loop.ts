import { execFile } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TfeClient } from "../../src/client";
import type { RunningServer } from "../../src/server";
import { startSeededServer } from "../seeded-server";
import {
  hostPlatform,
  installPlugin,
  type PluginArtifacts,
  pathWithoutNode,
  pluginArtifacts,
  type ServedRelease,
  servedRelease,
} from "./plugin-artifacts";
import { PulumiProject } from "./pulumi-project";
import { policiesOnService } from "./service-and-state";
import { scanForTokens } from "./token-scan";

// The loop a team runs, from a program of another language through the plugin installed from its tarball as a user
// installs it, under the real engine and that language's real host, against the local server: preview, up, preview
// with no changes, secrets encrypted in state, a change made outside found by refresh, a lowered level refused with
// the library's message (then allowed), `pulumi import` writing code in the program's language, destroy. Each
// language says how its program reads (every resource kind and a read function) and how it is set up.

export const loopAccount = {
  organization: "acme",
  seededSetId: "polset-LoopSeeded00001",
  workspaceId: "ws-LoopProduction0001",
  secretCodeMarker: "loop-secret-code-marker-41c7",
  secretParameter: "loop-secret-parameter-9d02",
};

export interface ProgramOptions {
  level?: string;
  /** The guard's level argument misspelled, as a user might: the language's types must catch it. */
  typo?: boolean;
  allowWeakening?: boolean;
  /** The guard's rule, the last line of its secret code (default `main = rule { true }`). */
  rule?: string;
  /** Code `pulumi import` wrote, pasted into the program as its message tells a user to. */
  imported?: string;
}

export interface LanguageProgram {
  /** The language as the describe names it, and its host. */
  title: string;
  /** The project's name: its secret config is `<projectName>:apiKey`. */
  projectName: string;
  /** The files of the program (Pulumi.yaml among them) for these options. */
  program(options: ProgramOptions): Record<string, string>;
  /**
   * How the imported policy gets into the program: the code `pulumi import --out <file>` writes (where the host can
   * generate code), checked against `type`; or, where it cannot (Python's host v3.68 implements no GenerateProgram),
   * code written for it by hand from the policy's fields.
   */
  importCode:
    | { file: string; type: RegExp }
    | { handWritten(policy: { name: string; description: string; level: string; code: string }): string };
  /** An argument as the language writes it (`enforcementLevel` in YAML, `enforcement_level` in Python). */
  argument(name: string): string;
  /** An argument set to true as the language writes it (`allowWeakening: true`, `allow_weakening=True`). */
  argumentTrue(name: string): string;
  /** What the language says of the misspelled argument (ProgramOptions.typo) before any request. */
  typoMessage: RegExp;
  /**
   * Anything the language needs before the first command (a virtualenv), with the built artifacts and the PATH its
   * commands run with.
   */
  setUp?(project: PulumiProject, artifacts: PluginArtifacts, path: string): Promise<void>;
  /**
   * The plugin as a team of this language gets it: not installed by hand, but fetched by the engine from the
   * SDK's pluginDownloadURL (a release served over HTTP), on a machine with no Node.js on PATH.
   */
  downloaded?: boolean;
}

/** The folders the programs deploy: an uploaded policy set (with the parameters its policy reads) and a folder. */
const folders: Record<string, string> = {
  "policy-set/sentinel.hcl": 'policy "set-rule" {\n  enforcement_level = "hard-mandatory"\n}\n',
  "policy-set/set-rule.sentinel": 'param region\nparam apiKey\nmain = rule { region is not "" and apiKey is not "" }\n',
  "folder/sentinel.hcl": 'policy "folder-rule" {\n  enforcement_level = "soft-mandatory"\n}\n',
  "folder/folder-rule.sentinel": "main = rule { true }\n",
};

export function describePluginLoop(language: LanguageProgram): void {
  const { organization, seededSetId, workspaceId, secretCodeMarker, secretParameter } = loopAccount;
  const token = `${language.projectName}-token-0123456789abcdef`;
  const writeProgram = async (project: PulumiProject, options: ProgramOptions) => {
    for (const [path, content] of Object.entries(language.program(options))) await project.writeFile(path, content);
  };

  describe(`${language.title} program through the plugin, under the real engine and host`, () => {
    let server: RunningServer;
    let client: TfeClient;
    let project: PulumiProject;
    let release: ServedRelease | undefined;

    const levelOf = async (name: string) =>
      (await policiesOnService(client, organization)).find((policy) => policy.name === name)?.enforcementLevel;

    beforeAll(async () => {
      server = await startSeededServer({
        organization,
        token,
        policySetId: seededSetId,
        workspaceIds: [workspaceId],
        modules: [{ name: "vpc", provider: "aws", versions: ["1.0.0", "1.1.0"] }],
      });
      client = new TfeClient({ address: server.url, token, rateLimit: false });
      project = await PulumiProject.create({
        name: language.projectName,
        nodeModules: "own",
        files: { ...folders, ...language.program({}) },
        config: { "tfegov:address": server.url, "tfegov:organization": organization },
        secrets: { "tfegov:token": token, [`${language.projectName}:apiKey`]: secretParameter },
        engineLog: false,
      });
      if (language.downloaded) {
        release = await servedRelease();
        const path = await pathWithoutNode(process.env.PATH ?? "", join(project.dir, ".path"));
        project.setEnv({ PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "false", PATH: path });
        const artifacts = { ...(await pluginArtifacts()), wheel: release.wheel };
        await language.setUp?.(project, artifacts, path);
      } else {
        const artifacts = await installPlugin(project);
        await language.setUp?.(project, artifacts, process.env.PATH ?? "");
      }
    }, 240_000);

    afterAll(async () => {
      await client?.close();
      await server?.close();
      await release?.close();
      await project?.dispose();
    });

    if (language.downloaded) {
      it("gets the plugin from the release the SDK names, with no Node.js on PATH", async () => {
        const noNode = await promisify(execFile)("sh", ["-c", "command -v node"], {
          env: { PATH: project.env.PATH },
        }).then(
          () => "found",
          () => "none",
        );
        expect(noNode).toBe("none");
        const plugins = join(project.env.PULUMI_HOME as string, "plugins");
        expect(await readdir(plugins).catch(() => [])).toEqual([]);
        await project.run(["preview"]);
        const { version } = await pluginArtifacts();
        expect(release?.requests).toContain(
          `/releases/v${version}/pulumi-resource-tfegov-v${version}-${hostPlatform}.tar.gz`,
        );
        // The executable itself: no Node.js on this PATH could run a script.
        const installed = await readdir(join(plugins, `resource-tfegov-v${version}`));
        expect(installed).toContain("pulumi-resource-tfegov");
        expect(installed).not.toContain("plugin.js");
      }, 240_000);
    }

    it("stops a misspelled argument at preview, before any request", async () => {
      await writeProgram(project, { typo: true });
      const typo = await project.run(["preview"], { allowFailure: true });
      expect(typo.code).not.toBe(0);
      expect(typo.output).toMatch(language.typoMessage);
      // A misspelled value: named once, as the program spells the argument (not the schema's name beside it).
      await writeProgram(project, { level: "hard-mandatry" });
      const value = await project.run(["preview"], { allowFailure: true });
      expect(value.code).not.toBe(0);
      const argument = language.argument("enforcementLevel");
      expect(value.output).toContain(`${argument} "hard-mandatry" is not`);
      if (argument !== "enforcementLevel") expect(value.output).not.toContain("enforcementLevel");
      expect(server.requestLog.entries().filter((entry) => entry.method !== "GET")).toEqual([]);
      await writeProgram(project, {});
    }, 240_000);

    it("previews, deploys every resource kind and a read function, then previews with no changes", async () => {
      const preview = await project.run(["preview"]);
      expect(preview.output).toMatch(/\+ 7 to create/);
      expect(server.requestLog.entries().filter((entry) => entry.method !== "GET")).toEqual([]);

      const up = await project.up();
      expect(up.output).toContain("seededSetName");
      const names = (await policiesOnService(client, organization)).map((policy) => policy.name).sort();
      expect(names).toEqual(["folder-rule", "guard"]);
      expect(await levelOf("guard")).toBe("hard-mandatory");
      const deprecated = await client.registry.getModuleVersion({
        namespace: organization,
        name: "vpc",
        provider: "aws",
        version: "1.0.0",
      });
      expect(deprecated.deprecation?.reason).toContain("Use 1.1.0");
      const sets = await client.policySets.list(organization);
      const uploaded = sets.items.find((set) => set.name === "uploaded");
      expect(uploaded?.workspaceIds).toEqual([workspaceId]);
      const parameters = await client.policySets.listParameters(uploaded?.id as string);
      expect(parameters.map((parameter) => [parameter.key, parameter.sensitive]).sort()).toEqual([
        ["apiKey", true],
        ["region", false],
      ]);

      await project.run(["preview", "--expect-no-changes"]);
      // The component records its outputs in state, as a component of the program's own language does.
      const state = JSON.parse(await project.exportState());
      const component = state.deployment.resources.find(
        (resource: { type: string }) => resource.type === "tfegov:index:PolicyFolder",
      );
      expect(Object.keys(component?.outputs?.policyIds ?? {})).toEqual(["folder-rule"]);
    }, 240_000);

    it("shows a change as the properties the program wrote: the code, the one rotated secret parameter", async () => {
      const rotated = "loop-rotated-parameter-5e1a";
      await writeProgram(project, { rule: "main = rule { 1 is 1 }" });
      await project.run(["config", "set", "--secret", `${language.projectName}:apiKey`, rotated]);
      const preview = await project.run(["preview", "--diff"]);
      await writeProgram(project, {});
      await project.run(["config", "set", "--secret", `${language.projectName}:apiKey`, secretParameter]);
      expect(preview.output).toMatch(/~ code\s*: \[secret\] => \[secret\]/);
      expect(preview.output).toMatch(/~ apiKey\s*: \[secret\] => \[secret\]/);
      // Not what the provider derives or keeps for itself, nor the parameter that did not change.
      expect(preview.output).not.toMatch(/codeHash|codeSize|adoptExisting|allowWeakening|__|region/);
      expect(preview.output).not.toContain(rotated);
      expect(preview.output).toMatch(/~ 2 to update/);
    }, 240_000);

    it("keeps the token, the secret code and the secret parameter encrypted in state", async () => {
      const state = await project.stateText();
      expect(state).not.toContain(secretCodeMarker);
      expect(state).not.toContain(secretParameter);
      const scan = await scanForTokens([token, secretParameter], project, [server]);
      expect(scan.hits).toEqual([]);
    }, 120_000);

    it("finds a level lowered outside the program with preview --refresh, and up puts it back", async () => {
      const guard = (await policiesOnService(client, organization)).find((policy) => policy.name === "guard");
      await client.policies.update(guard?.id as string, { enforcementLevel: "advisory" });
      const drift = await project.run(["preview", "--refresh", "--expect-no-changes", "--diff"], {
        allowFailure: true,
      });
      expect(drift.code).not.toBe(0);
      expect(drift.output).toMatch(/enforcementLevel\s*:\s*"advisory"\s*=>\s*"hard-mandatory"/);
      await project.run(["up", "--yes", "--refresh", "--skip-preview"]);
      expect(await levelOf("guard")).toBe("hard-mandatory");
    }, 240_000);

    it("refuses a lowered level at preview with the library's message, then lets it through when allowed", async () => {
      await writeProgram(project, { level: "advisory" });
      const refused = await project.run(["preview"], { allowFailure: true });
      expect(refused.code).not.toBe(0);
      // Arguments as the program's language writes them; the stack setting as stack config spells it.
      expect(refused.output).toContain(
        `policy "guard" weakens governance: ${language.argument("enforcementLevel")} goes from hard-mandatory to advisory`,
      );
      expect(refused.output).toContain(`set ${language.argumentTrue("allowWeakening")} on this resource`);
      // The settings the message names are the plugin's, as the program's stack config spells them.
      expect(refused.output).toContain("pulumi config set tfegov:allowWeakening true");
      expect(refused.output).not.toMatch(/\btfe:allowWeakening/);
      expect(await levelOf("guard")).toBe("hard-mandatory");

      await writeProgram(project, { level: "advisory", allowWeakening: true });
      const allowed = await project.run(["up", "--yes", "--skip-preview"]);
      expect(allowed.output).toContain(`allowed by ${language.argument("allowWeakening")}`);
      expect(await levelOf("guard")).toBe("advisory");
    }, 240_000);

    it("imports a policy made outside Pulumi into code that previews with no changes once pasted", async () => {
      const description = "Made in the UI.";
      const outsideCode = "main = rule { true }\n";
      const outside = await client.policies.create(organization, {
        name: "made-outside",
        kind: "sentinel",
        enforcementLevel: "soft-mandatory",
        description,
      });
      await client.policies.upload(outside.id, outsideCode);

      const missing = await project.run(["import", "tfegov:index:Policy", "ghost", "pol-DoesNotExist0001", "--yes"], {
        allowFailure: true,
      });
      expect(missing.code).not.toBe(0);
      expect(missing.output).toMatch(/does not exist/);

      const importCode = language.importCode;
      const generated = "file" in importCode;
      const imported = await project.run([
        "import",
        "tfegov:index:Policy",
        "made-outside",
        outside.id,
        "--yes",
        "--protect=false",
        ...(generated ? ["--out", importCode.file] : ["--generate-code=false"]),
      ]);
      expect(imported.output).toMatch(/1 imported/);
      const code = generated
        ? await readFile(join(project.dir, importCode.file), "utf8")
        : importCode.handWritten({ name: "made-outside", description, level: "soft-mandatory", code: outsideCode });
      if (generated) expect(code).toMatch(importCode.type);
      await writeProgram(project, { level: "advisory", allowWeakening: true, imported: code });
      await project.run(["preview", "--expect-no-changes"]);
    }, 240_000);

    it("destroys what it made and leaves what it did not", async () => {
      await project.run(["destroy", "--yes", "--skip-preview"]);
      const left = (await policiesOnService(client, organization)).map((policy) => policy.name);
      expect(left).toEqual([]);
      const sets = (await client.policySets.list(organization)).items.map((set) => set.id);
      expect(sets).toEqual([seededSetId]);
      const version = await client.registry.getModuleVersion({
        namespace: organization,
        name: "vpc",
        provider: "aws",
        version: "1.0.0",
      });
      expect(version.deprecation).toBeFalsy();
    }, 240_000);
  });
}
