import type { IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { ApiError, errorDocument, sendError } from "./errors";
import type { Fault, FaultInjector } from "./faults";

/** Requests fault mode reset: their closed connection is the server's doing, not a client abort. */
const injectedResets = new WeakSet<IncomingMessage>();
/** Requests whose route handler ran: only their answers can carry a fault "after the handler". */
const reachedHandler = new WeakSet<IncomingMessage>();

export function wasResetByFault(request: IncomingMessage): boolean {
  return injectedResets.has(request);
}

/**
 * Resets the connection: the client reads ECONNRESET, as from a load balancer that drops it. A TLS socket has no
 * TCP handle of its own to reset (resetAndDestroy throws): the TCP connection it wraps has.
 */
function resetConnection(request: IncomingMessage): void {
  const socket = request.socket as Socket & { _parent?: Socket | null };
  const tcp = socket._parent ?? socket;
  tcp.resetAndDestroy();
  if (tcp !== socket) socket.destroy();
}

async function applyFault(fault: Fault, request: FastifyRequest, reply: FastifyReply): Promise<boolean> {
  if (fault.latencyMs > 0) await sleep(fault.latencyMs);
  if (fault.reset) {
    injectedResets.add(request.raw);
    resetConnection(request.raw);
    // A closed socket does not end the reply (fastify goes on while `reply.sent` is false): without this a route
    // with no body to wait for, a DELETE, would still run, and the lost request would be a lost answer.
    reply.hijack();
    return true;
  }
  if (fault.status !== undefined) {
    sendError(request, reply, ApiError.single(fault.status, "injected fault", "Fault mode answered this request."));
    return true;
  }
  return false;
}

/**
 * Fault mode on one origin (the API, or the origin serving downloads and version uploads): a fault before the
 * handler loses the request; one after it loses the answer to work that was done. Installed after the origin's own
 * `onRequest` hooks, so a request refused there (no token, rate limited) draws no fault.
 */
export function installFaultHooks(app: FastifyInstance, faults: FaultInjector): void {
  app.addHook("onRequest", async (request, reply) => {
    const fault = faults.pick(request.method, request.routeOptions.url, false);
    if (fault && (await applyFault(fault, request, reply))) return reply;
  });

  app.addHook("preHandler", async (request) => {
    reachedHandler.add(request.raw);
  });

  app.addHook("onSend", async (request, reply, payload) => {
    // A fault "after the handler" loses an answer to work done; one that was never done (a fault or a 429 before
    // the handler, a refused body) has nothing to lose, and must not use up the rule's `times`.
    if (!reachedHandler.has(request.raw)) return payload;
    const fault = faults.pick(request.method, request.routeOptions.url, true);
    if (!fault) return payload;
    if (fault.latencyMs > 0) await sleep(fault.latencyMs);
    if (fault.reset) {
      resetConnection(request.raw);
      return payload;
    }
    if (fault.status === undefined) return payload;
    const { mediaType, body } = errorDocument(
      request.url,
      ApiError.single(fault.status, "injected fault", "Fault mode lost this answer."),
    );
    reply.code(fault.status).type(mediaType);
    return JSON.stringify(body);
  });
}
