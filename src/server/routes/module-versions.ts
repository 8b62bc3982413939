import type { FastifyInstance, FastifyRequest } from "fastify";
import { jsonApiMediaType } from "../../contract/jsonapi";
import {
  type DeprecateResponseDocument,
  moduleVersionDeprecationRequest,
  moduleVersionDocument,
  type UndeprecateResponseDocument,
} from "../../contract/module-versions";
import {
  createModuleVersionRequest,
  createRegistryModuleRequest,
  type RegistryModuleDocument,
  type RegistryModuleVersionDocument,
  registryModuleDocument,
  registryModuleVersionDocument,
} from "../../contract/registry-modules";
import { authorize } from "../auth";
import type { AppContext } from "../context";
import { alreadyTaken, notFound, parseBody } from "../errors";
import { jsonApiEndpoint } from "../openapi";
import type { Storage } from "../storage";

/** What the service appends to every deprecation reason. */
export const deprecationNotice = " Applies will be blocked in 15 days.";

type ModuleParams = { Params: { organization: string; namespace: string; name: string; provider: string } };
type ModuleVersionParams = { Params: ModuleParams["Params"] & { version: string } };

/** The module in the path, or a 404; the organization appears twice in these paths and both must agree. */
function loadModule(storage: Storage, request: FastifyRequest<ModuleParams>, permission: "read" | "manageModules") {
  const { organization, namespace, name, provider } = request.params;
  if (organization !== namespace) throw notFound();
  authorize(request, organization, permission);
  const module = storage.module(organization, name, provider);
  if (!module) throw notFound();
  return module;
}

const modulePath = "/api/v2/organizations/:organization/registry-modules/private/:namespace/:name/:provider";

export function registerModuleVersionRoutes(app: FastifyInstance, { storage }: AppContext): void {
  app.post<{ Params: { organization: string } }>(
    "/api/v2/organizations/:organization/registry-modules",
    jsonApiEndpoint({
      summary: "Create a private registry module (no VCS); its versions are added with the route below",
      request: createRegistryModuleRequest,
      success: { status: 201, description: "Created", schema: registryModuleDocument },
    }),
    async (request, reply) => {
      const { organization } = request.params;
      authorize(request, organization, "manageModules");
      const { name, provider } = parseBody(createRegistryModuleRequest, request.body).data.attributes;
      const module = storage.createModule(organization, name, provider);
      if (module === "exists") {
        throw alreadyTaken("name");
      }
      return reply
        .code(201)
        .type(jsonApiMediaType)
        .send({
          data: {
            id: `mod-${module.id}`,
            type: "registry-modules",
            attributes: {
              name,
              namespace: organization,
              provider,
              "registry-name": "private",
              status: "setup_complete",
              "created-at": module.createdAt,
            },
            relationships: { organization: { data: { id: organization, type: "organizations" } } },
          },
        } satisfies RegistryModuleDocument);
    },
  );

  app.post<ModuleParams>(
    `${modulePath}/versions`,
    jsonApiEndpoint({
      summary: "Add a version to a private registry module",
      request: createModuleVersionRequest,
      success: { status: 201, description: "Created", schema: registryModuleVersionDocument },
    }),
    async (request, reply) => {
      const module = loadModule(storage, request, "manageModules");
      const { version } = parseBody(createModuleVersionRequest, request.body).data.attributes;
      const created = storage.createModuleVersion(module.id, version);
      if (created === "exists") {
        throw alreadyTaken("version");
      }
      return reply
        .code(201)
        .type(jsonApiMediaType)
        .send({
          data: {
            id: `modver-${created.id}`,
            type: "registry-module-versions",
            attributes: { version, status: "ok", source: "tfe-api" },
          },
        } satisfies RegistryModuleVersionDocument);
    },
  );

  app.patch<ModuleVersionParams>(
    `${modulePath}/:version`,
    jsonApiEndpoint({
      summary: "Deprecate (spec 4.5) or reinstate (spec 4.6) a module version; Plus edition only",
      request: moduleVersionDeprecationRequest,
      success: { status: 200, description: "Done", schema: moduleVersionDocument },
      moreErrors: [500, 503],
    }),
    async (request, reply) => {
      const module = loadModule(storage, request, "manageModules");
      // Without Plus the feature does not exist for the organization: the same 404 as a missing version.
      if (!storage.organization(module.organization)?.plus) throw notFound();
      const version = storage.moduleVersion(module.id, request.params.version);
      if (!version) throw notFound();
      const { deprecation } = parseBody(moduleVersionDeprecationRequest, request.body).data.attributes;
      const id = String(version.id);
      reply.type(jsonApiMediaType);
      if (deprecation["deprecated-status"] === "Undeprecated") {
        storage.undeprecate(version.id);
        return reply.send({ data: { type: "module-versions", id } } satisfies UndeprecateResponseDocument);
      }
      const record = storage.deprecate(
        version.id,
        `${deprecation.reason}${deprecationNotice}`,
        deprecation.link ?? null,
      );
      const deprecationId = String(record.id);
      return reply.send({
        data: {
          id,
          type: "module-versions",
          relationships: { deprecation: { data: { id: deprecationId, type: "deprecations" } } },
        },
        included: [
          { id: deprecationId, type: "deprecations", attributes: { link: record.link, reason: record.reason } },
        ],
      } satisfies DeprecateResponseDocument);
    },
  );
}
