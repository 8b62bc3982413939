import type { z } from "zod";
import { maxPageSize } from "../contract/policies";
import {
  lenientScopeTargetDocument,
  lenientScopeTargetListDocument,
  type ScopeTargetType,
} from "../contract/workspaces";
import { everyPage, toPagination } from "./pagination";
import { pathSegment } from "./paths";
import type { Transport } from "./transport";

/** A workspace or a project, as far as a policy set's scope needs it. */
export interface ScopeTarget {
  id: string;
  name: string;
  /** A workspace's project, where the service names one. */
  projectId?: string;
}

const scopeTargetOf = (item: z.output<typeof lenientScopeTargetDocument>["data"]): ScopeTarget => {
  const projectId = item.relationships?.project?.data?.id;
  return projectId
    ? { id: item.id, name: item.attributes.name, projectId }
    : { id: item.id, name: item.attributes.name };
};

/** Workspaces or projects (one class, two instances: `client.workspaces`, `client.projects`), read-only. */
export class ScopeTargetsApi {
  constructor(
    private readonly transport: Transport,
    private readonly type: ScopeTargetType,
  ) {}

  async read(id: string): Promise<ScopeTarget> {
    const response = await this.transport.json({
      method: "GET",
      path: `/api/v2/${this.type}/${pathSegment(this.type === "workspaces" ? "workspaceId" : "projectId", id)}`,
      schema: lenientScopeTargetDocument,
    });
    return scopeTargetOf(response.data);
  }

  /** Every workspace or project of the organization, page after page. */
  async *listAll(organization: string): AsyncGenerator<ScopeTarget> {
    yield* everyPage(async (pageNumber) => {
      const response: z.output<typeof lenientScopeTargetListDocument> = await this.transport.json({
        method: "GET",
        path: `/api/v2/organizations/${pathSegment("organization", organization)}/${this.type}`,
        query: { "page[number]": String(pageNumber), "page[size]": String(maxPageSize) },
        schema: lenientScopeTargetListDocument,
      });
      return {
        items: response.data.map(scopeTargetOf),
        pagination: toPagination(response.meta?.pagination, response.data.length),
      };
    });
  }
}
