import type { FastifyRequest } from "fastify";
import { authorize, type Permission } from "./auth";
import type { UrlSigner } from "./download-origin";
import { notFound } from "./errors";
import type { FaultInjector } from "./faults";
import type { RateLimit } from "./rate-limit";
import type { UploadMetrics } from "./request-bodies";
import type { RequestLog } from "./request-log";
import type { ServedRoute } from "./served-routes";
import type { Storage } from "./storage";
import type { TlsCredentials } from "./tls";

/** What every route shares; built once by `startServer`, and held here so routes and app.ts do not import each other. */
export interface AppContext {
  storage: Storage;
  log: RequestLog;
  faults: FaultInjector;
  rateLimit: RateLimit | undefined;
  signer: UrlSigner;
  /** Where signed download URLs point; known only once the download origin listens. */
  downloadOrigin: () => string;
  uploadMetrics: UploadMetrics;
  /** What all uploads in progress may hold in memory together. */
  uploadBufferBudgetBytes: number;
  /** How long a request body may take to arrive in full: past it the answer is 408 and the connection closes. */
  bodyTimeoutMs: number;
  version: string;
  /** Serve https with these; http without. */
  tls?: TlsCredentials | undefined;
  /** Filled with every route the API serves as it is registered: the access table test walks them all. */
  servedRoutes?: ServedRoute[];
}

/** The policy named in the path, or a 404 when it is missing or the token may not `permission` it. */
export function loadPolicy(
  storage: Storage,
  request: FastifyRequest<{ Params: { policyId: string } }>,
  permission: Permission,
) {
  const policy = storage.policy(request.params.policyId);
  if (!policy) throw notFound();
  authorize(request, policy.organization, permission);
  return policy;
}
