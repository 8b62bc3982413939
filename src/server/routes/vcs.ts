import type { FastifyInstance } from "fastify";
import { vcsPushAnswer, vcsPushRequest } from "../../contract/policy-sets";
import type { AppContext } from "../context";
import { enforcementOf } from "../enforcement";
import { ApiError, parseBody } from "../errors";
import { jsonApiEndpoint } from "../openapi";
import { ingestPush } from "../vcs-ingress";

/**
 * The local server's own routes, outside the service's API; they take no token, and the server listens on loopback.
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

  app.get<{ Querystring: { organization?: string } }>("/_local/enforcement", async (request, reply) => {
    const organization = request.query.organization ?? "";
    if (!storage.organization(organization)) {
      throw ApiError.single(404, "not found", `No organization "${organization}": pass ?organization=<name>.`);
    }
    try {
      return reply.type("application/json").send(await enforcementOf(storage, organization));
    } catch (error) {
      throw ApiError.single(
        500,
        "internal server error",
        `Reading what is enforced failed: ${(error as Error).message}`,
      );
    }
  });
}
