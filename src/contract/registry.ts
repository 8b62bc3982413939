// The registry read interface on the wire (spec 4.7, 4.8): plain JSON, not JSON:API.
import { z } from "zod";

/** `deprecation` of the registry read interface: `{reason, link}`, or null when the version is not deprecated. */
export const registryDeprecation = z
  .strictObject({ reason: z.string().min(1), link: z.string().nullable() })
  .nullable();

/**
 * One module version from `GET /api/registry/v1/modules/:ns/:name/:provider/:version` (spec 4.7); plain JSON. The
 * service sends more than the spec lists (service-facts): those members are here too, loosely.
 */
export const registryModuleVersion = z.strictObject({
  id: z.string().min(1),
  owner: z.string(),
  namespace: z.string().min(1),
  name: z.string().min(1),
  version: z.string().min(1),
  provider: z.string().min(1),
  description: z.string(),
  source: z.string(),
  published_at: z.iso.datetime(),
  downloads: z.number().int().nonnegative(),
  verified: z.boolean(),
  root: z.record(z.string(), z.unknown()),
  submodules: z.array(z.unknown()),
  providers: z.array(z.string()),
  versions: z.array(z.string()),
  deprecation: registryDeprecation,
});

export type RegistryModuleVersionRecord = z.infer<typeof registryModuleVersion>;

/** `GET /api/registry/v1/modules/:ns/:name/:provider/versions` (spec 4.8). */
export const registryModuleVersions = z.strictObject({
  modules: z.array(
    z.strictObject({
      source: z.string().min(1),
      versions: z.array(
        z.strictObject({
          version: z.string().min(1),
          submodules: z.array(z.unknown()),
          root: z.strictObject({
            dependencies: z.array(z.unknown()),
            providers: z.array(z.looseObject({ name: z.string().min(1), version: z.string() })),
          }),
          deprecation: registryDeprecation,
        }),
      ),
    }),
  ),
});

export type RegistryModuleVersionsDocument = z.infer<typeof registryModuleVersions>;

/** Errors of the registry read interface: an array of strings, e.g. `{"errors":["Not Found"]}`. */
export const registryErrorDocument = z.strictObject({ errors: z.array(z.string()).min(1) });

/** `deprecation` as the client accepts it. A link may lack a scheme. */
export const lenientRegistryDeprecation = z
  .object({ reason: z.string().nullish(), link: z.string().nullish() })
  .nullable();
export type LenientRegistryDeprecation = z.infer<typeof lenientRegistryDeprecation>;

/** One module version as the client accepts it: only what it reads, each member that may be missing optional. */
export const lenientRegistryModuleVersion = z.object({
  id: z.string(),
  owner: z.string().nullish(),
  namespace: z.string(),
  name: z.string(),
  version: z.string(),
  provider: z.string(),
  description: z.string().nullish(),
  source: z.string().nullish(),
  published_at: z.string().nullish(),
  deprecation: lenientRegistryDeprecation.optional(),
});

/** Every version of a module as the client accepts it. */
export const lenientRegistryModuleVersions = z.object({
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
          deprecation: lenientRegistryDeprecation.optional(),
        }),
      ),
    }),
  ),
});

/** Registry errors as the client accepts them. */
export const lenientRegistryErrorDocument = z.object({ errors: z.array(z.string()) });
