import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TfeClient } from "../../src/client";
import { importMain, StreamProgress } from "../../src/importer/command";
import type { RunningServer } from "../../src/server";
import { installPlugin } from "../e2e/plugin-artifacts";
import { PulumiProject } from "../e2e/pulumi-project";
import { startSeededServer } from "../seeded-server";

// `tfe-governance import --language yaml|python`: the organization written as a YAML or a Python program on the
// plugin for other languages, then adopted under the real engine and that language's host, with the plugin and the
// SDK installed as the generated README says: `pulumi up` takes everything over without creating or deleting
// anything, and `pulumi preview --expect-no-changes` passes right after.

const run = promisify(execFile);
const organization = "acme";
const token = "import-languages-token-0123456789";
const setId = "polset-ImportLanguages1";
/** The seeded set's name (startSeededServer calls it so). */
const setName = "baseline";
const secretValue = "import-languages-secret-value-77";

let server: RunningServer;
let client: TfeClient;

beforeAll(async () => {
  server = await startSeededServer({
    organization,
    token,
    policySetId: setId,
    workspaceIds: ["ws-ImportLanguages001"],
    modules: [{ name: "vpc", provider: "aws", versions: ["1.0.0", "1.1.0"] }],
  });
  client = new TfeClient({ address: server.url, token, rateLimit: false });
  const create = async (name: string, options: Record<string, unknown>, code: string) => {
    const policy = await client.policies.create(organization, { name, ...options });
    await client.policies.upload(policy.id, code);
  };
  // A description with `${`, which Pulumi YAML reads as an interpolation unless written `$${`.
  await create(
    "require-tags",
    { description: "Tags like \u0024{owner} on everything", enforcementLevel: "soft-mandatory", policySetIds: [setId] },
    "main = rule { true }\n",
  );
  // A name that is a Python keyword: its variable must be another.
  await create("pass", { enforcementLevel: "hard-mandatory" }, "main = rule { true } # pass\n");
  await create(
    "deny-public",
    { kind: "opa", query: "data.terraform.deny", enforcementLevel: "mandatory" },
    'package terraform\n\ndeny[msg] { msg := "no public buckets" }\n',
  );
  await client.policySets.addToScope(setId, "workspaces", ["ws-ImportLanguages001"]);
  await client.policySets.createParameter(setId, { key: "region", value: "eu-west-1", sensitive: false });
  await client.policySets.createParameter(setId, { key: "api_key", value: secretValue, sensitive: true });
  await client.moduleVersions.deprecate({
    organization,
    name: "vpc",
    provider: "aws",
    version: "1.0.0",
    reason: "Use 1.1.0.",
    link: "https://example.com/vpc",
  });
}, 120_000);

afterAll(async () => {
  await client?.close();
  await server?.close();
});

async function importInto(directory: string, args: string[]): Promise<string> {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on("data", (chunk: Buffer) => chunks.push(chunk));
  const errors: string[] = [];
  const status = await importMain(
    ["--organization", organization, "--out", directory, "--module", `${organization}/vpc/aws`, "--force", ...args],
    {
      env: { TFE_ADDRESS: server.url, TFE_TOKEN: token },
      progress: new StreamProgress(new PassThrough()),
      out,
      log: (line) => errors.push(line),
    },
  );
  expect(status, errors.join("\n")).toBe(0);
  return Buffer.concat(chunks).toString();
}

describe.each([
  { language: "yaml", program: "Pulumi.yaml" },
  { language: "python", program: "__main__.py" },
])("tfe-governance import --language $language", ({ language, program }) => {
  let project: PulumiProject;
  const projectName = `tfe-governance-acme-program-${language}`;

  beforeAll(async () => {
    project = await PulumiProject.create({
      name: projectName,
      nodeModules: "own",
      files: {},
      config: {},
      engineLog: false,
    });
    // The stack was made under the project's default name, which --project keeps.
    const summary = await importInto(project.dir, ["--language", language, "--project", projectName]);
    expect(summary).toContain(`(program layout, ${language})`);
    const artifacts = await installPlugin(project);
    if (language === "python") {
      // README.md's step 1, with the wheel `npm run package` made.
      const venv = join(project.dir, "venv");
      await run("python3", ["-m", "venv", venv]);
      const pip = join(venv, "bin", "pip");
      await run(pip, ["install", "--quiet", artifacts.wheel], { maxBuffer: 16 << 20 });
      await run(pip, ["install", "--quiet", "-r", join(project.dir, "requirements.txt")], { maxBuffer: 16 << 20 });
      project.setEnv({ VIRTUAL_ENV: venv, PATH: `${join(venv, "bin")}:${process.env.PATH}` });
    }
    await project.run(["config", "set", "--secret", "tfegov:token", token]);
    // README.md's step 3: the sensitive parameter's value, under the key the program reads (`<set>-<parameter>`).
    await project.run(["config", "set", "--secret", `${setName}-api_key`, secretValue]);
  }, 300_000);

  afterAll(async () => {
    await project?.dispose();
  });

  it("writes the program in the language, with the settings under the plugin's name", async () => {
    const text = await readFile(join(project.dir, program), "utf8");
    const readme = await readFile(join(project.dir, "README.md"), "utf8");
    expect(readme).toContain("pulumi plugin install resource tfegov");
    expect(readme).toContain("pulumi config set --secret tfegov:token");
    expect(readme).not.toMatch(/\btfe:[a-z]/);
    if (language === "yaml") {
      expect(text).toContain("type: tfegov:index:Policy");
      expect(text).toContain('"Tags like $${owner} on everything"');
    } else {
      expect(text).toContain("import pulumi_tfegov as tfegov");
      expect(text).toMatch(/^passPolicy = tfegov\.Policy\($/m);
    }
  });

  it("adopts the organization with pulumi up, creating and deleting nothing, then previews with no changes", async () => {
    server.requestLog.clear();
    const up = await project.run(["up", "--yes", "--skip-preview"]);
    // The stack, three policies, the set and the deprecation.
    expect(up.output).toMatch(/\+ 6 created/);
    const writes = server.requestLog.entries().filter((entry) => entry.method !== "GET");
    // Only the sensitive parameter, whose value the service never shows, is sent, once.
    expect(writes.map((entry) => `${entry.method} ${entry.route}`)).toEqual([
      "PATCH /api/v2/policy-sets/:policySetId/parameters/:parameterId",
    ]);
    await project.run(["preview", "--expect-no-changes"]);
    const destroy = await project.run(["destroy", "--yes", "--skip-preview"], { allowFailure: true });
    expect(destroy.code).not.toBe(0);
    expect(destroy.output).toMatch(/protect/);
    expect((await client.policies.list(organization)).items).toHaveLength(3);
  }, 300_000);
});
