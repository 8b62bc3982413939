import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TfeClient, TfeConfigError, TfeConnectionError } from "../../src/client/index";
import type { RunningServer } from "../../src/server";
import { startSeededServer } from "../seeded-server";

// The client against the local server in https mode (its self-signed certificate, as for a Terraform Enterprise
// behind a private CA): it works with the certificate trusted and refuses the server otherwise.

const organization = "acme";
const token = "tls-client-token-0123456789";
let server: RunningServer;
let directory: string;
let certificateFile: string;

beforeAll(async () => {
  server = await startSeededServer({ organization, token }, { tls: "self-signed" });
  directory = mkdtempSync(join(tmpdir(), "tfe-client-tls-"));
  certificateFile = join(directory, "cert.pem");
  writeFileSync(certificateFile, server.certificate!);
});
afterAll(async () => {
  await server.close();
  rmSync(directory, { recursive: true, force: true });
});

const clients: TfeClient[] = [];
afterAll(() => Promise.all(clients.map((client) => client.close())));
const keep = (client: TfeClient) => {
  clients.push(client);
  return client;
};

describe("the client over https", () => {
  it("creates, uploads and downloads through the https redirect with the certificate trusted", async () => {
    const client = keep(
      new TfeClient({ address: server.url, token, rateLimit: false, caCertificate: server.certificate }),
    );
    const policy = await client.policies.create(organization, { name: "over-tls", enforcementLevel: "advisory" });
    await client.policies.upload(policy.id, "main = rule { true }\n");
    expect((await client.policies.download(policy.id)).toString()).toBe("main = rule { true }\n");
    expect(new URL(server.downloadOrigin).protocol).toBe("https:");
  });

  it("refuses the server without the certificate trusted, at once, naming the ways to trust it", async () => {
    const client = keep(new TfeClient({ address: server.url, token, rateLimit: false }));
    const error = await client.policies.list(organization).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TfeConnectionError);
    const connection = error as TfeConnectionError;
    expect(connection.code).toMatch(/SELF_SIGNED|UNABLE_TO_VERIFY/);
    expect(connection.attempts).toBe(1);
    expect(connection.message).toContain(`the certificate of ${server.url} is not trusted`);
    expect(connection.message).toContain("tfe:caCertificate");
    expect(connection.message).toContain("NODE_EXTRA_CA_CERTS");
    expect(connection.message).not.toContain(token);
  });

  it("takes the certificate from TFE_CA_CERTIFICATE (a file) or tfe:caCertificate (PEM text) in fromConfig", async () => {
    const fromEnv = keep(
      TfeClient.fromConfig({ env: { TFE_ADDRESS: server.url, TFE_TOKEN: token, TFE_CA_CERTIFICATE: certificateFile } }),
    );
    expect((await fromEnv.policies.list(organization)).items).toBeDefined();
    const values: Record<string, string> = { address: server.url, token, caCertificate: server.certificate! };
    const fromStack = keep(TfeClient.fromConfig({ env: {}, stackConfig: { get: (key) => values[key] } }));
    expect((await fromStack.policies.list(organization)).items).toBeDefined();
  });

  it("refuses a certificate setting that is not a readable PEM file or PEM text, naming the setting", () => {
    const env = (value: string) => ({ env: { TFE_ADDRESS: server.url, TFE_TOKEN: token, TFE_CA_CERTIFICATE: value } });
    expect(() => TfeClient.fromConfig(env(join(directory, "missing.pem")))).toThrow(
      /TFE_CA_CERTIFICATE: cannot read the certificate file ".*missing\.pem" \(ENOENT\)/,
    );
    const notPem = join(directory, "not.pem");
    writeFileSync(notPem, "hello");
    expect(() => TfeClient.fromConfig(env(notPem))).toThrow(
      /TFE_CA_CERTIFICATE: ".*not\.pem" holds no PEM certificate/,
    );
    expect(
      () => new TfeClient({ address: server.url, token, caCertificate: "-----BEGIN CERTIFICATE-----\nxx\n" }),
    ).toThrow(TfeConfigError);
  });
});
