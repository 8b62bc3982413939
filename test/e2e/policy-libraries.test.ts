import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TfeClient } from "../../src/client";
import { type RunningServer, startServer } from "../../src/server";
import { GitRepository, thirdGenerationLibrary } from "../vcs-repository";
import { installPlugin } from "./plugin-artifacts";
import { PulumiProject } from "./pulumi-project";

// Real policy libraries as they are, under the real engine and language host against the local server: an OPA
// folder written as HashiCorp's OPA tutorial is (Rego v0), a Rego v1 folder, and a library laid out as HashiCorp's
// third-generation Sentinel library (sets in subfolders, shared functions two levels up), deployed both ways:
// uploaded from its folder, and read from version control (a local git repository, with a policies path). A checkout
// whose remote names no identifier (a local path) is not shown to be what its set reads: what it shows is compared
// all the same, so a lowering there, or a policies path its policies leave, fails preview, in TypeScript and YAML.

const organization = "acme";
const token = "e2e-libraries-token-0123456789";
const oauthTokenId = "ot-e2eLibrary0000001";

/** Written as HashiCorp's OPA tutorial writes its policies: Rego v0, no `if` or `contains`. */
const tutorialFolder = {
  "opa-tutorial/policies.hcl":
    'policy "public_ingress" {\n  query             = "data.terraform.policies.public_ingress.deny"\n' +
    '  enforcement_level = "mandatory"\n}\n',
  "opa-tutorial/public_ingress.rego":
    "package terraform.policies.public_ingress\n\nimport input.plan as plan\n\n" +
    'deny[msg] {\n  r := plan.resource_changes[_]\n  r.type == "aws_security_group"\n' +
    '  r.change.after.ingress[_].cidr_blocks[_] == "0.0.0.0/0"\n' +
    '  msg := sprintf("%v has 0.0.0.0/0 as allowed ingress", [r.address])\n}\n',
};
/** Rego v1, without `import rego.v1`: only an OPA 1.x runtime reads it. */
const regoV1Folder = {
  "rego-v1/policies.hcl":
    'policy "deny-public-buckets" {\n  query             = "data.terraform.buckets.deny"\n' +
    '  enforcement_level = "mandatory"\n}\n',
  "rego-v1/buckets.rego":
    'package terraform.buckets\n\ndeny contains msg if {\n  some r in input.plan.resource_changes\n  r.type == "aws_s3_bucket"\n' +
    '  r.change.after.acl == "public-read"\n  msg := r.address\n}\n',
};

/** A second set of the library, holding one advisory policy: where a moved policies path takes the set. */
const azurePolicies = {
  "policies/azure/sentinel.hcl":
    'policy "restrict-vm-size" {\n  source            = "./restrict-vm-size.sentinel"\n  enforcement_level = "advisory"\n}\n',
  "policies/azure/restrict-vm-size.sentinel": "main = rule { true }\n",
};

const program = `
const pulumi = require("@pulumi/pulumi");
const { PolicySet } = require("pulumi-tfe-governance");
const config = new pulumi.Config();
const runtime = (key) => config.get(key) ?? undefined;
const sets = {
  tutorial: new PolicySet("opa-tutorial", { directory: "opa-tutorial", policyToolVersion: runtime("tutorialRuntime") }),
  regoV1: new PolicySet("rego-v1", { directory: "rego-v1", policyToolVersion: config.get("v1Runtime") ?? "1.2.0" }),
  uploaded: new PolicySet("library-uploaded", { directory: "library/policies/aws" }),
  fromVcs: new PolicySet("library-vcs", {
    vcsRepo: { identifier: "acme/policy-library", oauthTokenId: "${oauthTokenId}" },
    policiesPath: "policies/aws",
    vcsCheckout: "library",
  }),
  // A clone whose remote is the library's path: no identifier shows it to be acme/policy-library.
  fromLocalClone: new PolicySet("library-local-clone", {
    vcsRepo: { identifier: "acme/policy-library", oauthTokenId: "${oauthTokenId}" },
    policiesPath: config.get("localClonePath") ?? "policies/aws",
    vcsCheckout: "local-clone",
  }),
};
exports.ids = Object.fromEntries(Object.entries(sets).map(([key, set]) => [key, set.policySetId]));
`;

describe("real policy libraries deploy as they are, under the real engine", () => {
  let server: RunningServer;
  let client: TfeClient;
  let project: PulumiProject;
  let library: GitRepository;
  let localClone: GitRepository;

  const writes = () => server.requestLog.entries().filter((entry) => entry.method !== "GET");
  const ids = async () =>
    JSON.parse((await project.run(["stack", "output", "ids", "--json"])).stdout) as Record<string, string>;
  const versionsOf = async (id: string) => {
    const set = await client.policySets.read(id);
    return { current: set.currentVersionId, newest: set.newestVersionId };
  };

  beforeAll(async () => {
    project = await PulumiProject.create({
      name: "tfe-policy-libraries",
      files: { "index.js": program, ...tutorialFolder, ...regoV1Folder },
      config: {},
      secrets: { "tfe:token": token },
    });
    // The team's checkout of its policy library is the repository the service reads, too.
    library = GitRepository.create({ ...thirdGenerationLibrary, ...azurePolicies }, `${project.dir}/library`);
    localClone = GitRepository.clone(library.path, `${project.dir}/local-clone`);
    server = await startServer({
      seed: {
        organizations: [{ name: organization, plus: true }],
        tokens: [{ token, organizations: [organization] }],
        vcsRepositories: [{ identifier: "acme/policy-library", path: library.path }],
        oauthTokens: [{ id: oauthTokenId, organization }],
      },
    });
    client = new TfeClient({ address: server.url, token, rateLimit: false });
    await project.run(["config", "set", "tfe:address", server.url]);
    await project.run(["config", "set", "tfe:organization", organization]);
  }, 120_000);

  afterAll(async () => {
    await project?.dispose();
    await client?.close();
    await server?.close();
  });

  it("the tutorial's Rego v0 fails preview on a pinned 1.x runtime, naming the file, the line and both fixes", async () => {
    await project.run(["config", "set", "tutorialRuntime", "1.2.0"]);
    const refused = await project.run(["preview"], { allowFailure: true });
    await project.run(["config", "rm", "tutorialRuntime"]);
    expect(refused.code).not.toBe(0);
    expect(refused.output).toMatch(
      /public_ingress\.rego:\d+: written as Rego v0, which policyToolVersion 1\.2\.0 \(an OPA 1\.x runtime\) does not read: write it as Rego v1 .*or pin policyToolVersion to a 0\.x runtime/,
    );
    expect(writes()).toEqual([]);
  }, 120_000);

  it("Rego v1 fails preview on latest, naming import rego.v1 and pinning", async () => {
    await project.run(["config", "set", "v1Runtime", "latest"]);
    const refused = await project.run(["preview"], { allowFailure: true });
    await project.run(["config", "rm", "v1Runtime"]);
    expect(refused.code).not.toBe(0);
    expect(refused.output).toMatch(
      /buckets\.rego:\d+: written as Rego v1 \(if, contains\), which policyToolVersion latest \(the service runs OPA 0\.61\.x for it\) does not read: add "import rego\.v1" to the file .*or pin policyToolVersion to a 1\.x runtime/,
    );
  }, 120_000);

  it("an OPA query typo fails preview, naming the block and the closest rule", async () => {
    const config = regoV1Folder["rego-v1/policies.hcl"];
    await project.writeFile(
      "rego-v1/policies.hcl",
      config.replace("data.terraform.buckets.deny", "data.terraform.bucket.deny"),
    );
    const refused = await project.run(["preview"], { allowFailure: true });
    await project.writeFile("rego-v1/policies.hcl", config);
    expect(refused.code).not.toBe(0);
    expect(refused.output).toContain(
      'policies.hcl:2: policy "deny-public-buckets": query data.terraform.bucket.deny names no rule of the set\'s Rego: did you mean data.terraform.buckets.deny?',
    );
  }, 120_000);

  it("deploys the tutorial on the default runtime, Rego v1 on 1.x, and the library both ways, every version ready", async () => {
    const up = await project.up();
    expect(up.output).toMatch(/_outside\/common-functions\/tfplan-functions\/tfplan-functions\.sentinel/);
    for (const id of Object.values(await ids())) {
      const { current, newest } = await versionsOf(id);
      expect(current, id).not.toBeNull();
      expect(current).toBe(newest);
    }
    await project.run(["preview", "--expect-no-changes"]);
  }, 300_000);

  it("a lowering in a checkout whose remote names no identifier fails preview, as does a path its policies leave", async () => {
    const hcl = thirdGenerationLibrary["policies/aws/sentinel.hcl"] as string;
    localClone.commit(
      { "policies/aws/sentinel.hcl": hcl.replace('"hard-mandatory"', '"advisory"') },
      "restrict-ec2 only warns",
    );
    server.requestLog.clear();
    const lowered = await project.run(["preview"], { allowFailure: true });
    localClone.git(["reset", "--quiet", "--hard", "HEAD~1"]);
    expect(lowered.code).not.toBe(0);
    const said = lowered.output.replace(/\s+/g, " ");
    expect(said).toContain(
      'policy set "library-local-clone" weakens governance: policy "restrict-ec2" goes from hard-mandatory to advisory; ' +
        "what it enforces cannot be read here (vcsCheckout local-clone is not shown to be what the set reads: no " +
        "remote of the checkout names acme/policy-library",
    );
    await project.run(["config", "set", "localClonePath", "policies/azure"]);
    const moved = await project.run(["preview"], { allowFailure: true });
    await project.run(["config", "rm", "localClonePath"]);
    expect(moved.code).not.toBe(0);
    expect(moved.output.replace(/\s+/g, " ")).toContain('policy "restrict-ec2" (hard-mandatory) is removed');
    expect(writes()).toEqual([]);
    // Unchanged, it previews clean: only a change of what it reads cannot be compared.
    await project.run(["preview", "--expect-no-changes"]);
  }, 300_000);

  it("through the plugin, from YAML: the same lowering in a local clone fails preview", async () => {
    const yamlClone = GitRepository.clone(library.path, `${project.dir}/yaml-clone`);
    const yaml = await PulumiProject.create({
      name: "tfegov-local-clone",
      nodeModules: "own",
      files: {
        "Pulumi.yaml": `name: tfegov-local-clone
runtime: yaml
resources:
  from-local-clone:
    type: tfegov:index:PolicySet
    properties:
      name: yaml-local-clone
      vcsRepo:
        identifier: acme/policy-library
        oauthTokenId: ${oauthTokenId}
      policiesPath: policies/aws
      vcsCheckout: ${yamlClone.path}
`,
      },
      config: { "tfegov:address": server.url, "tfegov:organization": organization },
      secrets: { "tfegov:token": token },
      engineLog: false,
    });
    try {
      await installPlugin(yaml);
      await yaml.up();
      const hcl = thirdGenerationLibrary["policies/aws/sentinel.hcl"] as string;
      yamlClone.commit({ "policies/aws/sentinel.hcl": hcl.replace('"hard-mandatory"', '"advisory"') }, "Lowered");
      const refused = await yaml.run(["preview"], { allowFailure: true });
      expect(refused.code).not.toBe(0);
      expect(refused.output.replace(/\s+/g, " ")).toContain(
        'policy set "yaml-local-clone" weakens governance: policy "restrict-ec2" goes from hard-mandatory to advisory',
      );
      await yaml.run(["destroy", "--yes"]);
    } finally {
      await yaml.dispose();
    }
  }, 300_000);

  it("an edited shared function makes exactly one new version of each: an upload, and the push's", async () => {
    const { uploaded, fromVcs } = (await ids()) as { uploaded: string; fromVcs: string };
    const before = { uploaded: await versionsOf(uploaded), fromVcs: await versionsOf(fromVcs) };
    library.commit(
      { "common-functions/tfplan-functions/tfplan-functions.sentinel": "find_resources = func(t) { return [t] }\n" },
      "A shared function changes",
    );
    server.requestLog.clear();
    await project.up();
    expect(writes().map((entry) => `${entry.method} ${entry.route}`)).toEqual([
      "POST /api/v2/policy-sets/:policySetId/versions",
      "PUT /policy-set-versions/:versionId/upload",
    ]);
    // The provider's webhook: the service reads the new commit.
    const pushed = await fetch(`${server.url}/_local/vcs-push`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ identifier: "acme/policy-library" }),
    });
    // One version for each set that reads the repository.
    expect(((await pushed.json()) as { versions: string[] }).versions).toHaveLength(2);
    for (let attempt = 0; attempt < 100 && (await versionsOf(fromVcs)).current === before.fromVcs.current; attempt++) {
      await new Promise((done) => setTimeout(done, 50));
    }
    const after = { uploaded: await versionsOf(uploaded), fromVcs: await versionsOf(fromVcs) };
    for (const key of ["uploaded", "fromVcs"] as const) {
      expect(after[key].current).not.toBe(before[key].current);
      expect(after[key].current).toBe(after[key].newest);
    }
    await project.run(["preview", "--refresh", "--expect-no-changes"]);
  }, 300_000);
});
