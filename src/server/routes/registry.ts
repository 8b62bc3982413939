import type { FastifyInstance, FastifyRequest } from "fastify";
import {
  type RegistryModuleVersionRecord,
  type RegistryModuleVersionsDocument,
  registryModuleVersion,
  registryModuleVersions,
} from "../../contract/registry";
import { authorize } from "../auth";
import type { AppContext } from "../context";
import { notFound } from "../errors";
import { registryEndpoint } from "../openapi";
import type { ModuleVersionRecord, Storage } from "../storage";

type ModuleParams = { Params: { namespace: string; name: string; provider: string } };

function deprecationOf(version: ModuleVersionRecord): RegistryModuleVersionRecord["deprecation"] {
  return version.deprecation && { reason: version.deprecation.reason, link: version.deprecation.link };
}

/** For private modules the namespace is the organization: the token must have access to it. */
function loadModule(storage: Storage, request: FastifyRequest<ModuleParams>) {
  const { namespace, name, provider } = request.params;
  authorize(request, namespace, "read");
  const module = storage.module(namespace, name, provider);
  if (!module) throw notFound();
  return module;
}

const modulePath = "/api/registry/v1/modules/:namespace/:name/:provider";

/** The registry read interface (spec 4.7, 4.8): plain JSON, errors as `{"errors": ["Not Found"]}`. */
export function registerRegistryRoutes(app: FastifyInstance, { storage }: AppContext): void {
  app.get<ModuleParams>(
    `${modulePath}/versions`,
    registryEndpoint("All versions of a module with their deprecation (spec 4.8)", registryModuleVersions),
    async (request, reply) => {
      const module = loadModule(storage, request);
      const versions = storage.moduleVersions(module.id).map((version) => ({
        version: version.version,
        submodules: [],
        root: { dependencies: [], providers: [{ name: module.provider, namespace: "", source: "", version: "" }] },
        deprecation: deprecationOf(version),
      }));
      return reply.type("application/json").send({
        modules: [{ source: `${module.organization}/${module.name}/${module.provider}`, versions }],
      } satisfies RegistryModuleVersionsDocument);
    },
  );

  app.get<ModuleParams & { Params: { version: string } }>(
    `${modulePath}/:version`,
    registryEndpoint("One module version with its deprecation (spec 4.7)", registryModuleVersion),
    async (request, reply) => {
      const module = loadModule(storage, request);
      const version = storage.moduleVersion(module.id, request.params.version);
      if (!version) throw notFound();
      const { organization, name, provider } = module;
      return reply.type("application/json").send({
        id: `${organization}/${name}/${provider}/${version.version}`,
        owner: "",
        namespace: organization,
        name,
        version: version.version,
        provider,
        description: "",
        source: "",
        published_at: version.publishedAt,
        downloads: 0,
        verified: false,
        root: { path: "", name, readme: "", empty: false, inputs: [], outputs: [], dependencies: [], resources: [] },
        submodules: [],
        providers: [provider],
        versions: storage.moduleVersions(module.id).map((entry) => entry.version),
        deprecation: deprecationOf(version),
      } satisfies RegistryModuleVersionRecord);
    },
  );
}
