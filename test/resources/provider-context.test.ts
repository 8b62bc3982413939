import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type * as pulumi from "@pulumi/pulumi";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TfeClient } from "../../src/client";
import { FailureReport } from "../../src/resources/failure-report";
import { ModuleVersionDeprecationProvider } from "../../src/resources/module-version-deprecation";
import { PolicyProvider } from "../../src/resources/policy";
import { sameValue, withFailureReports } from "../../src/resources/provider-context";
import type { RunningServer } from "../../src/server";
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

describe("sameValue", () => {
  it("treats objects with the same entries in another key order as the same, and null like undefined", () => {
    expect(sameValue({ b: 1, a: { d: 2, c: 3 } }, { a: { c: 3, d: 2 }, b: 1 })).toBe(true);
    expect(sameValue({ a: 1 }, { a: 2 })).toBe(false);
    expect(sameValue(["a", "b"], ["b", "a"])).toBe(false);
    expect(sameValue(undefined, null)).toBe(true);
  });
});
