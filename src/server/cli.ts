#!/usr/bin/env node
import "../node-version";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { readFaultPlan } from "./faults";
import { startServer } from "./index";
import type { TlsCredentials } from "./tls";

const usage = `Usage: tfe-governance-server [options]

A local HCP Terraform / Terraform Enterprise API for policies and module version deprecation.

Options:
  --port N          Port of the API (default 0: a free port, printed on start).
  --host ADDRESS    Interface to listen on (default 127.0.0.1).
  --download-port N Port of the origin that serves signed policy-code downloads (default 0: a free port).
  --download-host NAME
                    Host name of the download URLs: another name for the same interface, so that Go clients (which
                    keep the token on a redirect to the same host name) do not send it there. Default: localhost
                    when listening on a loopback or wildcard address.
  --data FILE       SQLite file holding all data (default :memory:, lost on exit). Survives kill -9 and restarts.
                    Its directory is created if missing.
  --seed FILE       JSON seed: organizations, tokens, policySets, modules (see README). Applied at every start;
                    without it an empty store gets organization "example-org" (Plus) and one random token.
                    "--seed quickstart" is the seed the package ships: what the quickstart program expects
                    (organization "acme", a token, a policy set, module acme/vpc/aws). A file named so: ./quickstart.
  --rate-limit N    Answer 429 beyond N requests per second per token, as the service does (default: no limit).
  --faults SPEC     Fault rules as inline JSON or a JSON file: [{"route":"POST /api/v2/organizations/:organization/policies",
                    "status":503,"share":0.5}] or {"seed":7,"rules":[...]}. A rule takes status (500, 502, 503, 504),
                    reset (true) and/or latencyMs, plus share (0-1, default 1), times (first N hits only) and
                    afterHandler (fail the answer after the change is made).
  --tls             Serve https with a self-signed certificate made at start for localhost, 127.0.0.1, ::1,
                    --host and --download-host. The certificate is written to a file the banner names; clients
                    trust it with NODE_EXTRA_CA_CERTS=FILE (Node), SSL_CERT_FILE=FILE (Go: terraform, go-tfe) or
                    curl --cacert FILE.
  --tls-out FILE    Where --tls writes its certificate (default: a new temporary directory).
  --tls-cert FILE   Serve https with this PEM certificate (chain) ...
  --tls-key FILE    ... and this PEM private key.
  --quiet           Do not print the request log.
  --help            Show this text.

Tokens are printed on start; requests need "Authorization: Bearer <token>". The OpenAPI document is at /api/openapi.json.`;

// Shipped in the package (package.json "files") beside dist/, so the path holds in a checkout and once installed.
const quickstartSeed = join(__dirname, "..", "..", "examples", "quickstart", "seed.json");

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      port: { type: "string", default: "0" },
      host: { type: "string", default: "127.0.0.1" },
      "download-port": { type: "string", default: "0" },
      "download-host": { type: "string" },
      data: { type: "string", default: ":memory:" },
      seed: { type: "string" },
      "rate-limit": { type: "string" },
      faults: { type: "string" },
      tls: { type: "boolean", default: false },
      "tls-out": { type: "string" },
      "tls-cert": { type: "string" },
      "tls-key": { type: "string" },
      quiet: { type: "boolean", default: false },
      help: { type: "boolean", default: false },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(`${usage}\n`);
    return;
  }
  // Digits only: Number("") and Number(" ") are 0, which would quietly pick a free port.
  const number = (flag: string, text: string | undefined, minimum: number, maximum?: number) => {
    const value = Number(text);
    if (!/^\d+$/.test(text ?? "") || value < minimum || (maximum !== undefined && value > maximum)) {
      const range = maximum === undefined ? `of at least ${minimum}` : `from ${minimum} to ${maximum}`;
      throw new Error(`--${flag} must be a whole number ${range}, not "${text}"`);
    }
    return value;
  };
  const maxPort = 65_535;
  if (values.data !== ":memory:") mkdirSync(dirname(values.data), { recursive: true });
  const tls = tlsSettings(values);
  const server = await startServer({
    port: number("port", values.port, 0, maxPort),
    host: values.host,
    downloadPort: number("download-port", values["download-port"], 0, maxPort),
    ...(values["download-host"] ? { downloadHost: values["download-host"] } : {}),
    data: values.data,
    ...(values.seed ? { seed: values.seed === "quickstart" ? quickstartSeed : values.seed } : {}),
    ...(values["rate-limit"] !== undefined ? { rateLimit: number("rate-limit", values["rate-limit"], 1) } : {}),
    ...(values.faults ? { faults: readFaultPlan(values.faults) } : {}),
    ...(tls ? { tls: tls.credentials } : {}),
  });
  if (tls?.certificateFile) {
    mkdirSync(dirname(tls.certificateFile), { recursive: true });
    writeFileSync(tls.certificateFile, server.certificate ?? "");
  }
  if (!values.quiet) {
    server.requestLog.onEntry((entry) =>
      process.stdout.write(
        `${entry.at} ${entry.origin} ${entry.method} ${entry.path} ${entry.status} ${entry.durationMs.toFixed(1)}ms\n`,
      ),
    );
  }
  const lines = [
    `tfe-governance-server listening on ${server.url}`,
    `download origin ${server.downloadOrigin}`,
    `data ${values.data}`,
    ...(tls?.certificateFile
      ? [
          `tls certificate ${tls.certificateFile} (self-signed, made at start): trust it with`,
          `  NODE_EXTRA_CA_CERTS=${tls.certificateFile} (Node, this library), SSL_CERT_FILE=${tls.certificateFile} (Go: terraform, go-tfe), curl --cacert ${tls.certificateFile}`,
        ]
      : []),
    "tokens:",
    ...server.tokens.map(
      (token) =>
        `  ${token.token}  organizations: ${token.organizations.join(", ") || "(none)"}` +
        `${token.managePolicies ? "  manage-policies" : ""}${token.manageModules ? "  manage-modules" : ""}`,
    ),
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
  const stop = () => {
    server.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

function tlsSettings(values: {
  tls: boolean;
  "tls-out"?: string | undefined;
  "tls-cert"?: string | undefined;
  "tls-key"?: string | undefined;
}): { credentials: TlsCredentials | "self-signed"; certificateFile?: string } | undefined {
  const { "tls-cert": certFile, "tls-key": keyFile, "tls-out": outFile } = values;
  if (values.tls) {
    if (certFile || keyFile) {
      throw new Error("--tls makes its own certificate: give either --tls or --tls-cert with --tls-key, not both");
    }
    const certificateFile = resolve(outFile ?? join(mkdtempSync(join(tmpdir(), "tfe-governance-server-")), "cert.pem"));
    return { credentials: "self-signed", certificateFile };
  }
  if (outFile) throw new Error("--tls-out names where --tls writes its certificate: add --tls");
  if (!certFile && !keyFile) return undefined;
  if (!certFile || !keyFile) throw new Error("--tls-cert and --tls-key go together: give both PEM files");
  const read = (flag: string, file: string) => {
    try {
      return readFileSync(file, "utf8");
    } catch (error) {
      throw new Error(`--${flag} ${file}: ${error instanceof Error ? error.message : String(error)}`);
    }
  };
  return { credentials: { cert: read("tls-cert", certFile), key: read("tls-key", keyFile) } };
}

main().catch((error: unknown) => {
  process.stderr.write(`tfe-governance-server: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(2);
});
