// The registry read interface on the wire (spec 4.7, 4.8): plain JSON, not JSON:API.
import { z } from "zod";

/** `deprecation` of the registry read interface: `{reason, link}` or null. A link may lack a scheme. */
export const registryDeprecation = z.object({ reason: z.string().nullish(), link: z.string().nullish() }).nullable();
export type RegistryDeprecation = z.infer<typeof registryDeprecation>;

/** One module version from `GET /api/registry/v1/modules/:ns/:name/:provider/:version` (spec 4.7); plain JSON. */
export const registryModuleVersion = z.object({
  id: z.string(),
  owner: z.string().nullish(),
  namespace: z.string(),
  name: z.string(),
  version: z.string(),
  provider: z.string(),
  description: z.string().nullish(),
  source: z.string().nullish(),
  published_at: z.string().nullish(),
  deprecation: registryDeprecation.optional(),
});
export type RegistryModuleVersionRecord = z.infer<typeof registryModuleVersion>;

/** `GET /api/registry/v1/modules/:ns/:name/:provider/versions` (spec 4.8). */
export const registryModuleVersions = z.object({
  modules: z.array(
    z.object({
      source: z.string().nullish(),
      versions: z.array(
        z.object({
          version: z.string(),
          submodules: z.array(z.unknown()).nullish(),
          root: z
            .object({
              dependencies: z.array(z.unknown()).nullish(),
              providers: z.array(z.object({ name: z.string(), version: z.string().nullish() })).nullish(),
            })
            .nullish(),
          deprecation: registryDeprecation.optional(),
        }),
      ),
    }),
  ),
});

/** Errors of the registry read interface: an array of strings, e.g. `{"errors":["Not Found"]}`. */
export const registryErrorDocument = z.object({ errors: z.array(z.string()) });
