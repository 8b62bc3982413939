import type { FastifyInstance } from "fastify";
import { vcsPushAnswer, vcsPushRequest } from "../../contract/policy-sets";
import type { AppContext } from "../context";
import { parseBody } from "../errors";
import { jsonApiEndpoint } from "../openapi";
import { ingestPush } from "../vcs-ingress";

/**
 * What stands for a VCS provider's webhook: a push to one of the seed's repositories is announced here, and every set
 * that reads it gets a new version, as the service does when the provider tells it of a new commit. Not part of the
 * service's API; it takes no token (the provider's webhook carries none either), and the server listens on loopback.
 */
export function registerVcsRoutes(app: FastifyInstance, { storage }: AppContext): void {
  app.post(
    "/_local/vcs-push",
    jsonApiEndpoint({
      summary: "Local server only: announce a push to a seeded repository; each set reading it gets a new version",
      request: vcsPushRequest,
      success: { status: 200, description: "The versions made, ingressing", schema: vcsPushAnswer },
    }),
    async (request, reply) => {
      const { identifier, branch } = parseBody(vcsPushRequest, request.body);
      const versions = await ingestPush(storage, identifier, branch);
      return reply.type("application/json").send({ versions });
    },
  );
}
