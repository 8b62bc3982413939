import type * as pulumi from "@pulumi/pulumi";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TfeClient } from "../../src/client";
import { ModuleVersionDeprecationProvider } from "../../src/resources/module-version-deprecation";
import { PolicyProvider } from "../../src/resources/policy";
import { sameValue, withRecordedConfigAdvice } from "../../src/resources/provider-context";
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
  return withRecordedConfigAdvice(provider);
}

const policyProps = { organization, name: "p" };
const deprecationId = `${organization}/vpc/aws/1.0.0`;

describe("a read or delete that a recorded token or address may explain", () => {
  it("names tfe:token and the refresh to run after a 401 with the token from stack config", async () => {
    const provider = configured(new PolicyProvider(), { "tfe:address": server.url, "tfe:token": "rotated-away-1" });
    const failure = provider.read("pol-abcdefghijklmnop", policyProps);
    await expect(failure).rejects.toThrow(/\(401\).*used tfe:token as Pulumi recorded it at the last "pulumi up"/);
    await expect(failure).rejects.toThrow(
      /run "pulumi refresh --run-program" or "pulumi preview --refresh --run-program"/,
    );
    await expect(failure).rejects.toThrow(/"pulumi up" or "pulumi refresh --run-program" records the new value/);
    await expect(failure).rejects.not.toThrow("rotated-away-1");
  });

  it("names tfe:address and the destroy to run when the recorded address refuses the connection", async () => {
    const closed = await startSeededServer({ organization, token });
    await closed.close();
    const provider = configured(new ModuleVersionDeprecationProvider(), {
      "tfe:address": closed.url,
      "tfe:token": token,
    });
    provider.context.useClient(
      new TfeClient({ address: closed.url, token, retry: { baseDelayMs: 5, maxDelayMs: 20 } }),
    );
    const failure = provider.delete(deprecationId);
    await expect(failure).rejects.toThrow(/ECONNREFUSED.*used tfe:address as Pulumi recorded it/);
    await expect(failure).rejects.toThrow(/run "pulumi destroy --run-program" \(or set PULUMI_RUN_PROGRAM=true/);
  }, 60_000);

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
