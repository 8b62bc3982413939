import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import type { TfeClientOptions } from "./client";
import { TfeConfigError } from "./errors";

export const defaultAddress = "https://app.terraform.io";

/** The subset of a Pulumi `Config` the client reads (`get` / `getSecret` of the `tfe` namespace). */
export interface StackConfigSource {
  get(key: string): string | undefined;
}

export interface ClientConfigInputs {
  address?: string | undefined;
  hostname?: string | undefined;
  token?: string | undefined;
  /** Pulumi stack config of the `tfe` namespace: `address`, `hostname`, `token`. */
  stackConfig?: StackConfigSource | undefined;
  env?: NodeJS.ProcessEnv;
  homeDirectory?: string;
}

export interface ResolvedClientConfig {
  address: string;
  hostname: string;
  token: string;
  /** Where the token came from, for messages (never the token itself). */
  tokenSource: "explicit" | "stack config tfe:token" | "TFE_TOKEN" | `credentials file ${string}`;
}

/**
 * Resolves address and token from, in order: explicit values, Pulumi stack config (`tfe:address` /
 * `tfe:hostname`, `tfe:token`), the environment (`TFE_ADDRESS`, `TFE_HOSTNAME`, `TFE_TOKEN`), and the Terraform
 * CLI credentials file (`TF_CLI_CONFIG_FILE` or `~/.terraform.d/credentials.tfrc.json`) keyed by hostname.
 */
export function resolveClientConfig(inputs: ClientConfigInputs = {}): ResolvedClientConfig {
  const env = inputs.env ?? process.env;
  const config = inputs.stackConfig;
  const address = normalizeAddress(
    nonEmpty(inputs.address) ??
      hostnameAddress(inputs.hostname) ??
      nonEmpty(config?.get("address")) ??
      hostnameAddress(config?.get("hostname")) ??
      nonEmpty(env.TFE_ADDRESS) ??
      hostnameAddress(nonEmpty(env.TFE_HOSTNAME)) ??
      defaultAddress,
  );
  const hostname = new URL(address).host;

  const explicit = nonEmpty(inputs.token);
  if (explicit) return { address, hostname, token: explicit, tokenSource: "explicit" };
  const fromConfig = nonEmpty(config?.get("token"));
  if (fromConfig) return { address, hostname, token: fromConfig, tokenSource: "stack config tfe:token" };
  const fromEnv = nonEmpty(env.TFE_TOKEN);
  if (fromEnv) return { address, hostname, token: fromEnv, tokenSource: "TFE_TOKEN" };
  // Terraform reads credentials blocks of the CLI config file and, besides them, the file `terraform login`
  // writes; a TF_CLI_CONFIG_FILE set for other settings must not hide a login.
  const credentialsFiles = [
    nonEmpty(env.TF_CLI_CONFIG_FILE),
    join(inputs.homeDirectory ?? homedir(), ".terraform.d", "credentials.tfrc.json"),
  ].filter((path) => path !== undefined);
  for (const file of credentialsFiles) {
    const fromFile = tokenFromCredentialsFile(file, hostname);
    if (fromFile) return { address, hostname, token: fromFile, tokenSource: `credentials file ${file}` };
  }

  throw new TfeConfigError(
    `no API token for ${hostname}. Set one of: the token option; Pulumi config "pulumi config set --secret tfe:token ..."; ` +
      `the TFE_TOKEN environment variable; or run "terraform login ${hostname}" so that ` +
      `${credentialsFiles.join(" or ")} holds it`,
  );
}

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

/** Reads `credentials."<host>".token` from a JSON credentials file, or `credentials "<host>" { token = ... }` HCL. */
function tokenFromCredentialsFile(path: string, hostname: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
  try {
    const json = JSON.parse(text) as { credentials?: Record<string, { token?: unknown }> };
    const token = json.credentials?.[hostname]?.token;
    return typeof token === "string" ? nonEmpty(token) : undefined;
  } catch {
    const escapedHost = hostname.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    const block = new RegExp(`credentials\\s+"${escapedHost}"\\s*\\{[^}]*?token\\s*=\\s*"([^"]+)"`, "s").exec(text);
    return nonEmpty(block?.[1]);
  }
}

/** The client options a Pulumi program cannot give its resources in code. */
export type ClientTuning = Pick<TfeClientOptions, "timeoutMs" | "retry" | "rateLimit">;

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
