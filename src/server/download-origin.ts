import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { isIPv4 } from "node:net";
import Fastify, { type FastifyInstance } from "fastify";
import { maxPolicySetArchiveBytes } from "../contract/policy-sets";
import { ArchiveError, unpackArchive } from "../policy-code/archive";
import { ApiError, frameworkErrors, installErrorHandling, sendError } from "./errors";
import { installFaultHooks } from "./fault-hooks";
import type { FaultInjector } from "./faults";
import { ingestVersion } from "./policy-set-ingress";
import { acceptBudgetedBodies, installBodyTimeout, type UploadMetrics } from "./request-bodies";
import type { RequestLog } from "./request-log";
import type { ServedRoute } from "./served-routes";
import type { Storage } from "./storage";
import type { TlsCredentials } from "./tls";

/**
 * Signs temporary URLs (code downloads, policy set version uploads) with a key made at start, so only this server
 * run can mint them, and a URL stops working after `ttlMs` or once any part of it is changed.
 */
export class UrlSigner {
  private readonly key = randomBytes(32);

  constructor(private readonly ttlMs: number) {}

  /** A signed URL for `path` (already encoded) on `origin`. */
  sign(origin: string, path: string, ttlMs = this.ttlMs): string {
    const expires = Date.now() + ttlMs;
    const url = new URL(path, origin);
    url.searchParams.set("expires", String(expires));
    url.searchParams.set("signature", this.signature(url.pathname, expires));
    return url.toString();
  }

  /** Why the URL of `path` must be refused, or `undefined` when it is genuine and fresh. */
  problem(path: string, expiresParameter: string | undefined, signature: string | undefined): string | undefined {
    const expires = Number(expiresParameter);
    if (!Number.isSafeInteger(expires) || !signature) return "The URL lacks its expiry or signature.";
    const expected = Buffer.from(this.signature(path, expires));
    const given = Buffer.from(signature);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return "The signature is not valid.";
    if (Date.now() > expires) return "The URL has expired: request the download again.";
    return undefined;
  }

  private signature(path: string, expires: number): string {
    return createHmac("sha256", this.key).update(`${path}\n${expires}`).digest("base64url");
  }
}

/** Where the download origin serves a policy's code. */
export function codePath(policyId: string): string {
  return `/policy-code/${encodeURIComponent(policyId)}`;
}

/** Where the download origin takes a policy set version's archive. */
export function uploadPath(versionId: string): string {
  return `/policy-set-versions/${encodeURIComponent(versionId)}/upload`;
}

/**
 * The host name of download URLs by default. The service's temporary URLs are on another host, and Go's HTTP
 * client (go-tfe, the Terraform tfe provider) drops Authorization on a redirect only when the host name changes,
 * whatever the port: so a loopback or wildcard listen address gets `localhost`, another name for the same
 * interface. Any other address has no name known here (set one with `downloadHost`).
 */
export function defaultDownloadHost(listenAddress: string): string {
  const loopback = (isIPv4(listenAddress) && listenAddress.startsWith("127.")) || listenAddress === "::1";
  const wildcard = listenAddress === "0.0.0.0" || listenAddress === "::";
  return loopback || wildcard ? "localhost" : listenAddress;
}

/**
 * The second origin, standing in for the service's object storage: it answers signed URLs with the stored bytes
 * and takes no Authorization header, so a client must not need to send one there.
 */
export function buildDownloadOrigin(origin: {
  storage: Storage;
  signer: UrlSigner;
  log: RequestLog;
  faults: FaultInjector;
  uploadMetrics: UploadMetrics;
  uploadBufferBudgetBytes: number;
  bodyTimeoutMs: number;
  tls?: TlsCredentials | undefined;
  servedRoutes?: ServedRoute[];
}): FastifyInstance {
  const { storage, signer, log, tls } = origin;
  // Routes of this origin take no token: the signed URL is the credential.
  const app = Fastify({
    ...(tls ? { https: tls } : {}),
    logger: false,
    forceCloseConnections: true,
    frameworkErrors: frameworkErrors("no body"),
  });
  installErrorHandling(app, "no body");
  app.addHook("onRoute", (route) => {
    for (const method of Array.isArray(route.method) ? route.method : [route.method]) {
      if (method !== "HEAD") origin.servedRoutes?.push({ origin: "downloads", method, url: route.url });
    }
  });
  app.setNotFoundHandler((request, reply) =>
    sendError(
      request,
      reply,
      ApiError.single(404, "not found", "Only signed /policy-code/ and /policy-set-versions/ URLs are served here."),
    ),
  );
  app.addHook("onRequest", async (request, reply) => {
    const started = performance.now();
    reply.raw.on("close", () =>
      log.add({
        origin: "download",
        method: request.method,
        path: request.url.split("?")[0] ?? request.url,
        route: request.routeOptions.url,
        status: reply.raw.writableFinished ? reply.statusCode : 0,
        durationMs: performance.now() - started,
        at: new Date().toISOString(),
      }),
    );
  });
  app.get<{ Params: { policyId: string }; Querystring: { expires?: string; signature?: string } }>(
    "/policy-code/:policyId",
    async (request, reply) => {
      const { policyId } = request.params;
      const problem = signer.problem(codePath(policyId), request.query.expires, request.query.signature);
      if (problem) throw ApiError.single(403, "forbidden", problem);
      const code = storage.code(policyId);
      if (!code) throw ApiError.single(404, "not found", "The policy or its code no longer exists.");
      return reply.type("application/octet-stream").send(Buffer.from(code.buffer, code.byteOffset, code.byteLength));
    },
  );
  installFaultHooks(app, origin.faults);
  installBodyTimeout(app, origin.bodyTimeoutMs);
  registerVersionUploadRoute(app, origin);
  return app;
}

/**
 * `PUT` of a policy set version's archive to its signed link, as go-tfe's `PolicySetVersions.Upload` and the
 * Terraform provider send it: raw gzip'd tar, no Authorization. The archive is unpacked here, before it is stored:
 * too large answers 413 and the version keeps waiting; hostile entries (outside the folder, links out, devices)
 * answer 422 and the version is errored with the same reason. A stored archive is read as a folder right after
 * the answer, as the service does: the version is `ingressing` until it is `ready` or `errored`.
 */
function registerVersionUploadRoute(
  app: FastifyInstance,
  { storage, signer, faults, uploadMetrics, uploadBufferBudgetBytes }: Parameters<typeof buildDownloadOrigin>[0],
): void {
  acceptBudgetedBodies(app, {
    limitBytes: maxPolicySetArchiveBytes,
    tooLarge: () =>
      ApiError.single(
        413,
        "payload too large",
        `A policy set version is limited to ${maxPolicySetArchiveBytes} bytes gzip'd; nothing was saved.`,
      ),
    metrics: uploadMetrics,
    budgetBytes: uploadBufferBudgetBytes,
  });
  app.put<{ Params: { versionId: string }; Querystring: { expires?: string; signature?: string } }>(
    "/policy-set-versions/:versionId/upload",
    {
      // Checked before the body is read: a forged link or a spent version costs no upload.
      onRequest: async (request) => {
        const { versionId } = request.params;
        const problem = signer.problem(uploadPath(versionId), request.query.expires, request.query.signature);
        if (problem) throw ApiError.single(403, "forbidden", problem);
        const version = storage.version(versionId);
        if (!version) throw ApiError.single(404, "not found", "The policy set version no longer exists.");
        if (version.status !== "pending") {
          throw ApiError.single(
            409,
            "conflict",
            `The version is ${version.status}: create a new version to upload again.`,
          );
        }
      },
    },
    async (request, reply) => {
      const { versionId } = request.params;
      const archive = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      try {
        await unpackArchive(archive);
      } catch (error) {
        if (!(error instanceof ArchiveError)) throw error;
        // Only a version still waiting for its archive errors: one that took another upload meanwhile keeps it.
        if (
          error.status === 422 &&
          !storage.finishVersion(versionId, { status: "errored", errorMessage: error.message })
        ) {
          throw ApiError.single(409, "conflict", "The version took another upload meanwhile.");
        }
        throw ApiError.single(
          error.status,
          error.status === 413 ? "payload too large" : "invalid archive",
          error.message,
        );
      }
      if (!storage.storeArchive(versionId, archive)) {
        throw ApiError.single(409, "conflict", "The version took another upload meanwhile.");
      }
      storage.inBackground(() => ingestVersion(storage, versionId, faults));
      return reply.code(200).send();
    },
  );
}
