import type { FastifyInstance, FastifyRequest } from "fastify";
import { maxPolicyCodeBytes } from "../../contract/policies";
import { type AppContext, loadPolicy } from "../context";
import { ApiError, installErrorHandling } from "../errors";
import { jsonApiErrors } from "../openapi";
import { acceptBudgetedBodies } from "../request-bodies";

const codeMediaType = "application/octet-stream";

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
    acceptBudgetedBodies(scope, {
      limitBytes: maxPolicyCodeBytes,
      tooLarge,
      metrics: uploadMetrics,
      budgetBytes: uploadBufferBudgetBytes,
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
