import type { FastifyInstance } from "fastify";
import { jsonApiMediaType } from "../../contract/jsonapi";
import { defaultPageSize, maxPageSize } from "../../contract/policies";
import {
  projectDocument,
  projectListDocument,
  type ScopeTargetResource,
  workspaceDocument,
  workspaceListDocument,
} from "../../contract/workspaces";
import { authorize } from "../auth";
import type { AppContext } from "../context";
import { notFound } from "../errors";
import { jsonApiEndpoint } from "../openapi";
import { paginationOf, type Query, requestedPage } from "../pagination";
import type { ScopeTargetRecord } from "../storage";

/**
 * Workspaces and projects, read-only: what a policy set's scope names. The seed makes them; the service's show and
 * list routes let a client check an id before it scopes a set to it, and find the ids of an organization.
 */
export function registerWorkspaceRoutes(app: FastifyInstance, { storage }: AppContext): void {
  const kinds = [
    { type: "workspaces", singular: "workspace", document: workspaceDocument, list: workspaceListDocument },
    { type: "projects", singular: "project", document: projectDocument, list: projectListDocument },
  ] as const;
  for (const { type, singular, document, list } of kinds) {
    const resource = (record: ScopeTargetRecord) =>
      ({
        id: record.id,
        type,
        attributes: { name: record.name },
        relationships: {
          organization: { data: { id: record.organization, type: "organizations" } },
          ...(record.projectId ? { project: { data: { id: record.projectId, type: "projects" } } } : {}),
        },
        links: { self: `/api/v2/${type}/${record.id}` },
      }) as ScopeTargetResource;

    app.get<{ Params: { organization: string }; Querystring: Query }>(
      `/api/v2/organizations/:organization/${type}`,
      jsonApiEndpoint({
        summary: `List an organization's ${type}, by name`,
        query: {
          "page[number]": "Page to return, from 1",
          "page[size]": `${type} per page; default ${defaultPageSize}, at most ${maxPageSize}`,
        },
        success: { status: 200, description: "One page", schema: list },
      }),
      async (request, reply) => {
        const { organization } = request.params;
        authorize(request, organization, "read");
        const page = requestedPage(request.query);
        const { items, totalCount } = storage.listScopeTargets(type, {
          organization,
          limit: page.pageSize,
          offset: page.offset,
        });
        const path = `/api/v2/organizations/${encodeURIComponent(organization)}/${type}`;
        return reply
          .type(jsonApiMediaType)
          .send({ data: items.map(resource), ...paginationOf(request, path, page, totalCount) });
      },
    );

    app.get<{ Params: { id: string } }>(
      `/api/v2/${type}/:id`,
      jsonApiEndpoint({
        summary: `Show a ${singular} by id`,
        success: { status: 200, description: `The ${singular}`, schema: document },
      }),
      async (request, reply) => {
        const record = storage.scopeTarget(type, request.params.id);
        if (!record) throw notFound();
        authorize(request, record.organization, "read");
        return reply.type(jsonApiMediaType).send({ data: resource(record) });
      },
    );
  }
}
