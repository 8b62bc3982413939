import type { FastifyInstance, FastifyRequest } from "fastify";
import { vcsPushAnswer, vcsPushRequest } from "../../contract/policy-sets";
import type { AppContext } from "../context";
import { enforcementOf } from "../enforcement";
import { ApiError, parseBody } from "../errors";
import { jsonApiEndpoint } from "../openapi";
import { ingestPush } from "../vcs-ingress";

/** The names of this machine a request to a loopback-only route may be addressed to. */
const loopbackHostNames = ["localhost", "localhost.localdomain"];

/** Whether a caller's address is this machine's loopback (127.0.0.0/8, ::1, or either as IPv4-mapped IPv6). */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (address === undefined) return false;
  const ipv4 = address.startsWith("::ffff:") ? address.slice(7) : address;
  return address === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(ipv4);
}

/**
 * The local server's own routes take no token (a VCS provider's webhook carries none), so they are served to this
 * machine only: a server started with `--host 0.0.0.0` (a container, a CI service) would otherwise let anyone on
 * the network announce pushes or read what every organization enforces.
 */
export function loopbackOnly(request: FastifyRequest): void {
  // A page of another site can make a browser on this machine send a request here under a name that resolves to
  // 127.0.0.1 (DNS rebinding): the name it asked for must be this machine's too.
  const host = (request.headers.host ?? "").replace(/:\d+$/, "").replace(/^\[(.*)\]$/, "$1");
  if (
    !isLoopbackAddress(request.socket.remoteAddress) ||
    (!loopbackHostNames.includes(host.toLowerCase()) && !isLoopbackAddress(host))
  ) {
    throw ApiError.single(
      403,
      "forbidden",
      `${request.url.split("?")[0]} is the local server's own route, served to this machine (loopback) only.`,
    );
  }
}

/**
 * The local server's own routes, outside the service's API; they take no token, and answer loopback callers only.
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
      moreErrors: [403],
    }),
    async (request, reply) => {
      loopbackOnly(request);
      const { identifier, branch } = parseBody(vcsPushRequest, request.body);
      const versions = await ingestPush(storage, identifier, branch);
      return reply.type("application/json").send({ versions });
    },
  );

  app.get<{ Querystring: { organization?: string } }>("/_local/enforcement", async (request, reply) => {
    loopbackOnly(request);
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
