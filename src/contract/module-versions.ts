// Module version deprecation on the wire (spec 4.5, 4.6): the PATCH body and its answers.
import { z } from "zod";
import { resourceIdentifier } from "./jsonapi";
import { isWebLink, maxLinkLength } from "./limits";

/**
 * The text the service appends to every deprecation reason it stores (service facts), e.g. " Applies will be blocked
 * in 15 days.": a held reason is the one sent when it is that reason, trimmed, with this after it, or nothing.
 */
export const serviceReasonNotice = /\s*Applies will be blocked in \d+ days?\.\s*$/;

/** The reason as its author wrote it: what the service holds without the notice it appends. */
export function reasonWithoutNotice(held: string): string {
  return held.replace(serviceReasonNotice, "");
}

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

const deprecationIdentifier = z.strictObject({ id: z.string().min(1), type: z.literal("deprecations") });

/** A `deprecations` record in `included`: the reason as the service holds it, with the text it appends. */
export const deprecationRecord = z.strictObject({
  id: z.string().min(1),
  type: z.literal("deprecations"),
  attributes: z.strictObject({ reason: z.string().min(1), link: z.string().nullable() }),
});

/** Response to a deprecate PATCH (spec 4.5): no attributes, no links; the record in `included`. */
export const deprecateResponseDocument = z.strictObject({
  data: z.strictObject({
    id: z.string().min(1),
    type: z.literal("module-versions"),
    relationships: z.strictObject({ deprecation: z.strictObject({ data: deprecationIdentifier }) }),
  }),
  included: z.tuple([deprecationRecord]),
});

/** Response to a revert PATCH (spec 4.6): `{data: {type, id}}` and nothing else. */
export const undeprecateResponseDocument = z.strictObject({
  data: z.strictObject({ id: z.string().min(1), type: z.literal("module-versions") }),
});

/** Response to either PATCH: the route is the same, the body tells them apart. */
export const moduleVersionDocument = z.union([deprecateResponseDocument, undeprecateResponseDocument]);
export type DeprecateResponseDocument = z.infer<typeof deprecateResponseDocument>;
export type UndeprecateResponseDocument = z.infer<typeof undeprecateResponseDocument>;

/** A `deprecations` record as the client accepts it. */
export const lenientDeprecationRecord = z.object({
  id: z.string(),
  type: z.literal("deprecations"),
  attributes: z.object({ reason: z.string().nullish(), link: z.string().nullish() }).optional(),
});
export type LenientDeprecationRecord = z.infer<typeof lenientDeprecationRecord>;

/** Response to either PATCH as the client accepts it. */
export const lenientModuleVersionDocument = z.object({
  data: z.object({
    id: z.string(),
    type: z.literal("module-versions"),
    relationships: z.object({ deprecation: z.object({ data: resourceIdentifier.nullish() }).optional() }).optional(),
  }),
  included: z.array(z.union([lenientDeprecationRecord, z.object({ id: z.string(), type: z.string() })])).optional(),
});
export type DeprecationRecord = z.infer<typeof deprecationRecord>;
