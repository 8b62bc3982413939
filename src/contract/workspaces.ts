import { z } from "zod";
import { lenientPaginationLinks, lenientPaginationMeta, listDocument, resourceDocument } from "./jsonapi";

// Workspaces and projects, as far as policy sets need them: what a set's scope may name. The service's documents
// carry many more attributes; the contract holds the ones the local server sends, the client reads the name only.

export const scopeTargetTypes = ["workspaces", "projects"] as const;
export type ScopeTargetType = (typeof scopeTargetTypes)[number];

const relationship = <Type extends string>(type: Type) =>
  z.strictObject({ data: z.strictObject({ id: z.string(), type: z.literal(type) }) });

function scopeTargetResource<Type extends ScopeTargetType, Extra extends z.ZodRawShape>(type: Type, extra: Extra) {
  return z.strictObject({
    id: z.string(),
    type: z.literal(type),
    attributes: z.strictObject({ name: z.string().min(1) }),
    relationships: z.strictObject({ organization: relationship("organizations"), ...extra }),
    links: z.strictObject({ self: z.string() }),
  });
}

/** A workspace names its project (as the service's does): a set scoped to the project reaches it. */
export const workspaceResource = scopeTargetResource("workspaces", { project: relationship("projects").optional() });
export const projectResource = scopeTargetResource("projects", {});
export const workspaceDocument = resourceDocument(workspaceResource, z.never());
export const projectDocument = resourceDocument(projectResource, z.never());
export const workspaceListDocument = listDocument(workspaceResource, z.never());
export const projectListDocument = listDocument(projectResource, z.never());
export type ScopeTargetResource = z.infer<typeof workspaceResource> | z.infer<typeof projectResource>;

const lenientScopeTargetResource = z.object({
  id: z.string(),
  type: z.string(),
  attributes: z.object({ name: z.string() }),
  relationships: z
    .object({ project: z.object({ data: z.object({ id: z.string() }).nullish() }).nullish() })
    .passthrough()
    .optional(),
});
export const lenientScopeTargetDocument = z.object({ data: lenientScopeTargetResource });
export const lenientScopeTargetListDocument = z.object({
  data: z.array(lenientScopeTargetResource),
  meta: z.object({ pagination: lenientPaginationMeta.optional() }).passthrough().optional(),
  links: lenientPaginationLinks.optional(),
});
