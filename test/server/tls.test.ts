import { execFile, execFileSync } from "node:child_process";
import { createPrivateKey, X509Certificate } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Agent, request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, selfSignedCertificate, startServer } from "../../src/server";
import { derPositiveInteger } from "../../src/server/tls";
import { compiledCli, type LaunchedCli, launchCli } from "./cli-process";
import { seed, token } from "./helpers";

let directory: string;
beforeAll(() => {
  directory = mkdtempSync(join(tmpdir(), "tfe-tls-"));
});
afterAll(() => rmSync(directory, { recursive: true, force: true }));

describe("selfSignedCertificate", () => {
  it("makes a certificate that names every host, signs itself and is its own authority", () => {
    const { cert, key } = selfSignedCertificate(["localhost", "127.0.0.1", "::1", "tfe.internal"]);
    const certificate = new X509Certificate(cert);
    expect(certificate.checkHost("localhost")).toBe("localhost");
    expect(certificate.checkHost("tfe.internal")).toBe("tfe.internal");
    expect(certificate.checkIP("127.0.0.1")).toBe("127.0.0.1");
    expect(certificate.checkIP("::1")).toBe("::1");
    expect(certificate.checkHost("example.com")).toBeUndefined();
    expect(certificate.checkIP("127.0.0.2")).toBeUndefined();
    expect(certificate.verify(certificate.publicKey)).toBe(true);
    expect(certificate.checkPrivateKey(createPrivateKey(key))).toBe(true);
    expect(certificate.ca).toBe(true);
    expect(certificate.issuer).toBe(certificate.subject);
    expect(new Date(certificate.validFrom).getTime()).toBeLessThanOrEqual(Date.now());
    expect(new Date(certificate.validTo).getTime()).toBeGreaterThan(Date.now() + 29 * 86_400_000);
  });

  it("gives each certificate its own key and serial number", () => {
    const [first, second] = [selfSignedCertificate(["localhost"]), selfSignedCertificate(["localhost"])];
    const [a, b] = [new X509Certificate(first!.cert), new X509Certificate(second!.cert)];
    expect(a.serialNumber).not.toBe(b.serialNumber);
    expect(a.fingerprint256).not.toBe(b.fingerprint256);
  });
});

describe("the server over https", () => {
  let server: RunningServer;
  let trusting: Agent;
  beforeAll(async () => {
    server = await startServer({ seed, tls: "self-signed" });
    trusting = new Agent({ connect: { ca: server.certificate! } });
  });
  afterAll(async () => {
    await trusting.close();
    await server.close();
  });

  const get = (url: string, dispatcher?: Agent) =>
    request(url, { headers: { authorization: `Bearer ${token}` }, ...(dispatcher ? { dispatcher } : {}) });

  it("serves the API and the download origin over https with the certificate it reports", async () => {
    expect(server.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(server.downloadOrigin).toMatch(/^https:\/\//);
    const ping = await get(`${server.url}/api/v2/ping`, trusting);
    expect(ping.statusCode).toBe(204);
    await ping.body.dump();
  });

  it("keeps the scheme on the download redirect: an https API never sends a client to http", async () => {
    const created = await request(`${server.url}/api/v2/organizations/acme/policies`, {
      method: "POST",
      dispatcher: trusting,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/vnd.api+json" },
      body: JSON.stringify({
        data: { type: "policies", attributes: { name: "tls", "enforcement-level": "advisory" } },
      }),
    });
    const { data } = (await created.body.json()) as { data: { id: string } };
    await request(`${server.url}/api/v2/policies/${data.id}/upload`, {
      method: "PUT",
      dispatcher: trusting,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/octet-stream" },
      body: "main = rule { true }",
    }).then((answer) => answer.body.dump());
    const redirect = await get(`${server.url}/api/v2/policies/${data.id}/download`, trusting);
    await redirect.body.dump();
    const location = String(redirect.headers.location);
    expect(new URL(location).protocol).toBe("https:");
    const code = await request(location, { dispatcher: trusting });
    expect(await code.body.text()).toBe("main = rule { true }");
  });

  it("injects a reset as a reset, before and after the handler, not as a 500", async () => {
    for (const afterHandler of [false, true]) {
      server.setFaults([{ route: "GET /api/v2/ping", reset: true, afterHandler, times: 1 }]);
      try {
        const error = await get(`${server.url}/api/v2/ping`, trusting).then(
          () => undefined,
          (thrown: { code?: string; cause?: { code?: string } }) => thrown,
        );
        // A reset, not a close: undici says a closed socket as UND_ERR_SOCKET with no ECONNRESET under it.
        expect([error?.code, error?.cause?.code], `afterHandler ${afterHandler}`).toContain("ECONNRESET");
      } finally {
        server.setFaults([]);
      }
    }
  });

  it("is refused by a client that does not trust the certificate", async () => {
    await expect(get(`${server.url}/api/v2/ping`)).rejects.toMatchObject({
      code: expect.stringMatching(/SELF_SIGNED|UNABLE_TO_VERIFY/),
    });
  });
});

describe("the bin with --tls", () => {
  let cli: string;
  const running: LaunchedCli[] = [];
  beforeAll(() => {
    cli = compiledCli();
  });
  afterAll(() => {
    for (const launched of running) launched.child.kill("SIGKILL");
  });

  async function launch(args: string[]): Promise<LaunchedCli> {
    const launched = await launchCli(cli, ["--quiet", ...args]);
    running.push(launched);
    return launched;
  }

  // A separate Node process, as a user's program or `pulumi up` is: NODE_EXTRA_CA_CERTS is read at its start.
  const pingFromNode = (url: string, env: NodeJS.ProcessEnv) =>
    new Promise<string>((resolve) => {
      const script = `fetch(process.argv[1], { headers: { authorization: "Bearer ${token}" } })
        .then((r) => console.log(r.status), (e) => console.log(e.cause?.code ?? e.message))`;
      execFile(
        process.execPath,
        ["-e", script, `${url}/api/v2/ping`],
        { env: { PATH: process.env.PATH, ...env } },
        (_e, out) => resolve(out.trim()),
      );
    });

  it("writes the certificate where the banner says, and NODE_EXTRA_CA_CERTS makes Node trust it", async () => {
    const seedFile = join(directory, "seed.json");
    writeFileSync(seedFile, JSON.stringify(seed));
    const certificateFile = join(directory, "not-yet", "server-cert.pem");
    const server = await launch(["--tls", "--tls-out", certificateFile, "--seed", seedFile]);
    expect(server.url).toMatch(/^https:\/\//);
    expect(server.output()).toContain(`tls certificate ${certificateFile}`);
    expect(server.output()).toContain(`NODE_EXTRA_CA_CERTS=${certificateFile}`);
    expect(server.output()).toContain(`SSL_CERT_FILE=${certificateFile}`);
    const certificate = new X509Certificate(readFileSync(certificateFile));
    expect(certificate.checkIP("127.0.0.1")).toBe("127.0.0.1");
    expect(certificate.checkHost("localhost")).toBe("localhost");
    expect(readFileSync(certificateFile, "utf8")).not.toContain("PRIVATE KEY");

    expect(await pingFromNode(server.url, { NODE_EXTRA_CA_CERTS: certificateFile })).toBe("204");
    expect(await pingFromNode(server.url, {})).toMatch(/SELF_SIGNED|UNABLE_TO_VERIFY/);
  });

  it("writes into a new temporary directory without --tls-out", async () => {
    const server = await launch(["--tls"]);
    const file = /tls certificate (\S+)/.exec(server.output())?.[1];
    expect(file).toMatch(new RegExp(`^${tmpdir()}/tfe-governance-server-`));
    expect(new X509Certificate(readFileSync(file!)).ca).toBe(true);
    rmSync(join(file!, ".."), { recursive: true, force: true });
  });

  it("serves a given certificate and key with --tls-cert and --tls-key", async () => {
    const { cert, key } = selfSignedCertificate(["127.0.0.1"]);
    writeFileSync(join(directory, "given.pem"), cert);
    writeFileSync(join(directory, "given.key"), key);
    const server = await launch([
      "--tls-cert",
      join(directory, "given.pem"),
      "--tls-key",
      join(directory, "given.key"),
    ]);
    expect(server.output()).not.toContain("tls certificate");
    const agent = new Agent({ connect: { ca: cert } });
    const ping = await request(`${server.url}/api/v2/ping`, {
      dispatcher: agent,
      headers: { authorization: `Bearer ${server.output().match(/^ {2}(\S+)/m)![1]}` },
    });
    expect(ping.statusCode).toBe(204);
    await agent.close();
  });

  it("refuses contradicting or incomplete TLS flags, naming them", () => {
    const fails = (args: string[]) => () =>
      execFileSync(process.execPath, [cli, ...args], { stdio: "pipe", timeout: 5000 });
    expect(fails(["--tls", "--tls-cert", "a.pem", "--tls-key", "a.key"])).toThrow(/either --tls or --tls-cert/);
    expect(fails(["--tls-cert", "a.pem"])).toThrow(/--tls-cert and --tls-key go together/);
    expect(fails(["--tls-out", "a.pem"])).toThrow(/--tls-out .* add --tls/);
    expect(fails(["--tls-cert", join(directory, "missing.pem"), "--tls-key", join(directory, "missing.key")])).toThrow(
      /--tls-cert .*missing\.pem/,
    );
  });
});

describe("DER integers in the certificate", () => {
  it.each([
    ["00 12 34", "02 02 12 34"],
    ["00 00 80", "02 02 00 80"],
    ["80 01", "02 03 00 80 01"],
    ["00 00", "02 01 00"],
    ["7f", "02 01 7f"],
  ])("writes %s as %s: the fewest bytes, a leading zero only before a set top bit", (given, written) => {
    const hex = (text: string) => Buffer.from(text.replaceAll(" ", ""), "hex");
    expect(derPositiveInteger(hex(given)).toString("hex")).toBe(hex(written).toString("hex"));
  });
});
