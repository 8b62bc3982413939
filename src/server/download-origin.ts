import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { isIPv4 } from "node:net";
import Fastify, { type FastifyInstance } from "fastify";
import { ApiError, frameworkErrors, installErrorHandling, sendError } from "./errors";
import type { RequestLog } from "./request-log";
import type { Storage } from "./storage";
import type { TlsCredentials } from "./tls";

/**
 * Signs temporary code URLs with a key made at start, so only this server run can mint them, and a URL stops
 * working after `ttlMs` or once any part of it is changed.
 */
export class UrlSigner {
  private readonly key = randomBytes(32);

  constructor(private readonly ttlMs: number) {}

  sign(origin: string, policyId: string): string {
    const expires = Date.now() + this.ttlMs;
    const url = new URL(`/policy-code/${encodeURIComponent(policyId)}`, origin);
    url.searchParams.set("expires", String(expires));
    url.searchParams.set("signature", this.signature(policyId, expires));
    return url.toString();
  }

  /** Why the URL must be refused, or `undefined` when it is genuine and fresh. */
  problem(policyId: string, expiresParameter: string | undefined, signature: string | undefined): string | undefined {
    const expires = Number(expiresParameter);
    if (!Number.isSafeInteger(expires) || !signature) return "The URL lacks its expiry or signature.";
    const expected = Buffer.from(this.signature(policyId, expires));
    const given = Buffer.from(signature);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return "The signature is not valid.";
    if (Date.now() > expires) return "The URL has expired: request the download again.";
    return undefined;
  }

  private signature(policyId: string, expires: number): string {
    return createHmac("sha256", this.key).update(`${policyId}\n${expires}`).digest("base64url");
  }
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
export function buildDownloadOrigin(
  storage: Storage,
  signer: UrlSigner,
  log: RequestLog,
  tls?: TlsCredentials,
): FastifyInstance {
  const app = Fastify({
    ...(tls ? { https: tls } : {}),
    logger: false,
    forceCloseConnections: true,
    frameworkErrors: frameworkErrors("no body"),
  });
  installErrorHandling(app, "no body");
  app.setNotFoundHandler((request, reply) =>
    sendError(request, reply, ApiError.single(404, "not found", "Only signed /policy-code/ URLs are served here.")),
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
      const problem = signer.problem(policyId, request.query.expires, request.query.signature);
      if (problem) throw ApiError.single(403, "forbidden", problem);
      const code = storage.code(policyId);
      if (!code) throw ApiError.single(404, "not found", "The policy or its code no longer exists.");
      return reply.type("application/octet-stream").send(Buffer.from(code.buffer, code.byteOffset, code.byteLength));
    },
  );
  return app;
}
