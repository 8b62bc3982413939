import { mkdtempSync, rmSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type * as pulumi from "@pulumi/pulumi";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { TfeClient } from "../../src/client";
import { inProgramLanguage } from "../../src/plugin/program-language";
import { FailureReport } from "../../src/resources/failure-report";
import { ModuleVersionDeprecationProvider } from "../../src/resources/module-version-deprecation";
import { PolicyProvider } from "../../src/resources/policy";
import { policyEnforcement } from "../../src/resources/policy/properties";
import { inNamespace, ProviderContext, sameValue, withFailureReports } from "../../src/resources/provider-context";
import { commandRunsProgram } from "../../src/resources/pulumi-command";
import { type RunningServer, startServer } from "../../src/server";
import { startSeededServer } from "../seeded-server";

// Pulumi configures the provider of refresh and destroy with the stack config recorded at the last up: a failure
// that a stale token or address explains says what to run, and only then.

const organization = "acme";
const token = "context-token-0123456789";
let server: RunningServer;

beforeAll(async () => {
  server = await startSeededServer({ organization, token, modules: [{ name: "vpc", provider: "aws", versions: [] }] });
});

afterAll(async () => {
  await server.close();
});

function configured<P extends PolicyProvider | ModuleVersionDeprecationProvider>(
  provider: P,
  stackConfig: Record<string, string>,
): P {
  const config = { get: (key: string) => stackConfig[key], require: (key: string) => stackConfig[key] ?? "" };
  void provider.configure({ config } as unknown as pulumi.dynamic.ConfigureRequest);
  provider.context.failures = new FailureReport();
  return withFailureReports(provider, provider.constructor.name);
}

const policyProps = { organization, name: "p" };
const deprecationId = `${organization}/vpc/aws/1.0.0`;

describe("a read or delete that a recorded token or address may explain", () => {
  it("names tfe:token and the refresh to run after a 401 with the token from stack config", async () => {
    const provider = configured(new PolicyProvider(), { "tfe:address": server.url, "tfe:token": "rotated-away-1" });
    const failure = provider.read("pol-abcdefghijklmnop", policyProps);
    await expect(failure).rejects.toThrow(
      /\(401\).*tfe:token came from the stack config Pulumi recorded at the last "pulumi up"/,
    );
    await expect(failure).rejects.toThrow(
      /run "pulumi refresh --run-program" or "pulumi preview --refresh --run-program"/,
    );
    await expect(failure).rejects.not.toThrow("rotated-away-1");
  });

  it.each([
    { stackFiles: {}, advice: /is tfe:address as Pulumi recorded it.*; if it changed since: run/ },
    {
      stackFiles: { "Pulumi.ci.yaml": "config:\n  tfe:address: http://moved.example:8080\n" },
      advice: /; the stack's config now says http:\/\/moved\.example:8080: run/,
    },
    {
      stackFiles: { "Pulumi.ci.yaml": "config:\n  tfe:organization: acme\n" },
      advice: /; the stack's config now sets none: run/,
    },
    { stackFiles: { "Pulumi.ci.yaml": "config:\n  tfe:address: RECORDED\n" }, advice: undefined },
  ])(
    "a refused connection names the address; the recorded-config advice only where it can be the cause ($stackFiles)",
    async ({ stackFiles, advice }) => {
      const closed = await startSeededServer({ organization, token });
      await closed.close();
      const projectDir = await mkdtemp(join(tmpdir(), "provider-context-"));
      try {
        await writeFile(join(projectDir, "Pulumi.yaml"), "name: p\nruntime: nodejs\n");
        for (const [file, text] of Object.entries(stackFiles)) {
          await writeFile(join(projectDir, file), text.replace("RECORDED", closed.url));
        }
        const provider = configured(new ModuleVersionDeprecationProvider(), {
          "tfe:address": closed.url,
          "tfe:token": token,
        });
        provider.context.projectDir = projectDir;
        provider.context.useClient(
          new TfeClient({ address: closed.url, token, retry: { baseDelayMs: 5, maxDelayMs: 20 } }),
        );
        const failure = provider.delete(deprecationId);
        await expect(failure).rejects.toThrow(/refused the connection.*\(ECONNREFUSED\)/);
        if (advice) {
          await expect(failure).rejects.toThrow(advice);
          await expect(failure).rejects.toThrow(/run "pulumi destroy --run-program" \(or set PULUMI_RUN_PROGRAM=true/);
        } else {
          await expect(failure).rejects.not.toThrow(/recorded/);
        }
        // The same cause again, for another resource of the run: its request, and a pointer to the first message.
        const again = provider.delete(`${organization}/vpc/aws/1.1.0`);
        await expect(again).rejects.toThrow(
          /^PATCH \S+ failed: ECONNREFUSED at http:\/\/127\.0\.0\.1:\d+, as said in full for \S+ acme\/vpc\/aws\/1\.0\.0$/,
        );
      } finally {
        await rm(projectDir, { recursive: true, force: true });
      }
    },
    60_000,
  );

  it("adds nothing where the stack config did not give the setting, or the failure is not about it", async () => {
    process.env.TFE_TOKEN = "from-the-environment-1";
    try {
      const fromEnvironment = configured(new PolicyProvider(), { "tfe:address": server.url });
      const unauthorized = fromEnvironment.read("pol-abcdefghijklmnop", policyProps);
      await expect(unauthorized).rejects.toThrow(/\(401\)/);
      await expect(unauthorized).rejects.not.toThrow(/recorded/);
    } finally {
      delete process.env.TFE_TOKEN;
    }
    const valid = configured(new PolicyProvider(), { "tfe:address": server.url, "tfe:token": token });
    await expect(valid.delete("pol-abcdefghijklmnop", policyProps)).resolves.toBeUndefined();
  });
});

describe("issue 52: messages that name the setting to fix, in the user's words, once", () => {
  it("a 401 under --run-program (or PULUMI_RUN_PROGRAM) advises no run of what was just run", async () => {
    vi.stubEnv("PULUMI_RUN_PROGRAM", "true");
    try {
      const provider = configured(new PolicyProvider(), { "tfe:address": server.url, "tfe:token": "rotated-away-2" });
      const failure = provider.read("pol-abcdefghijklmnop", policyProps);
      await expect(failure).rejects.toThrow(/\(401\): set a valid API token in tfe:token/);
      await expect(failure).rejects.not.toThrow(/run-program|recorded/);
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it("reads --run-program from the pulumi command line, and PULUMI_RUN_PROGRAM from the environment", () => {
    const line = (args: string[]) => () => args;
    expect(commandRunsProgram({}, line(["preview", "--refresh", "--run-program"]))).toBe(true);
    expect(commandRunsProgram({}, line(["refresh", "--run-program=true", "--yes"]))).toBe(true);
    expect(commandRunsProgram({}, line(["refresh", "--run-program=false"]))).toBe(false);
    expect(commandRunsProgram({}, line(["preview", "--refresh"]))).toBe(false);
    expect(commandRunsProgram({}, () => undefined)).toBe(false);
    expect(commandRunsProgram({ PULUMI_RUN_PROGRAM: "true" }, () => undefined)).toBe(true);
  });

  it("an organization the service does not show the token: named with the setting, in full once per run", async () => {
    const provider = configured(new PolicyProvider(), {
      "tfe:address": server.url,
      "tfe:token": token,
      "tfe:organization": "acmee",
    });
    const policy = (name: string) => ({
      name,
      organization: "acmee",
      code: "main = rule { true }\n",
      enforcementLevel: "advisory",
    });
    const first = provider.check?.({}, policy("first")) as Promise<unknown>;
    await expect(first).rejects.toThrow(
      'GET /api/v2/organizations/acmee/policies: organization "acmee" does not exist, or this token has no access to ' +
        "it (404). Check the organization's name in tfe:organization (or TFE_ORGANIZATION, or the resource's " +
        "organization), and that the token belongs to that organization",
    );
    await expect(first).rejects.not.toThrow(/not found.*not found/);
    const second = provider.check?.({}, policy("second")) as Promise<unknown>;
    await expect(second).rejects.toThrow(
      /failed: 404 for organization "acmee" at http:\S+, as said in full for \S+ "first"$/,
    );
    // A deprecation meets it at the registry, whose 404 could be the module's: the organization is asked too.
    const deprecation = configured(new ModuleVersionDeprecationProvider(), {
      "tfe:address": server.url,
      "tfe:token": token,
    });
    const version = {
      organization: "acmee",
      moduleName: "vpc",
      moduleProvider: "aws",
      version: "1.0.0",
      reason: "Old",
    };
    await expect(deprecation.check?.({}, version) as Promise<unknown>).rejects.toThrow(
      /organization "acmee" does not exist, or this token has no access to it \(404\)\. Check the organization's name in tfe:organization/,
    );
  });

  it("with no token, names the ways a program gives one (no client option), in the program's namespace", () => {
    const home = mkdtempSync(join(tmpdir(), "no-credentials-"));
    vi.stubEnv("HOME", home);
    vi.stubEnv("TFE_TOKEN", "");
    vi.stubEnv("TF_CLI_CONFIG_FILE", "");
    try {
      const context = new ProviderContext();
      context.configureFrom((key) => ({ address: server.url })[key], "tfegov");
      let message = "";
      try {
        void context.client;
      } catch (error) {
        message = context.wording((error as Error).message);
      }
      expect(message).toContain(
        'Set one of: the stack\'s config ("pulumi config set --secret tfegov:token ..."); the TFE_TOKEN environment variable; or run "terraform login',
      );
      expect(message).not.toContain("option");
    } finally {
      vi.unstubAllEnvs();
      rmSync(home, { recursive: true, force: true });
    }
  });

  it.each([
    {
      on: "the resource",
      allowedOnResource: true,
      stack: undefined,
      env: undefined,
      says: "(allowed by allow_weakening)",
    },
    {
      on: "the stack",
      allowedOnResource: false,
      stack: "true",
      env: undefined,
      says: "(allowed by tfegov:allowWeakening)",
    },
    {
      on: "one command",
      allowedOnResource: false,
      stack: undefined,
      env: "true",
      says: "(allowed by TFE_ALLOW_WEAKENING=true)",
    },
  ])("a weakening let through by $on says what let it through", async ({ allowedOnResource, stack, env, says }) => {
    if (env) vi.stubEnv("TFE_ALLOW_WEAKENING", env);
    try {
      const context = new ProviderContext();
      context.configureFrom((key) => (key === "allowWeakening" ? stack : undefined), "tfegov");
      context.wording = (text) =>
        inProgramLanguage(inNamespace(text, "tfegov"), "python", ["allowWeakening", "enforcementLevel"]);
      const warnings: string[] = [];
      context.warn = async (_urn, message) => {
        warnings.push(context.wording(message));
      };
      const refusal = await context.judge({
        subject: 'policy "guard"',
        what: "policy",
        before: policyEnforcement({ kind: "sentinel", enforcementLevel: "hard-mandatory" }),
        after: policyEnforcement({ kind: "sentinel", enforcementLevel: "advisory" }),
        allowedOnResource,
        urn: undefined,
      });
      expect(refusal).toBeUndefined();
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/weakens governance: enforcement_level goes from hard-mandatory to advisory/);
      expect(warnings[0]?.endsWith(says)).toBe(true);
    } finally {
      vi.unstubAllEnvs();
    }
  });
});

// Review of issue 52: the service answers 404, never 403, to a valid token without permission (service-facts.md). A
// token of organization "acme" that may read but not manage policies lists acme's policies, and its create of a
// policy answers 404. That organization exists and the token belongs to it: the message must not send the user to
// tfe:organization.
describe("a create refused for want of permission, in an organization the token can read", () => {
  const readOnlyToken = "read-only-token-0123456789";
  let readOnlyServer: RunningServer;
  beforeAll(async () => {
    readOnlyServer = await startServer({
      port: 0,
      seed: {
        organizations: [{ name: "acme", plus: true }],
        tokens: [{ token: readOnlyToken, organizations: ["acme"], managePolicies: false, manageModules: false }],
      },
    });
  });
  afterAll(async () => {
    await readOnlyServer.close();
  });

  it("does not say the organization does not exist, and names the permission", async () => {
    const provider = configured(new PolicyProvider(), {
      "tfe:address": readOnlyServer.url,
      "tfe:token": readOnlyToken,
      "tfe:organization": "acme",
    });
    const inputs = {
      organization: "acme",
      name: "guard",
      code: "main = rule { true }\n",
      enforcementLevel: "advisory",
    };
    // The check lists acme's policies: the organization is visible to this token.
    const checked = await provider.check?.({}, inputs);
    expect(checked?.failures ?? []).toEqual([]);
    const created = provider.create(checked?.inputs ?? inputs);
    await expect(created).rejects.toThrow(
      "POST /api/v2/organizations/acme/policies: not found, or the token lacks permission for it (404): this token " +
        'reads organization "acme", so it exists: the token\'s team likely lacks the "Manage policies" permission',
    );
    await expect(created).rejects.not.toThrow(/does not exist/);
    await expect(created).rejects.not.toThrow(/Check the organization's name in tfe:organization/);
    await expect(created).rejects.not.toThrow(readOnlyToken);
  });
});

describe("sameValue", () => {
  it("treats objects with the same entries in another key order as the same, and null like undefined", () => {
    expect(sameValue({ b: 1, a: { d: 2, c: 3 } }, { a: { c: 3, d: 2 }, b: 1 })).toBe(true);
    expect(sameValue({ a: 1 }, { a: 2 })).toBe(false);
    expect(sameValue(["a", "b"], ["b", "a"])).toBe(false);
    expect(sameValue(undefined, null)).toBe(true);
  });
});
