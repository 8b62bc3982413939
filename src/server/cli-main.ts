// The server command itself, loaded by cli.ts once Node.js is new enough.
import "../process/node-version";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { FaultInjector, type FaultPlan, readFaultPlan } from "./faults";
import { startServer } from "./index";
import type { TlsCredentials } from "./tls";
import { serverUsage as usage } from "./usage";

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
  const port = number("port", values.port, 0, maxPort);
  const downloadPort = number("download-port", values["download-port"], 0, maxPort);
  const server = await startServer({
    port,
    host: values.host,
    downloadPort,
    ...(values["download-host"] ? { downloadHost: values["download-host"] } : {}),
    data: values.data,
    ...(values.seed ? { seed: values.seed === "quickstart" ? quickstartSeed : values.seed } : {}),
    ...(values["rate-limit"] !== undefined ? { rateLimit: number("rate-limit", values["rate-limit"], 1) } : {}),
    ...(values.faults ? { faults: faultsOption(values.faults) } : {}),
    ...(tls ? { tls: tls.credentials } : {}),
  }).catch(async (error: unknown) => {
    const taken = (error as { port?: unknown }).port;
    throw await portTakenError(error, downloadPort !== 0 && taken === downloadPort ? "--download-port" : "--port");
  });
  if (tls?.certificateFile) {
    mkdirSync(dirname(tls.certificateFile), { recursive: true });
    writeFileSync(tls.certificateFile, server.certificate ?? "");
  }
  if (!values.quiet) {
    server.requestLog.onEntry((entry) => {
      // Not once its reader has gone (cli.ts): the log ends, the server goes on.
      if (!process.stdout.writable) return;
      process.stdout.write(
        `${entry.at} ${entry.origin} ${entry.method} ${entry.path} ${entry.status} ${entry.durationMs.toFixed(1)}ms\n`,
      );
    });
  }
  const lines = [
    `tfe-governance-server listening on ${server.url}`,
    `download origin ${server.downloadOrigin}: where the API's download links point (policy code, policy-set versions); nothing to set`,
    values.data !== ":memory:"
      ? `data ${values.data} (kept across restarts)`
      : "data in memory: lost when the server stops (--data FILE keeps it across restarts)",
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
    ...server.inventory.flatMap(({ organization, policySets, workspaces, projects, oauthTokens }) => [
      `organization ${organization}:`,
      `  policy sets: ${policySets.map((set) => `${set.id} ${set.name} (${set.kind})`).join(", ") || "(none)"}`,
      `  workspaces: ${workspaces.map((workspace) => `${workspace.id} ${workspace.name}`).join(", ") || "(none)"}`,
      `  projects: ${projects.map((project) => `${project.id} ${project.name}`).join(", ") || "(none)"}`,
      `  oauth tokens (vcs-repo oauth-token-id): ${oauthTokens.map((token) => `${token.id} (${token.serviceProvider})`).join(", ") || "(none)"}`,
    ]),
    ...(server.vcsRepositories.length > 0
      ? [
          "version-control repositories (vcs-repo identifier, the local git repository; POST /_local/vcs-push after a commit):",
          ...server.vcsRepositories.map((repository) => `  ${repository.identifier}  ${repository.path}`),
        ]
      : []),
    ...(server.githubAppInstallations.length > 0
      ? [`github app installations: ${server.githubAppInstallations.join(", ")}`]
      : []),
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
  stopWhenOrphanedByNpm(stop);
}

/**
 * `npx` and `npm run` start a bin through `sh -c`, and on SIGTERM or SIGINT they signal that shell, which exits
 * without passing the signal on: the server would stay up, orphaned, holding its port. Started so, it stops when
 * its parent goes. Started directly (by a shell, nohup, a service manager) it keeps running as it is told.
 */
function stopWhenOrphanedByNpm(stop: () => void): void {
  if (process.env.npm_command === undefined) return;
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) stop();
  }, 250).unref();
}

/** --faults as inline JSON or a file, checked here so that its errors name the flag. */
function faultsOption(text: string): FaultPlan {
  try {
    const plan = readFaultPlan(text);
    new FaultInjector(plan);
    return plan;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new Error(
      `--faults ${JSON.stringify(text)}: ${message.replace(/^faults /, "")}; see tfe-governance-server --help`,
    );
  }
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

/**
 * A port another program holds, said so that a server started in the background (`&`) leaves no doubt: which port
 * and flag, and whether what answers there is a tfe-governance-server (with data of its own, which a program run
 * against that address would meet instead of this one's).
 */
async function portTakenError(error: unknown, flag: string): Promise<unknown> {
  const { code, address = "127.0.0.1", port } = error as { code?: unknown; address?: string; port?: number };
  if (code !== "EADDRINUSE") return error;
  const host = address.includes(":") ? `[${address}]` : address;
  const answer = await fetch(`http://${host}:${port}/api/openapi.json`, { signal: AbortSignal.timeout(2000) })
    .then((response) => response.json() as Promise<{ info?: { title?: unknown } }>)
    .catch(() => undefined);
  const holder = String(answer?.info?.title ?? "").startsWith("tfe-governance-server")
    ? "another tfe-governance-server listens there, with data of its own (the quickstart's closing lines start " +
      "one): stop it first (kill %1 in the shell that started it, or Ctrl-C in its terminal)"
    : "another program listens there: stop it";
  return new Error(
    `cannot listen on ${address} port ${port} (${flag}): the port is taken (EADDRINUSE); ${holder}, or give ` +
      `another ${flag} (0 picks a free one)`,
  );
}

/** Runs the server command; a failure ends the process with one line and status 2. */
export function run(): void {
  main().catch((error: unknown) => {
    const code = (error as { code?: unknown }).code;
    const message = error instanceof Error ? error.message : String(error);
    // node:util's parseArgs says "Unknown option '--x'" and no more: say where the options are.
    const hint = code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" ? "; see tfe-governance-server --help" : "";
    process.stderr.write(`tfe-governance-server: ${message}${hint}\n`);
    process.exit(2);
  });
}
