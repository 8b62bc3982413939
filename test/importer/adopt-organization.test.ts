import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CreatePolicyOptions, TfeClient } from "../../src/client";
import { collectFolder, packFiles } from "../../src/policy-code/archive";
import { type RequestLogEntry, type RunningServer, startServer } from "../../src/server";
import { changeSummary, PulumiProject } from "../e2e/pulumi-project";
import { GitRepository, thirdGenerationLibrary } from "../vcs-repository";

// The whole migration of an organization, as a user does it: `tfe-governance import` (the built bin), then
// `pulumi up` of the generated program under the real engine, against the local server holding 150 policies
// and deprecated module versions. The generated program resolves `pulumi-tfe-governance` to this checkout's
// dist/, so the library must be built first (`npm test` does; alone: `npm run build`).

const run = promisify(execFile);
const repoRoot = resolve(__dirname, "..", "..");
const bin = join(repoRoot, "dist", "cli", "tfe-governance.js");
const organization = "acme";
const token = "adopt-organization-token-01";
const sentinelSets = ["polset-adoptA0000001", "polset-adoptB0000001", "polset-adoptC0000001"];
/** A set holds policies of one kind: OPA policies join sets of their own. */
const opaSets = ["polset-adoptOpaA00001", "polset-adoptOpaB00001", "polset-adoptOpaC00001"];
const policyCount = 150;

/**
 * Names a program or a folder cannot use as they are, among plain ones: reserved words, CommonJS's own names, a
 * device name, a name a folder would load as an OPA test (index 8 is an OPA policy).
 */
const awkwardNames = [
  ...["require-tags", "Require-Tags", "require_tags", "delete", "1st-check", "con", "organization"],
  ...["require", "deny_test", "exports", "module"],
];
/** OPA policies (index % 3 === 2) of one package with rules of the same name: a folder must not load them together. */
const sharedPackage = new Set([11, 14]);

interface SeededPolicy extends CreatePolicyOptions {
  code: string;
}

function seededPolicy(index: number): SeededPolicy {
  const name = awkwardNames[index] ?? `policy-${String(index).padStart(3, "0")}`;
  const opa = index % 3 === 2;
  const kindSets = opa ? opaSets : sentinelSets;
  const sets = [[], [kindSets[0]!], [kindSets[1]!], [kindSets[0]!, kindSets[2]!]][index % 4]!;
  const descriptions = [
    ...[null, `Policy ${index}`, `Says "why" \\ ${"${"}and more}\non two lines`, "Ünïcödé ✓", ""],
    "Ends in a newline\n",
  ];
  const base = { name, description: descriptions[index % descriptions.length]!, policySetIds: sets };
  if (opa) {
    const regoPackage = sharedPackage.has(index) ? "terraform.shared" : `terraform.p${index}`;
    return {
      ...base,
      kind: "opa",
      query: `data.${regoPackage}.deny`,
      enforcementLevel: (["mandatory", "advisory"] as const)[index % 2]!,
      // Rego v1 with import rego.v1: the sets run on latest, which the service evaluates with OPA 0.61.
      code: `package ${regoPackage}\n\nimport rego.v1\n\ndefault allowed := ${index % 2 === 0}\n\ndeny contains msg if { false; msg := "${index}" }\n`,
    };
  }
  return {
    ...base,
    kind: "sentinel",
    enforcementLevel: (["hard-mandatory", "soft-mandatory", "advisory"] as const)[index % 3]!,
    code: `# policy ${index}\nmain = rule { true }\n`,
  };
}

async function inBatches<T>(items: T[], size: number, work: (item: T) => Promise<void>): Promise<void> {
  for (let start = 0; start < items.length; start += size)
    await Promise.all(items.slice(start, start + size).map(work));
}

async function filesUnder(directory: string): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  for (const entry of await readdir(directory, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    files[path.slice(directory.length + 1)] = await readFile(path, "utf8");
  }
  return files;
}

/**
 * A service holding `count` policies across kinds, levels, descriptions and policy sets, one without code, and two
 * deprecated versions of acme/vpc/aws: seeded without a rate limit, then served with the service's own (30 per
 * second per token) from the same data.
 */
/** The folder the uploaded set holds: a module and a parameter, as a versioned set carries them. */
const uploadedFolder: Record<string, string> = {
  "sentinel.hcl":
    'module "functions" {\n  source = "./functions.sentinel"\n}\n\nparam "max_instances" {\n  value = 5\n}\n\n' +
    'policy "limit" {\n  source            = "./limit.sentinel"\n  enforcement_level = "hard-mandatory"\n}\n',
  "functions.sentinel": "count = func(t) { return 0 }\n",
  "limit.sentinel":
    'import "functions"\nparam max_instances\nparam api_token\nmain = rule { functions.count("x") <= max_instances }\n',
};
const workspace = "ws-adoptProduction01";
const oauthTokenId = "ot-adoptLibrary00001";
const sensitiveValue = "s3cr3t-api-token";
/**
 * The only writes of adopting the organization: the service offers no download of a version's files, so the
 * folder of each uploaded set (Sentinel and Terraform policy) goes up once, and it never shows a sensitive value, so
 * that parameter is sent once.
 */
const adoptionWrites = [
  "PATCH /api/v2/policy-sets/:policySetId/parameters/:parameterId",
  ...["POST /api/v2/policy-sets/:policySetId/versions", "POST /api/v2/policy-sets/:policySetId/versions"],
  ...["PUT /policy-set-versions/:versionId/upload", "PUT /policy-set-versions/:versionId/upload"],
];
/** A Terraform policy set uploaded as versions: the quickstart's folder, its input-driven level set by a parameter. */
const terraformPolicyFolder = join(repoRoot, "examples", "quickstart", "policy-sets", "terraform-policy");
/** The sets the service holds: three of Sentinel policies, three of OPA ones, three of folders. */
const policySetCount = 9;

async function seededService(dataDir: string, seeded: SeededPolicy[]): Promise<RunningServer> {
  const library = GitRepository.create(thirdGenerationLibrary, join(dataDir, "policy-library"));
  const seed = {
    organizations: [{ name: organization, plus: true }],
    tokens: [{ token, organizations: [organization] }],
    policySets: [
      ...sentinelSets.map((id, index) => ({ id, organization, name: `set-${index}` })),
      ...opaSets.map((id, index) => ({ id, organization, name: `opa-set-${index}`, kind: "opa" as const })),
    ],
    workspaces: [{ id: workspace, organization, name: "production" }],
    modules: [{ organization, name: "vpc", provider: "aws", versions: ["1.0.0", "1.1.0", "2.0.0"] }],
    vcsRepositories: [{ identifier: "acme/policy-library", path: library.path }],
    oauthTokens: [{ id: oauthTokenId, organization }],
  };
  const data = join(dataDir, "service.sqlite");
  const seeding = await startServer({ seed, data });
  const seedingClient = new TfeClient({ address: seeding.url, token, rateLimit: false });
  await inBatches(seeded, 10, async ({ code, ...options }) => {
    const policy = await seedingClient.policies.create(organization, options);
    await seedingClient.policies.upload(policy.id, code);
  });
  await seedingClient.policies.create(organization, { name: "no-code", enforcementLevel: "advisory" });
  const version = (v: string) => ({ organization, name: "vpc", provider: "aws", version: v });
  await seedingClient.moduleVersions.deprecate({
    ...version("1.0.0"),
    reason: "Creates a NAT gateway per subnet; use 2.0.0.",
    link: "https://example.com/vpc/2",
  });
  await seedingClient.moduleVersions.deprecate({ ...version("1.1.0"), reason: "Broken routes." });
  // Scope on the sets of policies, and the two other kinds of sets: a folder uploaded as versions, with a plain and
  // a sensitive parameter, and a set read from version control.
  await seedingClient.policySets.addToScope(sentinelSets[0]!, "workspaces", [workspace]);
  await seedingClient.policySets.update(opaSets[1]!, { global: true });
  await seedingClient.policySets.addToScope(opaSets[1]!, "workspace-exclusions", [workspace]);
  const uploaded = await seedingClient.policySets.create(organization, {
    name: "uploaded-library",
    description: "A folder uploaded as versions",
    workspaceIds: [workspace],
  });
  const first = await seedingClient.policySets.createVersion(uploaded.id);
  await seedingClient.policySets.uploadVersion(
    first,
    packFiles(new Map(Object.entries(uploadedFolder).map(([path, text]) => [path, Buffer.from(text)]))),
  );
  await seedingClient.policySets.createParameter(uploaded.id, { key: "max_instances", value: "5", sensitive: false });
  await seedingClient.policySets.createParameter(uploaded.id, {
    key: "api_token",
    value: sensitiveValue,
    sensitive: true,
  });
  const terraformPolicy = await seedingClient.policySets.create(organization, {
    name: "terraform-policy-library",
    kind: "tfpolicy",
    workspaceIds: [workspace],
  });
  await seedingClient.policySets.uploadVersion(
    await seedingClient.policySets.createVersion(terraformPolicy.id),
    packFiles(collectFolder(terraformPolicyFolder).files),
  );
  await seedingClient.policySets.createParameter(terraformPolicy.id, {
    key: "require_tags_level",
    value: "mandatory_overridable",
    sensitive: false,
  });
  await seedingClient.policySets.create(organization, {
    name: "vcs-library",
    global: true,
    vcsRepo: { identifier: "acme/policy-library", branch: "main", oauthTokenId },
    policiesPath: "policies/aws",
  });
  await seedingClient.close();
  await seeding.close();
  return startServer({ seed, data, rateLimit: 30 });
}

/** `tfe-governance import` as a user runs it (the built bin), with the token in the environment. */
function runImport(server: RunningServer, args: string[]) {
  return run(process.execPath, [bin, "import", "--organization", organization, ...args], {
    env: { ...process.env, TFE_ADDRESS: server.url, TFE_TOKEN: token, TFE_HOSTNAME: "" },
  });
}

/** Every policy and set of the organization and the deprecated versions of vpc, by name. */
async function everythingOnService(client: TfeClient): Promise<string[]> {
  const names: string[] = [];
  for await (const policy of client.policies.listAll(organization)) names.push(`policy ${policy.name}`);
  for await (const set of client.policySets.listAll(organization)) names.push(`set ${set.name}`);
  const versions = await client.registry.listModuleVersions({ namespace: organization, name: "vpc", provider: "aws" });
  for (const { version, deprecation } of versions) if (deprecation) names.push(`vpc ${version} deprecated`);
  return names.sort();
}

/** What the README asks of the user: each uploaded set's folder, as version control holds it. */
function putFoldersIn(files: Record<string, string>): void {
  for (const [path, text] of Object.entries(uploadedFolder)) files[`policy-sets/uploaded-library/${path}`] = text;
  for (const [path, bytes] of collectFolder(terraformPolicyFolder).files) {
    files[`policy-sets/terraform-policy-library/${path}`] = Buffer.from(bytes).toString("utf8");
  }
}

/** The routes of the scenario's writes, sorted: what a run changed on the service. */
function writtenRoutes(context: Scenario): string[] {
  return context
    .writes()
    .map((entry) => `${entry.method} ${entry.route}`)
    .sort();
}

/** One scenario's service and project: seeded before its tests, closed after them. */
interface Scenario {
  dataDir: string;
  server: RunningServer;
  client: TfeClient;
  project: PulumiProject;
  /** Requests that change something on the service. */
  writes(): RequestLogEntry[];
}

function scenario(prefix: string, seeded: SeededPolicy[]): Scenario {
  const context = {
    writes: () => context.server.requestLog.entries().filter((entry) => entry.method !== "GET"),
  } as Scenario;
  beforeAll(async () => {
    if (!existsSync(bin)) throw new Error(`${bin} is missing: run "npm run build" first`);
    context.dataDir = await mkdtemp(join(tmpdir(), prefix));
    context.server = await seededService(context.dataDir, seeded);
    context.client = new TfeClient({ address: context.server.url, token });
  }, 180_000);
  afterAll(async () => {
    await context.client?.close();
    await context.server?.close();
    await context.project?.dispose();
    if (context.dataDir) await rm(context.dataDir, { recursive: true, force: true });
  });
  return context;
}

describe("import, then pulumi up adopts an organization of 150 policies", () => {
  const seeded = Array.from({ length: policyCount }, (_, index) => seededPolicy(index));
  const context = scenario("adopt-organization-", seeded);
  const rateLimited = () => context.server.requestLog.entries().filter((entry) => entry.status === 429);

  it("1. import writes the project with reads only, within the service's rate limit", async () => {
    const out = join(context.dataDir, "project");
    context.server.requestLog.clear();
    const { stdout, stderr } = await runImport(context.server, ["--out", out, "--module", `${organization}/vpc/aws`]);
    expect(context.writes()).toEqual([]);
    expect(rateLimited()).toEqual([]);
    expect(stderr).toMatch(/listing policies: 151 listed/);
    expect(stdout).toMatch(/150 policies \(100 Sentinel, 50 OPA\)/);
    expect(stdout).toMatch(/2 module version deprecations/);
    expect(stdout).toMatch(/no-code: the service holds no code/);

    expect(stdout).toMatch(new RegExp(`${policySetCount} policy sets`));
    const files = await filesUnder(out);
    expect(Object.keys(files).filter((path) => path.startsWith("policies/"))).toHaveLength(policyCount);
    expect(files["Pulumi.yaml"]).toMatch(/^main: index\.ts$/m);
    expect(files["Pulumi.yaml"]).toMatch(/^name: tfe-governance-acme-program$/m);
    expect(files["index.ts"]).toContain('"api_token": config.requireSecret("uploaded-library-api_token")');
    expect(files["index.ts"]).toContain(
      'vcsRepo: { identifier: "acme/policy-library", branch: "main", oauthTokenId: "ot-adoptLibrary00001" }',
    );
    expect(files["index.ts"]).toMatch(
      /new PolicySet\("terraform-policy-library", \{\n {2}organization,\n {2}kind: "tfpolicy",\n[^}]*directory: "policy-sets\/terraform-policy-library".*?"require_tags_level": "mandatory_overridable"/s,
    );
    expect(files["README.md"]).toContain("pulumi config set --secret uploaded-library-api_token <value>");
    expect(files["README.md"]).toMatch(/set read from version control[\s\S]*`vcsCheckout`/);
    expect(JSON.stringify(files)).not.toContain(sensitiveValue);
    // What the README asks of the user: the uploaded set's folder, and the sensitive parameter's value.
    putFoldersIn(files);
    context.project = await PulumiProject.create({
      name: "adopt-organization",
      files,
      config: {},
      secrets: { "tfe:token": token, "uploaded-library-api_token": sensitiveValue },
    });
  }, 180_000);

  it("2. pulumi up adopts every policy, set and deprecation, writing only the uploaded sets' folders and the secret", async () => {
    // What an uploaded set holds now cannot be read, so the folder put in its place cannot be compared with it:
    // refused, with no write, until the one run is approved, as the generated README says.
    expect(await readFile(join(context.project.dir, "README.md"), "utf8")).toContain(
      "`TFE_ALLOW_WEAKENING=true pulumi up`",
    );
    context.server.requestLog.clear();
    const refused = await context.project.run(["preview"], { allowFailure: true });
    expect(refused.code).not.toBe(0);
    expect(refused.output).toMatch(
      // Pulumi stops at the first refused resource it meets, and its order varies: any of the three sets.
      /adopting policy set "(uploaded-library|terraform-policy-library|vcs-library)" \(polset-\w+\) cannot be compared with what is enforced now/,
    );
    expect(context.writes()).toEqual([]);
    context.server.requestLog.clear();
    const up = await context.project.run(["up", "--yes", "--skip-preview", "--diff"], {
      env: { TFE_ALLOW_WEAKENING: "true" },
    });
    expect(up.output).toMatch(new RegExp(`\\+ ${policyCount + 3 + policySetCount} created`));
    // The approval let through exactly the three sets whose enforcement cannot be read here, each said.
    const approved = [
      ...up.output.matchAll(/warning: adopting policy set "([\w-]+)" \(polset-\w+\) cannot be compared/g),
    ];
    expect(new Set(approved.map((match) => match[1]))).toEqual(
      new Set(["uploaded-library", "terraform-policy-library", "vcs-library"]),
    );
    expect(writtenRoutes(context)).toEqual(adoptionWrites);
    expect(rateLimited()).toEqual([]);

    const held = [];
    for await (const policy of context.client.policies.listAll(organization)) held.push(policy);
    for (const expected of seeded) {
      const policy = held.find((candidate) => candidate.name === expected.name)!;
      expect(policy).toMatchObject({
        kind: expected.kind,
        enforcementLevel: expected.enforcementLevel,
        description: expected.description,
      });
    }
    const state = await context.project.stateText();
    expect(state).not.toContain(token);
  }, 600_000);

  it("3. an immediate preview --expect-no-changes passes", async () => {
    context.server.requestLog.clear();
    const preview = await context.project.run(["preview", "--expect-no-changes", "--json"]);
    expect(changeSummary(preview)).toEqual({ same: policyCount + 3 + policySetCount });
    expect(context.writes()).toEqual([]);
  }, 300_000);

  it("4. pulumi destroy deletes nothing it adopted: each resource is protected", async () => {
    const before = await everythingOnService(context.client);
    context.server.requestLog.clear();
    const destroy = await context.project.run(["destroy", "--yes"], { allowFailure: true });
    expect(destroy.code).not.toBe(0);
    expect(destroy.output).toMatch(/protect/);
    expect(context.writes()).toEqual([]);
    expect(await everythingOnService(context.client)).toEqual(before);
  }, 300_000);

  it("5. editing one generated policy file and running up updates exactly that policy", async () => {
    const target = seeded[4]!;
    const edited = `${target.code}# tightened after the migration\n`;
    await context.project.writeFile(`policies/${target.name}.sentinel`, edited);
    context.server.requestLog.clear();
    const up = await context.project.up();
    expect(up.output).toMatch(/~ 1 updated/);
    const policy = (await context.client.policies.list(organization, { search: target.name })).items.find(
      (candidate) => candidate.name === target.name,
    )!;
    expect(context.writes().map((entry) => `${entry.method} ${entry.path}`)).toEqual([
      `PUT /api/v2/policies/${policy.id}/upload`,
    ]);
    expect((await context.client.policies.download(policy.id)).toString()).toBe(edited);
  }, 300_000);
});

describe("import --layout folder, then pulumi up adopts the organization through PolicyFolder", () => {
  const folderPolicyCount = 40;
  const seeded = Array.from({ length: folderPolicyCount }, (_, index) => seededPolicy(index));
  const context = scenario("adopt-folders-", seeded);
  let files: Record<string, string>;
  /** The PolicyFolder folders (the uploaded set's folder, which the user puts in, is no PolicyFolder). */
  const folders = () =>
    Object.keys(files).filter(
      (path) =>
        /\/(sentinel|policies)\.hcl$/.test(path) &&
        !/^policy-sets\/(uploaded-library|terraform-policy-library)\//.test(path),
    );

  it("1. import writes the folders and a program declaring one PolicyFolder each, with reads only", async () => {
    const out = join(context.dataDir, "project");
    context.server.requestLog.clear();
    const { stdout } = await runImport(context.server, [
      "--out",
      out,
      "--layout",
      "folder",
      "--module",
      `${organization}/vpc/aws`,
    ]);
    expect(context.writes()).toEqual([]);
    expect(stdout).toMatch(/40 policies \(27 Sentinel, 13 OPA\)/);
    files = await filesUnder(out);
    expect(folders().length).toBeGreaterThan(1);
    expect(files["index.ts"]?.match(/new PolicyFolder\(/g)).toHaveLength(folders().length);
    expect(files["index.ts"]).toMatch(/new ModuleVersionDeprecation\(/);
    expect(files["Pulumi.yaml"]).toMatch(/^name: tfe-governance-acme-folder$/m);
    putFoldersIn(files);
    context.project = await PulumiProject.create({
      name: "adopt-folders",
      files,
      config: {},
      secrets: { "tfe:token": token, "uploaded-library-api_token": sensitiveValue },
    });
  }, 180_000);

  it("2. pulumi up adopts every policy, set and deprecation, writing only the uploaded sets' folders and the secret", async () => {
    context.server.requestLog.clear();
    await context.project.run(["up", "--yes", "--skip-preview", "--diff"], { env: { TFE_ALLOW_WEAKENING: "true" } });
    expect(writtenRoutes(context)).toEqual(adoptionWrites);
    context.server.requestLog.clear();
    const preview = await context.project.run(["preview", "--expect-no-changes", "--json"]);
    // The stack, each folder and its manifest, the policies, the sets, the two deprecations.
    expect(changeSummary(preview)).toEqual({ same: 1 + 2 * folders().length + folderPolicyCount + policySetCount + 2 });
    expect(context.writes()).toEqual([]);
  }, 600_000);

  it("3. editing one policy's file in its folder and running up updates exactly that policy", async () => {
    const target = seeded[4]!;
    const path = Object.keys(files).find((file) => file.endsWith(`/${target.name}.sentinel`))!;
    const edited = `${target.code}# tightened after the migration\n`;
    await context.project.writeFile(path, edited);
    context.server.requestLog.clear();
    const up = await context.project.up();
    expect(up.output).toMatch(/~ 1 updated/);
    const policy = (await context.client.policies.list(organization, { search: target.name })).items.find(
      (candidate) => candidate.name === target.name,
    )!;
    expect(context.writes().map((entry) => `${entry.method} ${entry.path}`)).toEqual([
      `PUT /api/v2/policies/${policy.id}/upload`,
    ]);
  }, 300_000);
});
