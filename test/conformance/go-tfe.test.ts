import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../../src/server";
import { resultsOfEveryKind } from "../seeded-server";
import { conformanceBinary, goAvailable } from "./conformance-binary";

// HashiCorp's Go client (go-tfe, pinned in go-tfe/go.mod) against a fresh local server, over http and https: the
// service's own official client must work unchanged. The Go program prints a table of its calls; any row that is
// not "ok" fails here.

const organization = "acme";
const token = "conformance-token-0123456789";
const policySetId = "polset-Conformance00001";
const seed = {
  organizations: [{ name: organization, plus: true }],
  tokens: [{ token, organizations: [organization], managePolicies: true, manageModules: true }],
  modules: [{ organization, name: "vpc", provider: "aws", versions: ["1.0.0", "1.1.0"] }],
  policySets: [{ id: policySetId, organization, name: "baseline" }],
  workspaces: [{ id: "ws-Conformance000001", organization, name: "conformance" }],
  projects: [{ id: "prj-Conformance00001", organization, name: "conformance" }],
  // Two runs: the newer recorded a result each way the service records one (go-tfe/runs.go reads them).
  runs: [
    {
      id: "run-Conformance00001",
      workspace: "ws-Conformance000001",
      createdAt: "2026-11-19T09:00:00.000Z",
      policyResults: [],
    },
    {
      id: "run-Conformance00002",
      workspace: "ws-Conformance000001",
      createdAt: "2026-11-20T09:00:00.000Z",
      policyResults: resultsOfEveryKind,
    },
  ],
};

// Every go-tfe policy call and the raw-request reads must appear in the table, so a call dropped from the Go
// program (or one it stopped reaching) fails too.
const requiredCalls = [
  "tfe.NewClient",
  "X-RateLimit-Limit",
  "Policies.Create",
  "Policies.Read",
  "Policies.Update",
  "Policies.Upload",
  "Policies.Download",
  "Policies.List",
  "Policies.Delete",
  "PolicySets.AddPolicies",
  "PolicySets.RemovePolicies",
  "PolicySets.Create",
  "PolicySets.ReadWithOptions",
  "PolicySets.List",
  "PolicySets.Update",
  "PolicySets.Delete",
  "PolicySets.AddWorkspaces",
  "PolicySets.RemoveWorkspaces",
  "PolicySets.AddProjects",
  "PolicySets.RemoveProjects",
  "PolicySets.AddWorkspaceExclusions",
  "PolicySets.RemoveWorkspaceExclusions",
  "PolicySetVersions.Create",
  "PolicySetVersions.Upload",
  "PolicySetVersions.Read",
  "PolicySetParameters.Create",
  "PolicySetParameters.List",
  "PolicySetParameters.Read",
  "PolicySetParameters.Update",
  "PolicySetParameters.Delete",
  "RegistryModules.ReadTerraformRegistryModule",
  "NewRequest PATCH module version",
  "NewRequest GET registry version",
  "NewRequest GET registry versions",
  "GET /.well-known/terraform.json",
  "Runs.List",
  "TaskStages.List",
  "PolicyEvaluations.List",
  "PolicySetOutcomes.List",
  "PolicyChecks.List",
  "TFPolicyEvaluationOutcomes.List",
];

interface Row {
  call: string;
  check: string;
  result: string;
}

function parseTable(output: string): Row[] {
  const lines = output.split("\n");
  const header = lines.findIndex((line) => /^#\s+call\s+check\s+result$/.test(line));
  expect(header, `no table in:\n${output}`).toBeGreaterThanOrEqual(0);
  // Column starts, from the header line tabwriter aligned the rows with.
  const [callAt, checkAt, resultAt] = ["call", "check", "result"].map((name) => lines[header]!.indexOf(name));
  return lines
    .slice(header + 1)
    .filter((line) => /^\d+\s/.test(line))
    .map((line) => ({
      call: line.slice(callAt, checkAt).trim(),
      check: line.slice(checkAt, resultAt).trim(),
      result: line.slice(resultAt).trim(),
    }));
}

function runConformance(binary: string, server: RunningServer, extraEnv: Record<string, string> = {}) {
  return new Promise<{ code: number; output: string }>((resolve) => {
    execFile(
      binary,
      [],
      {
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          TFE_ADDRESS: server.url,
          TFE_TOKEN: token,
          CONFORMANCE_ORGANIZATION: organization,
          CONFORMANCE_MODULE: "vpc/aws/1.0.0",
          CONFORMANCE_POLICY_SET: policySetId,
          CONFORMANCE_WORKSPACE: "ws-Conformance000001",
          CONFORMANCE_PROJECT: "prj-Conformance00001",
          ...extraEnv,
        },
        timeout: 120_000,
      },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, output: `${stdout}${stderr}` }),
    );
  });
}

async function expectAllOk(binary: string, server: RunningServer, extraEnv: Record<string, string>, calls: string[]) {
  const { code, output } = await runConformance(binary, server, extraEnv);
  console.log(output);
  const rows = parseTable(output);
  expect(rows.filter((row) => row.result !== "ok")).toEqual([]);
  expect([...new Set(rows.map((row) => row.call))]).toEqual(expect.arrayContaining([...requiredCalls, ...calls]));
  expect(code, output).toBe(0);
  // The calls reached this server: each row stands for at least one request it answered.
  expect(server.requestLog.entries().length).toBeGreaterThanOrEqual(rows.length);
  return rows;
}

describe.skipIf(!goAvailable && !process.env.CI)("go-tfe against the local server", () => {
  let binary: string;
  let certificateDirectory: string;

  beforeAll(() => {
    if (!goAvailable) throw new Error("the go-tfe conformance suite needs Go 1.25+ on PATH (CI must run it)");
    const { path, built } = conformanceBinary();
    console.log(`go-tfe conformance binary ${path} (${built ? "built now" : "cached"})`);
    binary = path;
    certificateDirectory = mkdtempSync(join(tmpdir(), "go-tfe-conformance-"));
  }, 900_000);
  afterAll(() => rmSync(certificateDirectory, { recursive: true, force: true }));

  it("passes every call over http", async () => {
    const server = await startServer({ seed });
    try {
      // Over http the provider reaches the API through a CLI config host block, which disco takes as forced services.
      const rows = await expectAllOk(binary, server, { CONFORMANCE_RATE_LIMIT: "" }, ["disco.ForceHostServices"]);
      // Terraform policy, go-tfe's TFPolicy kind: a set made, listed by kind, and a version of its files ready.
      for (const check of ["tfpolicy", "filter[kind]=tfpolicy", "a Terraform policy folder: ready"]) {
        expect(rows.map((row) => row.check)).toContain(check);
      }
    } finally {
      await server.close();
    }
  }, 180_000);

  it("passes every call over https (certificate trusted through SSL_CERT_FILE, refused untrusted) under a rate limit it keeps to", async () => {
    const rateLimit = 20;
    const server = await startServer({ seed, tls: "self-signed", rateLimit });
    try {
      expect(server.url).toMatch(/^https:/);
      const certificateFile = join(certificateDirectory, "cert.pem");
      writeFileSync(certificateFile, server.certificate ?? "");
      const rows = await expectAllOk(
        binary,
        server,
        { SSL_CERT_FILE: certificateFile, CONFORMANCE_RATE_LIMIT: String(rateLimit) },
        ["disco.Discover"],
      );
      expect(rows).toContainEqual({
        call: "tfe.NewClient",
        check: "refused without the certificate trusted",
        result: "ok",
      });
      // go-tfe paced itself by the advertised limit: the server never had to refuse it.
      expect(server.requestLog.entries().filter((entry) => entry.status === 429)).toEqual([]);
    } finally {
      await server.close();
    }
  }, 180_000);
});
