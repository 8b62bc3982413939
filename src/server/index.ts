import { rm } from "node:fs/promises";
import type { ServedRoute } from "./served-routes";
import "../process/node-version";
import type { AddressInfo } from "node:net";
import { libraryVersion } from "../process/package-version";
import { buildApp, defaultBodyTimeoutMs } from "./app";
import { buildDownloadOrigin, defaultDownloadHost, UrlSigner } from "./download-origin";
import { FaultInjector, type FaultPlan } from "./faults";
import { resumeIngress } from "./policy-set-ingress";
import { RateLimit, type RateLimitCounting } from "./rate-limit";
import { defaultUploadBufferBudgetBytes, type UploadMetrics } from "./request-bodies";
import { RequestLog } from "./request-log";
import { applySeed, loadSeed, type Seed } from "./seed";
import { makeSeedRepositories } from "./seed-repositories";
import { type OrganizationRecord, Storage, type TokenRecord } from "./storage";
import { localCertificate, type TlsCredentials } from "./tls";

export type { FaultPlan, FaultRule } from "./faults";
export type { RateLimitCounting } from "./rate-limit";
export type { RequestLog, RequestLogEntry } from "./request-log";
export type { Seed } from "./seed";
export type { OrganizationRecord, TokenRecord } from "./storage";
export { selfSignedCertificate, type TlsCredentials } from "./tls";

export interface ServerOptions {
  /** Port of the API; 0 (the default) picks a free one. */
  port?: number;
  /** Interface to listen on; default 127.0.0.1. */
  host?: string;
  /** Port of the origin serving signed download URLs; 0 (the default) picks a free one. */
  downloadPort?: number;
  /**
   * Host name of the download URLs, another name for the interface both origins listen on; default `localhost`
   * when that is a loopback or wildcard address, else the API's own (see `defaultDownloadHost`).
   */
  downloadHost?: string;
  /** SQLite file; default `:memory:`. A file keeps everything across restarts. */
  data?: string;
  /** Seed as an object or a JSON file path; without one an empty store gets one organization and one token. */
  seed?: Seed | string;
  /** Enforce this many requests per second per token (429 beyond); off by default. */
  rateLimit?: number;
  /**
   * How `rateLimit` is counted: `"token-bucket"` (the default; a burst of the limit, refilled at the limit per second,
   * so up to twice the limit gets through in one second) or `"every-second"` (at most the limit in any one-second
   * window, sliding: as a service counting requests per second sees it, wherever its second starts).
   */
  rateLimitCounting?: RateLimitCounting;
  /** Fault rules, or `{ seed, rules }`; see `FaultRule`. Changeable later with `setFaults`. */
  faults?: FaultPlan;
  /** How long a signed download URL works; default 60 000 ms. */
  downloadUrlTtlMs?: number;
  /**
   * Serve both origins over https: with this certificate and key, or `"self-signed"` for one made at start for
   * localhost, 127.0.0.1, ::1, `host` and `downloadHost` (then in `certificate`, for clients to trust).
   * Default: http.
   */
  tls?: TlsCredentials | "self-signed";
  /** How many of the newest requests `requestLog` keeps; default 10 000. */
  requestLogSize?: number;
  /** How long a request body may take to arrive in full; past it 408 and the connection closes. Default 90 000 ms. */
  bodyTimeoutMs?: number;
  /** What all uploads in progress may hold in memory together; the upload past it answers 503. Default 64 MB. */
  uploadBufferBudgetBytes?: number;
}

export interface RunningServer {
  /** Base URL of the API, e.g. `http://127.0.0.1:41234`, without a trailing slash. */
  url: string;
  /** Origin of the signed download URLs. */
  downloadOrigin: string;
  /** The certificate (PEM) served over https; `undefined` over http. */
  certificate: string | undefined;
  /** Every token the server accepts, with its organizations and permissions. */
  tokens: TokenRecord[];
  /** The first accepted token: the one to use when there is only one. */
  token: string;
  organizations: OrganizationRecord[];
  /**
   * What each organization held at start, for the ids a program names (`workspaceIds`, a set to join): its policy
   * sets, workspaces and projects, by id and name (at most 50 of each).
   */
  inventory: OrganizationInventory[];
  /**
   * The repositories sets may read from version control (identifier and the local git repository), and the GitHub App
   * installations (`github-app-installation-id`), which belong to no organization.
   */
  vcsRepositories: { identifier: string; path: string }[];
  githubAppInstallations: string[];
  /** The newest requests answered (method, path, route, status, duration); `requestLog.clear()` empties it. */
  requestLog: RequestLog;
  uploadMetrics: UploadMetrics;
  /** Every route the two origins serve (method and pattern), for tests that walk them all. */
  routes: ServedRoute[];
  /**
   * Under `rateLimit`, the most requests of one token the server took within any one second (sliding, by arrival)
   * since start or the last `resetBusiestSecond()`; 0 without a limit.
   */
  busiestSecond(): number;
  resetBusiestSecond(): void;
  /** Replaces the fault rules (and restarts their random sequence) from the next request on. */
  setFaults(plan: FaultPlan): void;
  /** Stops both origins and closes the database. */
  close(): Promise<void>;
}

export interface OrganizationInventory {
  organization: string;
  policySets: { id: string; name: string; kind: string }[];
  workspaces: { id: string; name: string }[];
  projects: { id: string; name: string }[];
  /** The organization's VCS connections: what a set's `vcs-repo` names as `oauth-token-id`. */
  oauthTokens: { id: string; serviceProvider: string }[];
}

const inventoryLimit = 50;

function inventoryOf(storage: Storage): OrganizationInventory[] {
  return storage.organizations().map(({ name: organization }) => {
    const page = { organization, limit: inventoryLimit, offset: 0 };
    const named = ({ id, name }: { id: string; name: string }) => ({ id, name });
    return {
      organization,
      policySets: storage.listPolicySets(page).items.map(({ id, name, kind }) => ({ id, name, kind })),
      workspaces: storage.listScopeTargets("workspaces", page).items.map(named),
      projects: storage.listScopeTargets("projects", page).items.map(named),
      oauthTokens: storage
        .vcsCredentials()
        .filter((credential) => credential.organization === organization)
        .map(({ id, serviceProvider }) => ({ id, serviceProvider })),
    };
  });
}

/** Starts the API and its download origin; resolves once both listen. */
export async function startServer(options: ServerOptions = {}): Promise<RunningServer> {
  const host = options.host ?? "127.0.0.1";
  const seed = options.seed === undefined ? undefined : loadSeed(options.seed);
  const faults = new FaultInjector(options.faults ?? []);
  const storage = new Storage(options.data ?? ":memory:");
  // Repositories the seed had made for data in memory go with it.
  let repositoriesInMemory: string | undefined;
  const removeRepositories = () =>
    repositoriesInMemory ? rm(repositoriesInMemory, { recursive: true, force: true }) : Promise.resolve();
  try {
    if (seed) repositoriesInMemory = await makeSeedRepositories(seed.vcsRepositories, options.data ?? ":memory:");
    applySeed(storage, seed);
    await resumeIngress(storage);
  } catch (error) {
    storage.close();
    await removeRepositories();
    throw error;
  }
  const tls =
    options.tls === "self-signed"
      ? localCertificate([host, ...(options.downloadHost ? [options.downloadHost] : [])])
      : options.tls;
  const log = new RequestLog(options.requestLogSize);
  const signer = new UrlSigner(options.downloadUrlTtlMs ?? 60_000);
  const uploadMetrics: UploadMetrics = { peakBufferedBytes: 0, bufferedBytes: 0, peakTotalBufferedBytes: 0 };
  // One budget for the code uploads of the API and the archive uploads of the download origin.
  const uploadBufferBudgetBytes = options.uploadBufferBudgetBytes ?? defaultUploadBufferBudgetBytes;
  const bodyTimeoutMs = options.bodyTimeoutMs ?? defaultBodyTimeoutMs;
  let downloadOrigin = "";
  const servedRoutes: ServedRoute[] = [];
  const rateLimit = options.rateLimit ? new RateLimit(options.rateLimit, options.rateLimitCounting) : undefined;
  const api = buildApp({
    servedRoutes,
    storage,
    log,
    faults,
    rateLimit,
    signer,
    downloadOrigin: () => downloadOrigin,
    uploadMetrics,
    uploadBufferBudgetBytes,
    bodyTimeoutMs,
    version: libraryVersion,
    tls,
  });
  const downloads = buildDownloadOrigin({
    servedRoutes,
    storage,
    signer,
    log,
    faults,
    uploadMetrics,
    uploadBufferBudgetBytes,
    bodyTimeoutMs,
    tls,
  });
  const originOf = (hostname: string, port: number) =>
    `${tls ? "https" : "http"}://${hostname.includes(":") ? `[${hostname}]` : hostname}:${port}`;
  try {
    await downloads.listen({ port: options.downloadPort ?? 0, host });
    const { address, port } = downloads.server.address() as AddressInfo;
    downloadOrigin = originOf(options.downloadHost ?? defaultDownloadHost(address), port);
    await api.listen({ port: options.port ?? 0, host });
  } catch (error) {
    await Promise.allSettled([api.close(), downloads.close()]);
    storage.close();
    await removeRepositories();
    throw error;
  }
  const tokens = storage.tokens();
  const apiAddress = api.server.address() as AddressInfo;
  return {
    url: originOf(apiAddress.address, apiAddress.port),
    downloadOrigin,
    certificate: tls?.cert,
    tokens,
    token: tokens[0]?.token ?? "",
    organizations: storage.organizations(),
    inventory: inventoryOf(storage),
    vcsRepositories: storage.vcsRepositories().map(({ identifier, path }) => ({ identifier, path })),
    githubAppInstallations: storage
      .vcsCredentials()
      .filter((credential) => credential.organization === null)
      .map(({ id }) => id),
    requestLog: log,
    uploadMetrics,
    routes: servedRoutes,
    busiestSecond: () => rateLimit?.busiestSecond() ?? 0,
    resetBusiestSecond: () => rateLimit?.resetBusiestSecond(),
    setFaults: (plan) => faults.replace(plan),
    close: async () => {
      await Promise.all([api.close(), downloads.close()]);
      // Versions still being read (an upload, a commit) are finished first: the database closes after them.
      await storage.settle();
      storage.close();
      await removeRepositories();
    },
  };
}
