import type { FastifyInstance } from "fastify";
import { type ServiceDiscoveryDocument, serviceDiscoveryDocument } from "../../contract/discovery";

/**
 * Only the services this server implements are listed, so a tool that needs another one is told the host does not
 * provide it instead of failing half way through it.
 */
export const localServices: ServiceDiscoveryDocument = {
  "tfe.v2": "/api/v2/",
  "tfe.v2.1": "/api/v2/",
  "tfe.v2.2": "/api/v2/",
};

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
              schema: serviceDiscoveryDocument,
            },
          },
        },
      },
    },
    async (_request, reply) => reply.type("application/json").send(localServices),
  );
}
