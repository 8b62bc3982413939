import { X509Certificate } from "node:crypto";
import { libraryVersion } from "../process/package-version";
import {
  addressDescriptions,
  type ClientConfigInputs,
  type ClientTuning,
  clientTuning,
  defaultAddress,
  normalizeAddress,
  resolveClientConfig,
} from "./config";
import { TfeConfigError } from "./errors";
import { ModuleVersionsApi } from "./module-versions";
import { PoliciesApi } from "./policies";
import { PolicySetsApi } from "./policy-sets";
import { sharedRateLimiter } from "./rate-limiter";
import { RegistryApi } from "./registry";
import { RunsApi } from "./runs";
import { defaultRetryPolicy, Transport } from "./transport";
import { ScopeTargetsApi } from "./workspaces";

export { libraryVersion };

export interface TfeClientOptions extends ClientTuning {
  /** Base URL of the service; default `https://app.terraform.io`. */
  address?: string;
  token: string;
  userAgent?: string;
  /**
   * Cancels the client's work when it aborts: no request is sent after it, reads in flight and waits between retries
   * stop at once, and a write in flight is let finish (cut off, the service may hold what the caller never learns).
   * Each stopped request fails with TfeCancelledError.
   */
  signal?: AbortSignal | undefined;
  /**
   * CA certificates (PEM text) to trust besides Node's own, e.g. a private CA of Terraform Enterprise or the local
   * server's `--tls` certificate. `fromConfig` also takes a file path, `tfe:caCertificate` and `TFE_CA_CERTIFICATE`.
   */
  caCertificate?: string | undefined;
}

/** Typed client for the policy, module-version deprecation and registry-read endpoints. */
export class TfeClient {
  readonly policies: PoliciesApi;
  readonly policySets: PolicySetsApi;
  readonly moduleVersions: ModuleVersionsApi;
  readonly registry: RegistryApi;
  /** Workspaces and projects, read-only: what a policy set's scope names. */
  readonly workspaces: ScopeTargetsApi;
  readonly projects: ScopeTargetsApi;
  /** Workspaces' runs and the policy results they recorded, read-only. */
  readonly runs: RunsApi;
  readonly address: string;
  readonly #transport: Transport;

  /** `addressSource`: where `fromConfig` found the address, named when the address cannot be reached. */
  constructor(options: TfeClientOptions, resolved: { addressSource?: string } = {}) {
    const address = normalizeAddress(options.address ?? defaultAddress);
    checkOptions(options);
    this.#transport = new Transport({
      address,
      token: options.token,
      userAgent: options.userAgent ?? `pulumi-tfe-governance/${libraryVersion}`,
      timeoutMs: options.timeoutMs ?? 30_000,
      retry: { ...defaultRetryPolicy, ...options.retry },
      rateLimiter:
        options.rateLimit === false
          ? null
          : sharedRateLimiter(address, options.token, options.rateLimit?.requestsPerSecond),
      caCertificate: options.caCertificate,
      addressSource: resolved.addressSource,
      signal: options.signal,
    });
    this.address = this.#transport.address;
    this.policies = new PoliciesApi(this.#transport);
    this.policySets = new PolicySetsApi(this.#transport);
    this.moduleVersions = new ModuleVersionsApi(this.#transport);
    this.registry = new RegistryApi(this.#transport);
    this.workspaces = new ScopeTargetsApi(this.#transport, "workspaces");
    this.projects = new ScopeTargetsApi(this.#transport, "projects");
    this.runs = new RunsApi(this.#transport);
  }

  /** Requests this client has sent, every attempt of every call counted. */
  get requestsSent(): number {
    return this.#transport.requestsSent;
  }

  /**
   * A client configured by {@link resolveClientConfig}: explicit values, stack config, environment, credentials file;
   * timeout, retries and pace by {@link clientTuning} where the options leave them out.
   */
  static fromConfig(inputs: ClientConfigInputs & Omit<TfeClientOptions, "token" | "address"> = {}): TfeClient {
    const { address, token, caCertificate, addressSource } = resolveClientConfig(inputs);
    const { hostname: _hostname, stackConfig: _stackConfig, env: _env, homeDirectory: _home, ...options } = inputs;
    return new TfeClient(
      { ...clientTuning(inputs.stackConfig, inputs.env), ...options, address, token, caCertificate },
      addressSource === "explicit" ? {} : { addressSource: addressDescriptions[addressSource] },
    );
  }

  /** Closes the keep-alive connections. */
  close(): Promise<void> {
    return this.#transport.close();
  }

  toJSON(): { address: string } {
    return { address: this.address };
  }
}

// Caught here rather than at the first request, where a bad option would look like a service or network fault.
function checkOptions(options: TfeClientOptions): void {
  const rateLimit = options.rateLimit;
  if (typeof options.token !== "string" || options.token.trim() === "") {
    throw new TfeConfigError(
      "token is required: pass the API token, or use TfeClient.fromConfig() to read tfe:token, TFE_TOKEN or the Terraform credentials file",
    );
  }
  if (options.caCertificate !== undefined) {
    try {
      new X509Certificate(options.caCertificate);
    } catch (error) {
      throw new TfeConfigError(
        `caCertificate must be PEM text of a certificate (TfeClient.fromConfig also takes a file path): ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }
  if (options.timeoutMs !== undefined && !(options.timeoutMs > 0)) {
    throw new TfeConfigError(`timeoutMs must be a number of milliseconds above 0, not ${options.timeoutMs}`);
  }
  if (rateLimit && !(rateLimit.requestsPerSecond > 0 && Number.isFinite(rateLimit.requestsPerSecond))) {
    throw new TfeConfigError(
      `rateLimit.requestsPerSecond must be a number above 0, not ${rateLimit.requestsPerSecond}: or pass rateLimit: false to turn the limiter off`,
    );
  }
}
