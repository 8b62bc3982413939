import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type ClientConfigInputs, resolveClientConfig } from "./config";
import { ModuleVersionsApi } from "./module-versions";
import { PoliciesApi } from "./policies";
import { sharedRateLimiter } from "./rate-limiter";
import { RegistryApi } from "./registry";
import { defaultRetryPolicy, type RetryPolicy, Transport } from "./transport";

export const libraryVersion: string = JSON.parse(
  readFileSync(join(__dirname, "..", "..", "package.json"), "utf8"),
).version;

export interface TfeClientOptions {
  /** Base URL of the service; default `https://app.terraform.io`. */
  address?: string;
  token: string;
  userAgent?: string;
  /** Time allowed for one attempt of one request; default 30 s. */
  timeoutMs?: number;
  retry?: Partial<RetryPolicy>;
  /** Client-side limit shared by every client of this address and token; default 30 requests per second. */
  rateLimit?: { requestsPerSecond: number } | false;
}

/** The service's default limit per token (service-facts). */
export const defaultRequestsPerSecond = 30;

/** Typed client for the policy, module-version deprecation and registry-read endpoints. */
export class TfeClient {
  readonly policies: PoliciesApi;
  readonly moduleVersions: ModuleVersionsApi;
  readonly registry: RegistryApi;
  readonly address: string;
  readonly #transport: Transport;

  constructor(options: TfeClientOptions) {
    const address = (options.address ?? "https://app.terraform.io").replace(/\/+$/, "");
    const rateLimit = options.rateLimit ?? { requestsPerSecond: defaultRequestsPerSecond };
    this.#transport = new Transport({
      address,
      token: options.token,
      userAgent: options.userAgent ?? `pulumi-tfe-governance/${libraryVersion}`,
      timeoutMs: options.timeoutMs ?? 30_000,
      retry: { ...defaultRetryPolicy, ...options.retry },
      rateLimiter: rateLimit ? sharedRateLimiter(address, options.token, rateLimit.requestsPerSecond) : null,
    });
    this.address = this.#transport.address;
    this.policies = new PoliciesApi(this.#transport);
    this.moduleVersions = new ModuleVersionsApi(this.#transport);
    this.registry = new RegistryApi(this.#transport);
  }

  /** A client configured by {@link resolveClientConfig}: explicit values, stack config, environment, credentials file. */
  static fromConfig(inputs: ClientConfigInputs & Omit<TfeClientOptions, "token" | "address"> = {}): TfeClient {
    const { address, token } = resolveClientConfig(inputs);
    const { hostname: _hostname, stackConfig: _stackConfig, env: _env, homeDirectory: _home, ...options } = inputs;
    return new TfeClient({ ...options, address, token });
  }

  /** Closes the keep-alive connections. */
  close(): Promise<void> {
    return this.#transport.close();
  }

  toJSON(): { address: string } {
    return { address: this.address };
  }
}
