import type { FastifyInstance, FastifyRequest } from "fastify";
import { maxPolicyCodeBytes } from "../../contract/policies";
import type { AppContext } from "../app";
import { ApiError, installErrorHandling } from "../errors";
import { jsonApiErrors } from "../openapi";
import { loadPolicy } from "./policies";

const codeMediaType = "application/octet-stream";

export interface UploadMetrics {
  /** The most upload bytes held in memory at once, over the server's life: bounded by the 10 MB limit. */
  peakBufferedBytes: number;
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
 * memory, so an 11 MB body never costs more than 10 MB.
 */
export function registerUploadRoute(app: FastifyInstance, { storage, uploadMetrics }: AppContext): void {
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
      payload.on("data", (chunk: Buffer) => {
        if (settled) return;
        received += chunk.length;
        if (received > maxPolicyCodeBytes) {
          settled = true;
          chunks.length = 0;
          done(tooLarge(), undefined);
          return;
        }
        chunks.push(chunk);
        uploadMetrics.peakBufferedBytes = Math.max(uploadMetrics.peakBufferedBytes, received);
      });
      payload.on("end", () => {
        if (settled) return;
        settled = true;
        done(null, Buffer.concat(chunks, received));
      });
      payload.on("error", (error) => {
        if (settled) return;
        settled = true;
        done(error, undefined);
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
            responses: { 204: { description: "Saved" }, ...jsonApiErrors(401, 404, 413, 415, 429) },
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
