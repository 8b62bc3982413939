import type { FastifyInstance, FastifyRequest } from "fastify";
import { maxPolicyCodeBytes } from "../../contract/policies";
import { type AppContext, loadPolicy } from "../context";
import { ApiError, installErrorHandling } from "../errors";
import { jsonApiErrors } from "../openapi";

const codeMediaType = "application/octet-stream";

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

function tooLarge(): ApiError {
  return ApiError.single(
    413,
    "payload too large",
    `Policy code is limited to ${maxPolicyCodeBytes} bytes (10 MB); nothing was saved.`,
  );
}

type PolicyParams = { Params: { policyId: string } };

/**
 * `PUT /api/v2/policies/:policyId/upload` in a scope of its own: it alone takes raw bytes, with a 10 MB limit
 * counted while the body streams in. Past the limit it answers 413 at once and discards the rest unread into
 * memory, so an 11 MB body never costs more than 10 MB. All uploads together hold at most the buffer budget: the
 * one that would pass it answers 503 with Retry-After, so stalled uploads cannot exhaust memory.
 */
export function registerUploadRoute(
  app: FastifyInstance,
  { storage, uploadMetrics, uploadBufferBudgetBytes }: AppContext,
): void {
  app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    installErrorHandling(scope, codeMediaType);
    scope.addContentTypeParser(codeMediaType, (request, payload, done) => {
      const declared = Number(request.headers["content-length"]);
      if (declared > maxPolicyCodeBytes) {
        payload.resume();
        done(tooLarge(), undefined);
        return;
      }
      const chunks: Buffer[] = [];
      let received = 0;
      let settled = false;
      const settle = (error: Error | null, body: Buffer | undefined) => {
        settled = true;
        uploadMetrics.bufferedBytes -= received;
        chunks.length = 0;
        done(error, body);
      };
      payload.on("data", (chunk: Buffer) => {
        if (settled) return;
        if (received + chunk.length > maxPolicyCodeBytes) {
          settle(tooLarge(), undefined);
          return;
        }
        if (uploadMetrics.bufferedBytes + chunk.length > uploadBufferBudgetBytes) {
          settle(serverBusy(), undefined);
          return;
        }
        received += chunk.length;
        uploadMetrics.bufferedBytes += chunk.length;
        chunks.push(chunk);
        uploadMetrics.peakBufferedBytes = Math.max(uploadMetrics.peakBufferedBytes, received);
        uploadMetrics.peakTotalBufferedBytes = Math.max(
          uploadMetrics.peakTotalBufferedBytes,
          uploadMetrics.bufferedBytes,
        );
      });
      payload.on("end", () => {
        if (settled) return;
        const body = Buffer.concat(chunks, received);
        settle(null, body);
      });
      payload.on("error", (error) => {
        if (!settled) settle(error, undefined);
      });
    });

    scope.put<PolicyParams>(
      "/api/v2/policies/:policyId/upload",
      {
        // Checked before the body is read: a missing policy or a token without permission costs no upload.
        onRequest: async (request: FastifyRequest<PolicyParams>) => {
          loadPolicy(storage, request, "managePolicies");
        },
        config: {
          doc: {
            summary: "Upload policy code (spec 4.3); raw bytes, at most 10 MB",
            body: { mediaType: codeMediaType },
            responses: { 204: { description: "Saved" }, ...jsonApiErrors(400, 401, 404, 408, 413, 415, 429, 503) },
          },
        },
      },
      async (request, reply) => {
        const code = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        if (!storage.storeCode(request.params.policyId, code)) throw ApiError.single(404, "not found", "Deleted.");
        return reply.code(204).send();
      },
    );
  });
}
