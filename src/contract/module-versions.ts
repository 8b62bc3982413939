// Module version deprecation on the wire (spec 4.5, 4.6): the PATCH body and its answers.
import { z } from "zod";
import { resourceIdentifier } from "./jsonapi";
import { isWebLink, maxLinkLength } from "./limits";

const deprecatedStatus = z.strictObject({
  "deprecated-status": z.literal("Deprecated"),
  reason: z.string().trim().min(1, "is required: say why the version is deprecated"),
  link: z
    .string()
    .refine(
      isWebLink,
      `is not a web address (http or https, at most ${maxLinkLength} characters): use e.g. "https://example.com/upgrade", or leave it out`,
    )
    .optional(),
});
export type DeprecatedStatus = z.infer<typeof deprecatedStatus>;
const undeprecatedStatus = z.strictObject({ "deprecated-status": z.literal("Undeprecated") });

/** Body of the module-version PATCH (spec 4.5 deprecate, 4.6 revert), validated strictly before it is sent. */
export const moduleVersionDeprecationRequest = z.strictObject({
  data: z.strictObject({
    type: z.literal("module-versions"),
    id: z.string().min(1).optional(),
    attributes: z.strictObject({
      deprecation: z.discriminatedUnion("deprecated-status", [deprecatedStatus, undeprecatedStatus]),
    }),
  }),
});
export type ModuleVersionDeprecationRequest = z.infer<typeof moduleVersionDeprecationRequest>;

/** A `deprecations` record in `included`. */
export const deprecationRecord = z.object({
  id: z.string(),
  type: z.literal("deprecations"),
  attributes: z.object({ reason: z.string().nullish(), link: z.string().nullish() }).optional(),
});

/**
 * Response to either PATCH. The deprecate response has `relationships.deprecation` and `included`; the revert
 * response is `{data: {type, id}}` only; neither has attributes or links.
 */
export const moduleVersionDocument = z.object({
  data: z.object({
    id: z.string(),
    type: z.literal("module-versions"),
    relationships: z.object({ deprecation: z.object({ data: resourceIdentifier.nullish() }).optional() }).optional(),
  }),
  included: z.array(z.union([deprecationRecord, z.object({ id: z.string(), type: z.string() })])).optional(),
});
export type DeprecationRecord = z.infer<typeof deprecationRecord>;
