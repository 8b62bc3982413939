import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, stat, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CreatePolicyOptions, TfeClient } from "../../src/client";
import { importMain, StreamProgress } from "../../src/importer/command";
import { importUsage } from "../../src/importer/usage";
import { packFiles } from "../../src/policy-code/archive";
import { type RunningServer, startServer } from "../../src/server";

// The import command as a user runs it, in this process: flags in, files out, against the local server over HTTP.

const organization = "acme";
const token = "import-command-token-01";
// A set holds policies of one kind: a and b are Sentinel sets, c and d OPA sets; a Terraform policy set holds a folder.
const policySets = {
  a: "polset-importA000001",
  b: "polset-importB000001",
  c: "polset-importC000001",
  d: "polset-importD000001",
};
const code = {
  "require-tags": 'main = rule { all tfplan.resources as _, r { r.applied.tags contains "owner" } }\n',
  "restrict-types": "main = rule { true } # restrict types\n",
  "deny-public": 'package terraform\n\ndeny[msg] { msg := "no public buckets" }\n',
};
const terraformPolicyFile =
  'resource_policy "aws_s3_bucket" "owner" {\n  enforce {\n    condition = core::try(attrs.tags.Owner, "") != ""\n  }\n}\n';

let server: RunningServer;
let client: TfeClient;
let workDir: string;

interface Run {
  status: number;
  stdout: string;
  stderr: string;
}

async function runImport(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  const collect = () => {
    const stream = new PassThrough();
    const chunks: Buffer[] = [];
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    return { stream, text: () => Buffer.concat(chunks).toString() };
  };
  const out = collect();
  const err = collect();
  const status = await importMain(args, {
    env: { TFE_ADDRESS: server.url, TFE_TOKEN: token, HOME: workDir, ...env },
    progress: new StreamProgress(err.stream),
    out: out.stream,
    log: (line) => err.stream.write(`${line}\n`),
  });
  return { status, stdout: out.text(), stderr: err.text() };
}

async function freshDirectory(name: string): Promise<string> {
  return mkdtemp(join(workDir, `${name}-`));
}

beforeAll(async () => {
  workDir = await mkdtemp(join(tmpdir(), "import-command-"));
  server = await startServer({
    seed: {
      organizations: [{ name: organization, plus: true }],
      tokens: [{ token, organizations: [organization], managePolicies: true, manageModules: true }],
      policySets: [
        { id: policySets.a, organization, name: "baseline" },
        { id: policySets.b, organization, name: "compute" },
        { id: policySets.c, organization, name: "opa-baseline", kind: "opa" },
        { id: policySets.d, organization, name: "opa-storage", kind: "opa" },
      ],
      modules: [
        { organization, name: "vpc", provider: "aws", versions: ["1.0.0", "1.1.0"] },
        { organization, name: "dns", provider: "aws", versions: ["0.1.0"] },
      ],
    },
  });
  client = new TfeClient({ address: server.url, token, rateLimit: false });
  const create = async (name: keyof typeof code | "no-code", options: Omit<CreatePolicyOptions, "name">) => {
    const policy = await client.policies.create(organization, { ...options, name });
    if (name !== "no-code") await client.policies.upload(policy.id, code[name]);
  };
  await create("require-tags", {
    description: "Every resource has an owner",
    enforcementLevel: "soft-mandatory",
    policySetIds: [policySets.a],
  });
  await create("restrict-types", { enforcementLevel: "hard-mandatory", policySetIds: [policySets.b] });
  await create("deny-public", {
    kind: "opa",
    query: "data.terraform.deny",
    enforcementLevel: "mandatory",
    policySetIds: [policySets.c, policySets.d],
  });
  await create("no-code", { enforcementLevel: "advisory" });
  // A runtime version as a service might show one: a Terraform policy set has no such setting, so none is written.
  const terraformPolicy = await client.policySets.create(organization, {
    name: "tf-baseline",
    kind: "tfpolicy",
    policyToolVersion: "1.0.0",
  });
  await client.policySets.uploadVersion(
    await client.policySets.createVersion(terraformPolicy.id),
    packFiles(new Map([["owner.policy.hcl", Buffer.from(terraformPolicyFile)]])),
  );
  await client.moduleVersions.deprecate({
    organization,
    name: "vpc",
    provider: "aws",
    version: "1.0.0",
    reason: "Use 1.1.0.",
    link: "https://example.com/vpc",
  });
});

afterAll(async () => {
  await client?.close();
  await server?.close();
  await rm(workDir, { recursive: true, force: true });
});

const declaredPolicies = async (out: string) =>
  [...(await readFile(join(out, "index.ts"), "utf8")).matchAll(/new Policy\("([^"]+)"/g)].map((match) => match[1]);

describe("tfe-governance import", () => {
  it("writes the project with each policy's code, reading only, with progress and a summary", async () => {
    const out = await freshDirectory("all");
    server.requestLog.clear();
    const run = await runImport(["--organization", organization, "--out", out, "--module", "acme/vpc/aws"]);
    expect(run.status, run.stderr).toBe(0);
    expect(server.requestLog.entries().filter((entry) => entry.method !== "GET")).toEqual([]);

    for (const [name, text] of Object.entries(code)) {
      const extension = name === "deny-public" ? "rego" : "sentinel";
      expect(await readFile(join(out, "policies", `${name}.${extension}`), "utf8")).toBe(text);
    }
    expect(await declaredPolicies(out)).toEqual(["deny-public", "require-tags", "restrict-types"]);
    const program = await readFile(join(out, "index.ts"), "utf8");
    // The sets the import declares own their memberships: each lists its policies, which name no set themselves.
    expect(program).not.toContain("policySetIds");
    expect(program).toMatch(
      /const opaBaselineSet = new PolicySet\("opa-baseline", \{[^}]*policyIds: \[denyPublic\.policyId\],/s,
    );
    expect(program).toMatch(/new Policy\("deny-public", \{[^}]*\}, \{ protect: true \}\);/s);
    expect(await readFile(join(out, "Pulumi.yaml"), "utf8")).toMatch(/^name: tfe-governance-acme-program$/m);
    expect(program).toContain('reason: "Use 1.1.0."');
    expect(await readFile(join(out, "Pulumi.yaml"), "utf8")).toContain(`value: "${server.url}"`);
    const readme = await readFile(join(out, "README.md"), "utf8");
    // The summary counts what the project declares, the sets included, as the command's summary does.
    expect(readme).toContain(
      ": 3 policies (2 Sentinel, 1 OPA), 5 policy sets, 1 module version deprecation; the policies",
    );
    for await (const policy of client.policies.listAll(organization, { kind: "opa" })) {
      // The id a Terraform configuration that referenced the policy needs instead (README's migration path).
      expect(readme).toContain(`| deny-public | ${policy.id} | opa | policies/deny-public.rego |`);
    }
    for (const file of ["index.ts", "Pulumi.yaml", "README.md", "package.json"]) {
      expect(await readFile(join(out, file), "utf8")).not.toContain(token);
    }

    expect(run.stderr).toContain(`importing organization "acme" from ${server.url} (token from TFE_TOKEN)`);
    expect(run.stderr).toMatch(/listing policies: 4 listed/);
    expect(run.stderr).toMatch(/downloading code: 3 downloaded/);
    // From a checkout, the project installs the library from the checkout, copied rather than linked.
    const manifest = JSON.parse(await readFile(join(out, "package.json"), "utf8"));
    expect(resolve(out, manifest.dependencies["pulumi-tfe-governance"].replace(/^file:/, ""))).toBe(
      resolve(__dirname, "..", ".."),
    );
    expect(await readFile(join(out, ".npmrc"), "utf8")).toBe("install-links=true\n");
    expect(run.stderr).toMatch(/writing files: 10 created, 0 overwritten, 0 unchanged/);
    expect(run.stdout).toMatch(/3 policies \(2 Sentinel, 1 OPA\)/);
    expect(run.stdout).toMatch(/1 module version deprecation\n/);
    expect(run.stdout).toMatch(/1 object left out:\n {4}no-code: the service holds no code/);
    expect(run.stdout).toMatch(/5 policy sets\n/);
  });

  it("leaves out what --exclude names, by name or id, and lists it with the reason", async () => {
    const out = await freshDirectory("excluded");
    const run = await runImport([
      ...["--organization", organization, "--out", out, "--module", "acme/vpc/aws"],
      ...["--exclude", "restrict-types", "--exclude", policySets.d, "--exclude", "vpc/aws/1.0.0"],
    ]);
    expect(run.status, run.stderr).toBe(0);
    expect(await declaredPolicies(out)).toEqual(["deny-public", "require-tags"]);
    const program = await readFile(join(out, "index.ts"), "utf8");
    expect(program).not.toContain('"opa-storage"');
    expect(program).not.toContain("ModuleVersionDeprecation(");
    const readme = await readFile(join(out, "README.md"), "utf8");
    for (const name of ["policy restrict-types", "policy set opa-storage", "deprecation of vpc/aws/1.0.0"]) {
      expect(readme).toContain(`| ${name} | left out by --exclude`);
    }
    // deny-public stays in opa-storage, which the project does not declare: the policy keeps that membership.
    expect(program).toContain(`policySetIds: ["${policySets.d}"]`);
  });

  it.each([
    [["--kind", "opa"], ["deny-public"]],
    [["--search", "tags"], ["require-tags"]],
    [["--policy-set", policySets.b], ["restrict-types"]],
    [["--policy-set", policySets.d], ["deny-public"]],
    [["--policy-set", policySets.a, "--kind", "sentinel"], ["require-tags"]],
    [["--policy-set", "polset-none"], []],
  ])("narrows the policies with %j", async (filters, expected) => {
    const out = await freshDirectory("filtered");
    const run = await runImport(["--organization", organization, "--out", out, ...filters]);
    expect(run.status, run.stderr).toBe(0);
    expect(await declaredPolicies(out)).toEqual(expected);
  });

  it("imports only the Terraform policy sets with --kind tfpolicy, without listing policies, which hold none", async () => {
    const out = await freshDirectory("tfpolicy");
    server.requestLog.clear();
    const run = await runImport(["--organization", organization, "--out", out, "--kind", "tfpolicy"]);
    expect(run.status, run.stderr).toBe(0);
    expect(server.requestLog.entries().filter((entry) => entry.path.includes("/policies"))).toEqual([]);
    expect(await declaredPolicies(out)).toEqual([]);
    const program = await readFile(join(out, "index.ts"), "utf8");
    expect([...program.matchAll(/new PolicySet\("([^"]+)"/g)].map((match) => match[1])).toEqual(["tf-baseline"]);
    expect(program).toMatch(
      /new PolicySet\("tf-baseline", \{\n {2}organization,\n {2}kind: "tfpolicy",[^}]*directory: "policy-sets\/tf-baseline",/,
    );
    expect(run.stdout).toMatch(/0 policies .*\n {2}1 policy set\n/);
    expect(program).not.toContain("policyToolVersion");
  });

  it("accepts an unchanged second run, refuses changed files without writing anything, and overwrites with --force", async () => {
    const out = await freshDirectory("again");
    const args = ["--organization", organization, "--out", out];
    expect((await runImport(args)).status).toBe(0);
    const program = join(out, "index.ts");
    const before = await stat(program);

    const second = await runImport(args);
    expect(second.status, second.stderr).toBe(0);
    expect(second.stdout).toMatch(/files: 0 created, 0 overwritten, 10 unchanged, 0 removed/);
    expect((await stat(program)).mtimeMs).toBe(before.mtimeMs);

    const edited = join(out, "policies", "require-tags.sentinel");
    await writeFile(edited, "main = rule { false }\n");
    await unlink(join(out, "README.md"));
    const refused = await runImport(args);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(
      /1 file in the output directory differs from.*nothing was written:\n {2}policies\/require-tags\.sentinel\n/,
    );
    expect(refused.stderr).toMatch(/--force/);
    expect(await readFile(edited, "utf8")).toBe("main = rule { false }\n");
    await expect(stat(join(out, "README.md"))).rejects.toThrow(/ENOENT/);

    const forced = await runImport([...args, "--force"]);
    expect(forced.status, forced.stderr).toBe(0);
    expect(forced.stdout).toMatch(/files: 1 created, 1 overwritten, 8 unchanged, 0 removed/);
    expect(await readFile(edited, "utf8")).toBe(code["require-tags"]);
  });

  it("removes the files of policies gone since the last import, and refuses to remove one edited since", async () => {
    const out = await freshDirectory("stale");
    const importing = (search: string, ...more: string[]) =>
      runImport(["--organization", organization, "--out", out, "--search", search, ...more]);
    expect((await importing("re")).status).toBe(0);
    const stale = join(out, "policies", "restrict-types.sentinel");
    await stat(stale);

    const narrowed = await importing("require");
    expect(narrowed.status, narrowed.stderr).toBe(0);
    expect(narrowed.stdout).toMatch(/1 removed \(policies\/restrict-types\.sentinel\)/);
    await expect(stat(stale)).rejects.toThrow(/ENOENT/);
    expect(await declaredPolicies(out)).toEqual(["require-tags"]);

    expect((await importing("re")).status).toBe(0);
    await writeFile(stale, "main = rule { false }\n");
    const refused = await importing("require");
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(/nothing was written:\n {2}policies\/restrict-types\.sentinel\n/);
    expect(await readFile(stale, "utf8")).toBe("main = rule { false }\n");
    expect((await importing("require", "--force")).status).toBe(0);
    await expect(stat(stale)).rejects.toThrow(/ENOENT/);
  });

  it("reads the token from the Terraform CLI credentials file, as the library does", async () => {
    const credentials = join(workDir, "credentials.tfrc.json");
    const host = new URL(server.url).host;
    await writeFile(credentials, JSON.stringify({ credentials: { [host]: { token } } }));
    const out = await freshDirectory("credentials");
    const run = await runImport(["--organization", organization, "--out", out, "--kind", "opa"], {
      TFE_TOKEN: "",
      TF_CLI_CONFIG_FILE: credentials,
    });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stderr).toContain(`(token from credentials file ${credentials})`);
    expect(await declaredPolicies(out)).toEqual(["deny-public"]);
  });

  it("writes the service's policy-set folders with --layout folder", async () => {
    const out = await freshDirectory("folder");
    const run = await runImport(["--organization", organization, "--out", out, "--layout", "folder"]);
    expect(run.status, run.stderr).toBe(0);
    // Folders follow the names of their sets.
    const folder = join(out, "policy-sets", "baseline");
    expect(await readFile(join(folder, "sentinel.hcl"), "utf8")).toBe(
      [
        'policy "require-tags" {',
        '  source            = "./require-tags.sentinel"',
        '  enforcement_level = "soft-mandatory"',
        "}",
        "",
      ].join("\n"),
    );
    // sentinel.hcl has no description: the program carries it.
    expect(await readFile(join(out, "index.ts"), "utf8")).toContain(
      '"require-tags": { description: "Every resource has an owner" },',
    );
    expect(await readFile(join(folder, "require-tags.sentinel"), "utf8")).toBe(code["require-tags"]);
    const opa = join(out, "policy-sets", "opa-baseline+opa-storage");
    expect(await readFile(join(opa, "policies.hcl"), "utf8")).toContain('query             = "data.terraform.deny"');
    expect(run.stdout).toMatch(/3 folders under policy-sets\//);
    // The sets are declared without policies: each folder's policies name theirs, so each membership has one owner.
    const program = await readFile(join(out, "index.ts"), "utf8");
    expect(program).not.toContain("policyIds");
    expect(program).toContain("policySetIds: [opaBaselineSet.policySetId, opaStorageSet.policySetId]");
    expect(await readFile(join(out, "Pulumi.yaml"), "utf8")).toMatch(/^name: tfe-governance-acme-folder$/m);
  });

  it.each([
    [["--out", "x"], /--organization is required/],
    [["--organization", organization], /--out is required/],
    [["--organization", organization, "--out", "x", "--kind", "python"], /--kind "python" is not a policy kind/],
    [["--organization", organization, "--out", "x", "--layout", "tree"], /--layout "tree" is not a layout/],
    [["--organization", organization, "--out", "x", "--module", "vpc/aws"], /not NAMESPACE\/NAME\/PROVIDER/],
    [["--organization", organization, "--out", "x", "--module", "other/vpc/aws"], /use --module acme\/vpc\/aws/],
    [["--organization", organization, "--out", "x", "--token", "t"], /Unknown option '--token'/],
    [
      ["--organization", organization, "--out", "x", "--exclude", "no-such-policy"],
      /--exclude "no-such-policy" names no/,
    ],
    [
      ["--organization", organization, "--out", "x", "--project", "a b"],
      /--project "a b" is not a Pulumi project name/,
    ],
  ])("refuses %j, naming the flag and the fix", async (args, message) => {
    // Inside the test's directory: a case that stopped being refused would write its project there, not in the checkout.
    const out = join(workDir, "refused");
    const run = await runImport(args.map((arg) => (arg === "x" ? out : arg)));
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(message);
    expect(existsSync(out)).toBe(false);
  });

  it("says what a 404 means for an organization or a module it cannot read, and writes nothing", async () => {
    const out = join(workDir, "never-written");
    const organizationRun = await runImport(["--organization", "nope", "--out", out]);
    expect(organizationRun.status).toBe(2);
    expect(organizationRun.stderr).toMatch(
      /listing the policies of organization "nope" failed: .*404.*check --organization/,
    );
    const moduleRun = await runImport(["--organization", organization, "--out", out, "--module", "acme/missing/aws"]);
    expect(moduleRun.status).toBe(2);
    expect(moduleRun.stderr).toMatch(/module acme\/missing\/aws failed: .*404.*check --module/);
    await expect(stat(out)).rejects.toThrow(/ENOENT/);
  });

  it("says a refused token in its own terms: where it came from and what replaces it, not a stack's config", async () => {
    const out = join(workDir, "never-written-401");
    const host = new URL(server.url).host;
    const refused = "not-a-token-of-this-server-0123";
    const fromEnv = await runImport(["--organization", organization, "--out", out], { TFE_TOKEN: refused });
    expect(fromEnv.status).toBe(2);
    // TFE_TOKEN is read before any credentials file: a new login would not replace it.
    expect(fromEnv.stderr).toContain(
      `the token was not accepted (401): the token came from TFE_TOKEN, which is read before any credentials file: set a valid API token there, or unset it and run "terraform login ${host}"`,
    );
    const credentials = join(workDir, "refused.tfrc.json");
    await writeFile(credentials, JSON.stringify({ credentials: { [host]: { token: refused } } }));
    const fromFile = await runImport(["--organization", organization, "--out", out], {
      TFE_TOKEN: "",
      TF_CLI_CONFIG_FILE: credentials,
    });
    expect(fromFile.status).toBe(2);
    expect(fromFile.stderr).toContain(
      `the token was not accepted (401): the token came from the credentials file ${credentials} (TF_CLI_CONFIG_FILE), read before the file terraform login writes: put a valid token in its credentials "${host}" block, or set a valid API token in TFE_TOKEN`,
    );
    for (const run of [fromEnv, fromFile]) {
      expect(run.stderr).not.toContain("tfe:token");
      expect(run.stderr).not.toContain(refused);
    }
    await expect(stat(out)).rejects.toThrow(/ENOENT/);
  });
});

describe("docs/import.md", () => {
  it("names every option of the command's help, and says that every adopted resource is protected", async () => {
    const doc = await readFile(join(__dirname, "..", "..", "docs", "import.md"), "utf8");
    const options = [...importUsage.matchAll(/^ {2}(--[a-z-]+)/gm)].map((match) => match[1]);
    expect(options.length).toBeGreaterThan(10);
    expect(options.filter((option) => !doc.includes(`\`${option}`))).toEqual([]);
    expect(doc).toMatch(/every resource the program declares is `protect`ed/);
  });
});

describe("tfe-governance import under a stricter rate limit than the service's", () => {
  let limited: RunningServer;

  afterAll(async () => {
    await limited?.close();
  });

  it("waits out the 429s and still imports every policy", async () => {
    const names = ["a", "b", "c"];
    limited = await startServer({
      seed: {
        organizations: [{ name: organization, plus: true }],
        tokens: [{ token, organizations: [organization] }],
      },
      rateLimit: 2,
      rateLimitCounting: "every-second",
    });
    // Unpaced: what the server refuses is retried after its reset.
    const sharing = new TfeClient({ address: limited.url, token, rateLimit: false });
    for (const name of names) {
      const policy = await sharing.policies.create(organization, { name, enforcementLevel: "advisory" });
      await sharing.policies.upload(policy.id, `main = rule { true } # ${name}\n`);
    }
    limited.requestLog.clear();

    // The command paces to the 2 per second this server advertises (one request a second at 95%); another process
    // on the same token takes the rest of the second the command's first request opens, so its next one meets 429s.
    let shared = false;
    limited.requestLog.onEntry(() => {
      if (shared) return;
      shared = true;
      void Promise.allSettled(Array.from({ length: 3 }, () => sharing.policies.list(organization, { pageSize: 1 })));
    });
    const out = await freshDirectory("limited");
    const run = await runImport(["--organization", organization, "--out", out], { TFE_ADDRESS: limited.url });
    await sharing.close();
    expect(run.status, run.stderr).toBe(0);
    expect(limited.requestLog.entries().some((entry) => entry.status === 429)).toBe(true);
    for (const name of names) {
      expect(await readFile(join(out, "policies", `${name}.sentinel`), "utf8")).toBe(
        `main = rule { true } # ${name}\n`,
      );
    }
  });
});
