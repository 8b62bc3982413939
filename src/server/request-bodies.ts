import type { IncomingMessage } from "node:http";
import { PassThrough } from "node:stream";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { ApiError } from "./errors";

export interface UploadMetrics {
  /** The most bytes one upload held in memory, over the server's life: bounded by the 10 MB limit. */
  peakBufferedBytes: number;
  /** Bytes all uploads in progress hold in memory now. */
  bufferedBytes: number;
  /** The most bytes all uploads held at once, over the server's life: bounded by the upload buffer budget. */
  peakTotalBufferedBytes: number;
}

/** Default of `uploadBufferBudgetBytes`: what all uploads in progress may hold in memory together. */
export const defaultUploadBufferBudgetBytes = 64 * 1024 * 1024;

function serverBusy(): ApiError {
  const error = ApiError.single(
    503,
    "service unavailable",
    "Too many uploads are in progress to hold this one: send it again after Retry-After seconds.",
  );
  error.retryAfterSeconds = 1;
  return error;
}

/**
 * How much of a refused body is read and discarded before the answer, so that a client still sending reads the 413
 * instead of a reset (fastify closes the connection after a parser's error, and a socket closed while the client
 * writes gives it EPIPE): nginx's lingering close does the same. Past it, or after the time, the connection closes.
 */
const lingeringBytes = 64 * 1024 * 1024;
const lingeringMs = 10_000;

/** Discards the rest of `payload`, up to the lingering bounds, then calls `then` once. */
function drainThen(payload: NodeJS.ReadableStream, alreadyRead: number, then: () => void): void {
  let drained = alreadyRead;
  let finished = false;
  const finish = () => {
    if (finished) return;
    finished = true;
    clearTimeout(timer);
    payload.removeListener("data", count);
    then();
  };
  const count = (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > lingeringBytes) finish();
  };
  const timer = setTimeout(finish, lingeringMs);
  payload.on("data", count);
  payload.once("end", finish);
  payload.once("error", finish);
  payload.resume();
}

/**
 * nginx's lingering close, for an answer sent before its request's body arrived. The answer closes the connection
 * (fastify asks that after a refused body), and Node closes the socket as soon as the answer is written
 * (`destroySoon`): bytes the client is still sending then arrive at a closed socket, the kernel answers them with a
 * reset, and a client that reads its answer only once it has sent everything gets EPIPE instead of the 413. So the
 * answer is followed by the end of our side of the connection (the client reads the answer and its end), the rest of
 * the body is read and discarded within the lingering bounds, and only then is the socket closed; past the bounds it
 * closes at once.
 */
function closeOnceDrained(request: IncomingMessage, payload: NodeJS.ReadableStream): void {
  const socket = request.socket;
  const closeWhenWritten = socket.destroySoon.bind(socket);
  let drained = false;
  let answered = false;
  socket.destroySoon = () => {
    answered = true;
    if (drained) return closeWhenWritten();
    // Half-closed: the answer and our end go out, and the client's bytes are still read.
    if (socket.writable) socket.end();
  };
  drainThen(payload, 0, () => {
    drained = true;
    if (answered) closeWhenWritten();
    else if (!request.complete) socket.destroy();
  });
}

/**
 * Takes raw `application/octet-stream` bodies in `scope`, counted while they stream in. Past `limitBytes` it answers
 * `tooLarge()` once the rest has arrived (discarded unread into memory, up to the lingering bounds), so an oversized
 * body never costs more than the limit and the client reads the answer.
 * All uploads of the server together hold at most `budgetBytes`: the one that would pass it answers 503 with
 * Retry-After, so stalled uploads cannot exhaust memory. Code uploads and policy set archives share one budget.
 */
export function acceptBudgetedBodies(
  scope: FastifyInstance,
  options: { limitBytes: number; tooLarge: () => ApiError; metrics: UploadMetrics; budgetBytes: number },
): void {
  const { limitBytes, tooLarge, metrics, budgetBytes } = options;
  scope.addContentTypeParser("application/octet-stream", (request, payload, done) => {
    const declared = Number(request.headers["content-length"]);
    if (declared > limitBytes) {
      // The header says it already: the answer goes at once, to a client that lied about its length (and never
      // sends it all) as to one still sending. What does come is read and discarded, within the lingering bounds,
      // so a client still writing reads the 413 rather than a reset; past them the connection closes.
      closeOnceDrained(request.raw, payload);
      done(tooLarge(), undefined);
      return;
    }
    const chunks: Buffer[] = [];
    let received = 0;
    let settled = false;
    const settle = (error: Error | null, body: Buffer | undefined) => {
      settled = true;
      metrics.bufferedBytes -= received;
      chunks.length = 0;
      done(error, body);
    };
    const onData = (chunk: Buffer) => {
      if (settled) return;
      if (received + chunk.length > limitBytes) {
        settled = true;
        metrics.bufferedBytes -= received;
        chunks.length = 0;
        payload.removeListener("data", onData);
        drainThen(payload, received + chunk.length, () => done(tooLarge(), undefined));
        return;
      }
      if (metrics.bufferedBytes + chunk.length > budgetBytes) {
        settle(serverBusy(), undefined);
        return;
      }
      received += chunk.length;
      metrics.bufferedBytes += chunk.length;
      chunks.push(chunk);
      metrics.peakBufferedBytes = Math.max(metrics.peakBufferedBytes, received);
      metrics.peakTotalBufferedBytes = Math.max(metrics.peakTotalBufferedBytes, metrics.bufferedBytes);
    };
    payload.on("data", onData);
    payload.on("end", () => {
      if (settled) return;
      const body = Buffer.concat(chunks, received);
      settle(null, body);
    });
    payload.on("error", (error) => {
      if (!settled) settle(error, undefined);
    });
  });
}

function hasBody(request: FastifyRequest): boolean {
  return request.headers["content-length"] !== undefined || request.headers["transfer-encoding"] !== undefined;
}

/**
 * Bounds how long a request body may take to arrive in full. Node's own request timeout is checked only every 30 s
 * and answers outside the error shapes: this one answers 408 in them and closes the connection, whatever parser
 * reads the body. Both origins install it: a stalled upload to either holds memory of the shared upload budget.
 */
export function installBodyTimeout(app: FastifyInstance, bodyTimeoutMs: number): void {
  app.addHook("preParsing", async (request, reply, payload) => {
    if (!hasBody(request)) return payload;
    const guarded = new PassThrough();
    const timer = setTimeout(() => {
      payload.unpipe(guarded);
      payload.pause();
      // A body no parser reads (the route answered without it, or the client left before it was read) has no one
      // to tell: an error emitted with no listener would end the server's process. Its connection just closes.
      if (guarded.listenerCount("error") === 0) {
        guarded.destroy();
        request.raw.socket.destroy();
        return;
      }
      reply.header("connection", "close");
      const seconds = bodyTimeoutMs / 1000;
      guarded.destroy(
        Object.assign(new Error(`The request body did not arrive in full within ${seconds} s: send it again.`), {
          statusCode: 408,
        }),
      );
    }, bodyTimeoutMs);
    const stop = () => clearTimeout(timer);
    payload.once("end", stop);
    reply.raw.once("close", stop);
    payload.once("error", (error) => {
      stop();
      // As at the timeout: an abort forwarded to a body no parser reads would be uncaught, and end the process.
      payload.unpipe(guarded);
      if (guarded.listenerCount("error") === 0) guarded.destroy();
      else guarded.destroy(error);
    });
    payload.pipe(guarded);
    return guarded;
  });
}
