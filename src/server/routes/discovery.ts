import type { FastifyInstance } from "fastify";
import { z } from "zod";

/**
 * Terraform's remote service discovery: the tfe provider reads this document (always over https) and takes the
 * `tfe.v2.2` URL as the API's address. The service lists more (`modules.v1`, `state.v2`, `login.v1`, `motd.v1`,
 * ...); only the services this server implements are listed, so a tool that needs another one is told the host
 * does not provide it instead of failing half way through it.
 */
export const serviceDiscoveryDocument = {
  "tfe.v2": "/api/v2/",
  "tfe.v2.1": "/api/v2/",
  "tfe.v2.2": "/api/v2/",
} as const;

export function registerDiscoveryRoute(app: FastifyInstance): void {
  app.get(
    "/.well-known/terraform.json",
    {
      config: {
        doc: {
          summary: "Service discovery: where the tfe API is, as the Terraform tfe provider finds it",
          authenticated: false,
          responses: {
            200: {
              description: "Service identifiers and their base URLs",
              // terraform-svchost accepts this media type only.
              mediaType: "application/json",
              schema: z.record(z.string(), z.string()),
            },
          },
        },
      },
    },
    async (_request, reply) => reply.type("application/json").send(serviceDiscoveryDocument),
  );
}
