import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { afterEach } from "vitest";
import { TfeClient, type TfeClientOptions } from "../../src/client/index";

export const token = "test-token-3f9c2a.atlasv1.secretvalue";

/** What a fault server saw: one row per request, in arrival order, stamped with the server's clock. */
export interface ReceivedRequest {
  method: string;
  /** Path and query exactly as sent (not decoded). */
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** `performance.now()` when the request's body had fully arrived. */
  at: number;
}

export type Reply = (request: ReceivedRequest, response: ServerResponse, index: number) => void;

export interface FaultServer {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  requests: ReceivedRequest[];
  close(): Promise<void>;
}

const cleanups: (() => Promise<void>)[] = [];

// Every test gets fresh servers and clients; closing them here keeps each test file free of teardown code.
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

function listen(server: Server, port = 0): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve((server.address() as AddressInfo).port));
  });
}

/** A node:http server on 127.0.0.1 that records every request and answers through `reply`. */
export async function startFaultServer(reply: Reply, port = 0): Promise<FaultServer> {
  const requests: ReceivedRequest[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const received: ReceivedRequest = {
        method: request.method ?? "",
        url: request.url ?? "",
        headers: request.headers,
        body: Buffer.concat(chunks),
        at: performance.now(),
      };
      requests.push(received);
      reply(received, response, requests.length - 1);
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  const boundPort = await listen(server, port);
  const close = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    });
  cleanups.push(close);
  return { url: `http://127.0.0.1:${boundPort}`, requests, close };
}

/** A port nothing listens on (bound, then released), for connection-refused faults. */
export async function freePort(): Promise<number> {
  const server = createServer();
  const port = await listen(server);
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Answers the n-th request with the n-th reply; the last one repeats. */
export function sequence(...replies: Reply[]): Reply {
  return (request, response, index) => replies[Math.min(index, replies.length - 1)]!(request, response, index);
}

export function json(status: number, body: unknown, headers: Record<string, string> = {}): Reply {
  return (_request, response) => {
    response.writeHead(status, { "content-type": "application/vnd.api+json", ...headers });
    response.end(typeof body === "string" ? body : JSON.stringify(body));
  };
}

export function text(status: number, body: string, headers: Record<string, string> = {}): Reply {
  return (_request, response) => {
    response.writeHead(status, { "content-type": "text/html", ...headers });
    response.end(body);
  };
}

export function empty(status: number, headers: Record<string, string> = {}): Reply {
  return (_request, response) => {
    response.writeHead(status, headers);
    response.end();
  };
}

/** Drops the connection after the request arrived: the client sees a reset / "other side closed". */
export const reset: Reply = (_request, response) => {
  response.socket?.destroy();
};

/** Never answers: only the client's timeout ends the request. */
export const hang: Reply = () => {};

/** Retry delays small enough to keep tests fast; the rules under test do not depend on them. */
export const fastRetry = { baseDelayMs: 5, maxDelayMs: 20, maxRetries: 3, maxElapsedMs: 5_000 };

/** A client of `address` with the test token, fast retries and no client-side rate limit unless overridden. */
export function testClient(address: string, options: Partial<TfeClientOptions> = {}): TfeClient {
  const client = new TfeClient({
    address,
    token,
    rateLimit: false,
    ...options,
    retry: { ...fastRetry, ...options.retry },
  });
  cleanups.push(() => client.close());
  return client;
}

/** Runs `action`, which must throw, and returns what it threw. */
export async function rejection(action: () => Promise<unknown>): Promise<unknown> {
  try {
    await action();
  } catch (error) {
    return error;
  }
  throw new Error("expected the call to throw, but it succeeded");
}

/** A policy resource as the real service sends it from show; `attributes` and top-level members override. */
export function policyResource(
  id: string,
  attributes: Record<string, unknown> = {},
  members: Record<string, unknown> = {},
): Record<string, unknown> {
  const name = (attributes.name as string | undefined) ?? `policy-${id}`;
  return {
    id,
    type: "policies",
    attributes: {
      name,
      description: "Restricts instance types",
      kind: "sentinel",
      query: null,
      "enforcement-level": "soft-mandatory",
      enforce: [{ path: `${name}.sentinel`, mode: "soft-mandatory" }],
      "policy-set-count": 1,
      "updated-at": "2026-11-20T10:00:00.000Z",
      ...attributes,
    },
    relationships: {
      organization: { data: { id: "acme", type: "organizations" } },
      "policy-sets": { data: [{ id: "polset-1", type: "policy-sets" }] },
    },
    links: {
      self: `/api/v2/policies/${id}`,
      upload: `/api/v2/policies/${id}/upload`,
      download: `/api/v2/policies/${id}/download`,
    },
    ...members,
  };
}

export const showPolicy = (id = "pol-1") => json(200, { data: policyResource(id) });
