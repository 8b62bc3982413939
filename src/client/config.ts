import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { TfeConfigError } from "./errors";
import type { RetryPolicy } from "./transport";

export const defaultAddress = "https://app.terraform.io";

/** The subset of a Pulumi `Config` the client reads (`get` / `getSecret` of the `tfe` namespace). */
export interface StackConfigSource {
  get(key: string): string | undefined;
}

export interface ClientConfigInputs {
  address?: string | undefined;
  hostname?: string | undefined;
  token?: string | undefined;
  /** A CA certificate to trust besides Node's own: PEM text, or the path of a PEM file. */
  caCertificate?: string | undefined;
  /** Pulumi stack config of the `tfe` namespace: `address`, `hostname`, `token`, `caCertificate`. */
  stackConfig?: StackConfigSource | undefined;
  env?: NodeJS.ProcessEnv;
  homeDirectory?: string;
  /**
   * The ways this caller itself takes a token, for the message when there is none (the environment and the
   * credentials file follow): a program or the client by default; a command says its own (it has no stack config).
   */
  tokenWays?: string;
}

const libraryTokenWays =
  'the token option; Pulumi config "pulumi config set --secret tfe:token ..."; the TFE_TOKEN environment variable';

export interface ResolvedClientConfig {
  address: string;
  hostname: string;
  token: string;
  /** Where the token came from, for messages (never the token itself). */
  tokenSource: "explicit" | "stack config tfe:token" | "TFE_TOKEN" | `credentials file ${string}`;
  /** Where the address came from, for messages. */
  addressSource: AddressSource;
  /** PEM certificates to trust besides Node's own (a private CA, the local server's --tls certificate). */
  caCertificate?: string;
}

type AddressSource =
  | "explicit"
  | "stack config tfe:address"
  | "stack config tfe:hostname"
  | "TFE_ADDRESS"
  | "TFE_HOSTNAME"
  | "default";

/** Where an address came from, as a message about an unreachable address says it. */
export const addressDescriptions: Record<AddressSource, string> = {
  explicit: "the address option",
  "stack config tfe:address": "stack config tfe:address",
  "stack config tfe:hostname": "stack config tfe:hostname",
  TFE_ADDRESS: "the TFE_ADDRESS environment variable",
  TFE_HOSTNAME: "the TFE_HOSTNAME environment variable",
  default: "the default: none of tfe:address, tfe:hostname, TFE_ADDRESS, TFE_HOSTNAME is set",
};

/**
 * Resolves address and token from, in order: explicit values, Pulumi stack config (`tfe:address` /
 * `tfe:hostname`, `tfe:token`), the environment (`TFE_ADDRESS`, `TFE_HOSTNAME`, `TFE_TOKEN`), and the Terraform
 * CLI credentials file (`TF_CLI_CONFIG_FILE` or `~/.terraform.d/credentials.tfrc.json`) keyed by hostname; and a CA
 * certificate from the `caCertificate` option, `tfe:caCertificate` or `TFE_CA_CERTIFICATE`.
 */
export function resolveClientConfig(inputs: ClientConfigInputs = {}): ResolvedClientConfig {
  const { token, tokenSource, address, hostname, addressSource } = resolveAddressAndToken(inputs);
  const caCertificate = resolveCaCertificate(inputs);
  return { address, hostname, token, tokenSource, addressSource, ...(caCertificate ? { caCertificate } : {}) };
}

function resolveAddressAndToken(inputs: ClientConfigInputs): Omit<ResolvedClientConfig, "caCertificate"> {
  const env = inputs.env ?? process.env;
  const config = inputs.stackConfig;
  const candidates: [string | undefined, AddressSource][] = [
    [nonEmpty(inputs.address), "explicit"],
    [hostnameAddress(inputs.hostname), "explicit"],
    [nonEmpty(config?.get("address")), "stack config tfe:address"],
    [hostnameAddress(config?.get("hostname")), "stack config tfe:hostname"],
    [nonEmpty(env.TFE_ADDRESS), "TFE_ADDRESS"],
    [hostnameAddress(nonEmpty(env.TFE_HOSTNAME)), "TFE_HOSTNAME"],
  ];
  const [chosen = defaultAddress, addressSource] = candidates.find(([value]) => value !== undefined) ?? [
    defaultAddress,
    "default",
  ];
  const address = normalizeAddress(chosen);
  const hostname = new URL(address).host;

  const explicit = nonEmpty(inputs.token);
  if (explicit) return { address, hostname, token: explicit, tokenSource: "explicit", addressSource };
  const fromConfig = nonEmpty(config?.get("token"));
  if (fromConfig) return { address, hostname, token: fromConfig, tokenSource: "stack config tfe:token", addressSource };
  const fromEnv = nonEmpty(env.TFE_TOKEN);
  if (fromEnv) return { address, hostname, token: fromEnv, tokenSource: "TFE_TOKEN", addressSource };
  // Terraform reads credentials blocks of the CLI config file and, besides them, the file `terraform login`
  // writes; a TF_CLI_CONFIG_FILE set for other settings must not hide a login.
  const credentialsFiles = [
    nonEmpty(env.TF_CLI_CONFIG_FILE),
    join(inputs.homeDirectory ?? homedir(), ".terraform.d", "credentials.tfrc.json"),
  ].filter((path) => path !== undefined);
  for (const file of credentialsFiles) {
    const fromFile = tokenFromCredentialsFile(file, hostname);
    if (fromFile) {
      return { address, hostname, token: fromFile, tokenSource: `credentials file ${file}`, addressSource };
    }
  }

  // Terraform's own files, as read here (under this process's home directory): what login writes, and the CLI
  // config file's credentials blocks.
  const [loginFile, cliConfigFile] = [credentialsFiles.at(-1), nonEmpty(env.TF_CLI_CONFIG_FILE)];
  throw new TfeConfigError(
    `no API token for ${hostname}. Set one of: ${inputs.tokenWays ?? libraryTokenWays}; or run ` +
      `"terraform login ${hostname}", which writes ${loginFile}` +
      (cliConfigFile ? `; a credentials "${hostname}" block in ${cliConfigFile} (TF_CLI_CONFIG_FILE) is read too` : ""),
  );
}

/**
 * The CA certificate setting as PEM text. Node reads NODE_EXTRA_CA_CERTS only when the process starts; this one
 * also works where the environment of that start is out of reach (stack config, a library call).
 */
function resolveCaCertificate(inputs: ClientConfigInputs): string | undefined {
  const env = inputs.env ?? process.env;
  const candidates: [source: string, value: string | undefined][] = [
    ["the caCertificate option", inputs.caCertificate],
    ["stack config tfe:caCertificate", inputs.stackConfig?.get("caCertificate")],
    ["TFE_CA_CERTIFICATE", env.TFE_CA_CERTIFICATE],
  ];
  const found = candidates.find(([, value]) => nonEmpty(value) !== undefined);
  if (!found) return undefined;
  const [source, setting] = [found[0], nonEmpty(found[1])!];
  if (setting.includes(pemCertificateHeader)) return setting;
  let text: string;
  try {
    text = readFileSync(setting, "utf8");
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? String(error);
    throw new TfeConfigError(
      `${source}: cannot read the certificate file "${setting}" (${reason}): give the path of a PEM file or the PEM text`,
    );
  }
  if (text.includes(pemCertificateHeader)) return text;
  throw new TfeConfigError(
    `${source}: "${setting}" holds no PEM certificate (${pemCertificateHeader}): give the path of a PEM file or the PEM text`,
  );
}

const pemCertificateHeader = "-----BEGIN CERTIFICATE-----";

function nonEmpty(value: string | undefined): string | undefined {
  return value && value.trim() !== "" ? value.trim() : undefined;
}

function hostnameAddress(hostname: string | undefined): string | undefined {
  const host = nonEmpty(hostname);
  if (!host) return undefined;
  return /^https?:\/\//.test(host) ? host : `https://${host}`;
}

/** Checks an address is an http(s) URL and drops trailing slashes. */
export function normalizeAddress(address: string): string {
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    throw new TfeConfigError(`address "${address}" is not a URL: use e.g. https://app.terraform.io`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new TfeConfigError(`address "${address}" must start with https:// (or http:// for a local server)`);
  }
  return url.toString().replace(/\/+$/, "");
}

/**
 * Reads `credentials."<host>".token` from a JSON credentials file, or `credentials "<host>" { token = ... }` HCL.
 * Host names compare as Terraform compares them (svchost's ForComparison): case does not count, so a file written for
 * `App.Terraform.io` serves `app.terraform.io`.
 */
function tokenFromCredentialsFile(path: string, hostname: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
  const wanted = hostname.toLowerCase();
  let entries: [string, unknown][];
  try {
    const json = JSON.parse(text) as { credentials?: Record<string, { token?: unknown }> };
    entries = Object.entries(json.credentials ?? {}).map(([host, block]) => [host, block?.token]);
  } catch {
    entries = [...text.matchAll(/credentials\s+"([^"]+)"\s*\{[^}]*?token\s*=\s*"([^"]+)"/gs)].map((match) => [
      match[1] as string,
      match[2],
    ]);
  }
  const token = entries.find(([host]) => host.toLowerCase() === wanted)?.[1];
  return typeof token === "string" ? nonEmpty(token) : undefined;
}

/** The client options a Pulumi program cannot give its resources in code: `tfe:` keys set them instead. */
export interface ClientTuning {
  /**
   * Time one attempt may take, from connecting to the last byte of its body; default 30 s. undici's timers behind
   * it fire up to about a second late, a slack that does not matter at this scale.
   */
  timeoutMs?: number;
  retry?: Partial<RetryPolicy>;
  /**
   * Pacing, shared by every client of this address and token. By default the client paces to the limit the service
   * advertises in `X-RateLimit-Limit` (95% of it) and does not hold back where none is advertised;
   * `requestsPerSecond` caps the pace further; `false` turns pacing off (a 429 is still waited out and retried).
   */
  rateLimit?: { requestsPerSecond: number } | false;
}

/**
 * Each tuning key: its name under `tfe:` in stack config, its environment variable, the whole number it starts at
 * (none: any number above 0), and the option it sets.
 */
export const clientTuningKeys: readonly {
  key: string;
  variable: string;
  wholeFrom?: number;
  apply(tuning: ClientTuning, value: number): void;
}[] = [
  { key: "timeoutMs", variable: "TFE_TIMEOUT_MS", wholeFrom: 1, apply: (tuning, value) => (tuning.timeoutMs = value) },
  {
    key: "maxRetries",
    variable: "TFE_MAX_RETRIES",
    wholeFrom: 0,
    apply: (tuning, value) => (tuning.retry = { ...tuning.retry, maxRetries: value }),
  },
  {
    key: "retryMaxElapsedMs",
    variable: "TFE_RETRY_MAX_ELAPSED_MS",
    wholeFrom: 0,
    apply: (tuning, value) => (tuning.retry = { ...tuning.retry, maxElapsedMs: value }),
  },
  {
    key: "requestsPerSecond",
    variable: "TFE_REQUESTS_PER_SECOND",
    apply: (tuning, value) => (tuning.rateLimit = { requestsPerSecond: value }),
  },
];

/**
 * Reads the tuning keys, stack config (`tfe:timeoutMs`...) before the environment (`TFE_TIMEOUT_MS`...); a key set
 * in neither keeps the client's default. A value that is not such a number fails, naming the key.
 */
export function clientTuning(
  config: StackConfigSource | undefined,
  env: NodeJS.ProcessEnv = process.env,
): ClientTuning {
  const tuning: ClientTuning = {};
  for (const { key, variable, wholeFrom, apply } of clientTuningKeys) {
    const fromConfig = nonEmpty(config?.get(key));
    const text = fromConfig ?? nonEmpty(env[variable]);
    if (text === undefined) continue;
    const value = Number(text);
    const valid =
      wholeFrom === undefined ? value > 0 && Number.isFinite(value) : /^\d+$/.test(text) && value >= wholeFrom;
    if (!valid) {
      const source = fromConfig !== undefined ? `stack config tfe:${key}` : variable;
      const wanted = wholeFrom === undefined ? "a number above 0" : `a whole number from ${wholeFrom}`;
      throw new TfeConfigError(`${source} must be ${wanted}, not "${text}"`);
    }
    apply(tuning, value);
  }
  return tuning;
}
