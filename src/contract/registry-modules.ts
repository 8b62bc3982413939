import { z } from "zod";
import { maxNameLength, semanticVersionPattern } from "./limits";

// The client never creates modules: these documents are the server's (a private registry to deprecate in) alone.

const moduleName = z
  .string()
  .max(maxNameLength, `is longer than ${maxNameLength} characters: shorten it`)
  .regex(/^[0-9A-Za-z_-]+$/, "may hold only letters, digits, '-' and '_'");

export const createRegistryModuleRequest = z.object({
  data: z.object({
    type: z.literal("registry-modules"),
    attributes: z.object({
      name: moduleName,
      provider: z.string().regex(/^[0-9a-z]+$/, "may hold only lowercase letters and digits, e.g. aws"),
      "registry-name": z.literal("private").default("private"),
    }),
  }),
});
export const createModuleVersionRequest = z.object({
  data: z.object({
    type: z.literal("registry-module-versions"),
    attributes: z.object({
      version: z.string().regex(semanticVersionPattern, "must be a semantic version such as 1.2.0 (no leading zeros)"),
    }),
  }),
});
export const registryModuleDocument = z.strictObject({
  data: z.strictObject({
    id: z.string(),
    type: z.literal("registry-modules"),
    attributes: z.strictObject({
      name: z.string(),
      namespace: z.string(),
      provider: z.string(),
      "registry-name": z.literal("private"),
      status: z.string(),
      "created-at": z.string(),
    }),
    relationships: z.strictObject({
      organization: z.strictObject({ data: z.strictObject({ id: z.string(), type: z.literal("organizations") }) }),
    }),
  }),
});
export const registryModuleVersionDocument = z.strictObject({
  data: z.strictObject({
    id: z.string(),
    type: z.literal("registry-module-versions"),
    attributes: z.strictObject({ version: z.string(), status: z.string(), source: z.string() }),
  }),
});
export type RegistryModuleDocument = z.infer<typeof registryModuleDocument>;
export type RegistryModuleVersionDocument = z.infer<typeof registryModuleVersionDocument>;
