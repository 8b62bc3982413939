import { z } from "zod";

// Each document comes twice where the service varies: the strict one is the contract (what the local server sends,
// what the OpenAPI document describes, what tests hold the server to); the lenient one is what the client accepts
// from any service, the real one included (service-facts).

/** Media type of every JSON:API request and response body. */
export const jsonApiMediaType = "application/vnd.api+json";

/** `{ id, type }` pointer to another resource, as in `relationships.*.data`, as the client accepts it. */
export const resourceIdentifier = z.object({ id: z.string(), type: z.string() });

/** One error object: `source` points at the member (a 422) or names the query parameter (a 400). */
export const jsonApiErrorObject = z.strictObject({
  status: z.string().regex(/^[1-5]\d\d$/),
  title: z.string().min(1),
  detail: z.string(),
  source: z.union([z.strictObject({ pointer: z.string() }), z.strictObject({ parameter: z.string() })]).optional(),
});
export type JsonApiErrorObject = z.infer<typeof jsonApiErrorObject>;
export const jsonApiErrorDocument = z.strictObject({ errors: z.array(jsonApiErrorObject).min(1) });

/**
 * One error object as the client accepts it. The service sends `status` as a string in most bodies and as a number
 * in some, and may leave out `detail` and `source` (or send them as null): all of it is optional here.
 */
export const lenientJsonApiErrorObject = z.object({
  status: z.union([z.string(), z.number()]).nullish(),
  title: z.string().nullish(),
  detail: z.string().nullish(),
  source: z.object({ pointer: z.string().nullish(), parameter: z.string().nullish() }).nullish(),
});
export type LenientJsonApiErrorObject = z.infer<typeof lenientJsonApiErrorObject>;
export const lenientJsonApiErrorDocument = z.object({ errors: z.array(lenientJsonApiErrorObject) });

/** `meta.pagination` of a list response. */
export const paginationMeta = z.strictObject({
  "current-page": z.number().int().positive(),
  "page-size": z.number().int().positive(),
  "prev-page": z.number().int().positive().nullable(),
  "next-page": z.number().int().positive().nullable(),
  "total-pages": z.number().int().positive(),
  "total-count": z.number().int().nonnegative(),
});

/** `meta.pagination` as the client accepts it: `page-size` is usually, not always, present. */
export const lenientPaginationMeta = z.object({
  "current-page": z.number(),
  "prev-page": z.number().nullable().optional(),
  "next-page": z.number().nullable().optional(),
  "total-pages": z.number(),
  "total-count": z.number(),
  "page-size": z.number().optional(),
});
export type LenientPaginationMeta = z.infer<typeof lenientPaginationMeta>;

/** Top-level `links` of a list response: `prev` and `next` are null at either end. */
export const paginationLinks = z.strictObject({
  self: z.string().min(1),
  first: z.string().min(1),
  prev: z.string().min(1).nullable(),
  next: z.string().min(1).nullable(),
  last: z.string().min(1),
});

export const lenientPaginationLinks = z
  .object({
    self: z.string(),
    first: z.string(),
    prev: z.string().nullable(),
    next: z.string().nullable(),
    last: z.string(),
  })
  .partial();

/** A related resource in `included`: its identity and, where the server gives them, its attributes. */
export function includedResource<Type extends z.ZodType<string>>(type: Type) {
  return z.strictObject({ id: z.string().min(1), type, attributes: z.record(z.string(), z.unknown()).optional() });
}

/** The answer to a create, show or update: one resource, and what the request asked to include. */
export function resourceDocument<Resource extends z.ZodType, Included extends z.ZodType>(
  resource: Resource,
  included: Included,
) {
  return z.strictObject({ data: resource, included: z.array(included).optional() });
}

/** The answer to a list: one page of resources, what the request asked to include, and the pagination. */
export function listDocument<Resource extends z.ZodType, Included extends z.ZodType>(
  resource: Resource,
  included: Included,
) {
  return z.strictObject({
    data: z.array(resource),
    included: z.array(included).optional(),
    meta: z.strictObject({ pagination: paginationMeta }),
    links: paginationLinks,
  });
}
