import { z } from "zod";

/** Media type of every JSON:API request and response body. */
export const jsonApiMediaType = "application/vnd.api+json";

/** `{ id, type }` pointer to another resource, as in `relationships.*.data`. */
export const resourceIdentifier = z.object({ id: z.string(), type: z.string() });

/**
 * One error object. The service sends `status` as a string in most bodies and as a number in some, and may leave
 * out `detail` and `source` (or send them as null): all of it is optional here.
 */
export const jsonApiErrorObject = z.object({
  status: z.union([z.string(), z.number()]).nullish(),
  title: z.string().nullish(),
  detail: z.string().nullish(),
  source: z.object({ pointer: z.string().nullish(), parameter: z.string().nullish() }).nullish(),
});
export type JsonApiErrorObject = z.infer<typeof jsonApiErrorObject>;

export const jsonApiErrorDocument = z.object({ errors: z.array(jsonApiErrorObject) });

/** `meta.pagination` of a list response. `page-size` is usually, not always, present. */
export const paginationMeta = z.object({
  "current-page": z.number(),
  "prev-page": z.number().nullable().optional(),
  "next-page": z.number().nullable().optional(),
  "total-pages": z.number(),
  "total-count": z.number(),
  "page-size": z.number().optional(),
});
export type PaginationMeta = z.infer<typeof paginationMeta>;

export const paginationLinks = z
  .object({
    self: z.string(),
    first: z.string(),
    prev: z.string().nullable(),
    next: z.string().nullable(),
    last: z.string(),
  })
  .partial();
