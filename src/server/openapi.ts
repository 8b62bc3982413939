import { z } from "zod";
import { jsonApiErrorDocument, jsonApiMediaType } from "../contract/jsonapi";
import { registryErrorDocument } from "../contract/registry";

interface Content {
  mediaType: string;
  /** Absent for raw bytes. */
  schema?: z.ZodType;
}

/** What the OpenAPI document says about one route; attached to the route itself, so the two cannot drift. */
export interface EndpointDoc {
  summary: string;
  query?: Record<string, string>;
  body?: Content;
  responses: Record<number, { description: string } & Partial<Content>>;
  /** False for the few routes that need no token. */
  authenticated?: boolean;
}

declare module "fastify" {
  interface FastifyContextConfig {
    doc?: EndpointDoc;
  }
}

export interface DocumentedRoute {
  method: string;
  url: string;
  doc: EndpointDoc;
}

const errorDescriptions: Record<number, string> = {
  400: "Malformed JSON, query parameter or path encoding",
  401: "No or unknown token",
  403: "Expired or forged signature; a local route called from off this machine",
  404: "Not found, or the token may not see it",
  408: "The request body did not arrive in time (bodyTimeoutMs); the connection closes",
  409: "The body's data.id names another resource than the path",
  413: "Body too large",
  415: "Wrong Content-Type",
  422: "Invalid body; each error's source.pointer names the member",
  429: "Rate limited; see X-RateLimit-Reset",
  500: "Failure while making the change",
  503: "Failure while making the change, or busy; try again (Retry-After)",
};

/** The JSON:API error responses of the given statuses, for an `EndpointDoc`. */
export function jsonApiErrors(...statuses: number[]): EndpointDoc["responses"] {
  return Object.fromEntries(
    statuses.map((status) => [
      status,
      { description: errorDescriptions[status] ?? "Error", mediaType: jsonApiMediaType, schema: jsonApiErrorDocument },
    ]),
  );
}

/**
 * Route options documenting a JSON:API endpoint. Every such endpoint can answer 400 (a path that does not decode),
 * 401, 404 and 429; one with a request body also 408, 413, 415 and 422; `moreErrors` adds the rest.
 */
export function jsonApiEndpoint(endpoint: {
  summary: string;
  request?: z.ZodType;
  query?: Record<string, string>;
  success: { status: number; description: string; schema?: z.ZodType };
  moreErrors?: number[];
}): { config: { doc: EndpointDoc } } {
  const { summary, request, query, success, moreErrors = [] } = endpoint;
  const errors = [...new Set([400, 401, 404, 429, ...(request ? [408, 413, 415, 422] : []), ...moreErrors])];
  const doc: EndpointDoc = {
    summary,
    responses: {
      [success.status]: {
        description: success.description,
        ...(success.schema ? { mediaType: jsonApiMediaType, schema: success.schema } : {}),
      },
      ...jsonApiErrors(...errors),
    },
  };
  if (query) doc.query = query;
  if (request) doc.body = { mediaType: jsonApiMediaType, schema: request };
  return { config: { doc } };
}

/** Route options documenting a read of the registry interface: plain JSON, errors as `{"errors": ["Not Found"]}`. */
export function registryEndpoint(summary: string, schema: z.ZodType): { config: { doc: EndpointDoc } } {
  const errors = Object.fromEntries(
    [400, 401, 404, 429].map((status) => [
      status,
      {
        description: errorDescriptions[status] ?? "Error",
        mediaType: "application/json",
        schema: registryErrorDocument,
      },
    ]),
  );
  return {
    config: {
      doc: { summary, responses: { 200: { description: "Found", mediaType: "application/json", schema }, ...errors } },
    },
  };
}

function jsonSchema(schema: z.ZodType, io: "input" | "output"): Record<string, unknown> {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: "any" });
  return rest;
}

function content({ mediaType, schema }: Partial<Content>, io: "input" | "output") {
  if (!mediaType) return undefined;
  return {
    [mediaType]: {
      schema: schema ? jsonSchema(schema, io) : { type: "string", contentMediaType: "application/octet-stream" },
    },
  };
}

/** OpenAPI 3.1: request bodies from the client's request schemas, responses from its response schemas. */
export function buildOpenApiDocument(routes: readonly DocumentedRoute[], version: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const { method, url, doc } of routes) {
    const pathParameters = [...url.matchAll(/:([A-Za-z]+)/g)].map((match) => ({
      name: match[1],
      in: "path",
      required: true,
      schema: { type: "string" },
    }));
    const queryParameters = Object.entries(doc.query ?? {}).map(([name, description]) => ({
      name,
      in: "query",
      required: false,
      description,
      schema: { type: "string" },
    }));
    const operation: Record<string, unknown> = {
      summary: doc.summary,
      parameters: [...pathParameters, ...queryParameters],
      responses: Object.fromEntries(
        Object.entries(doc.responses).map(([status, response]) => [
          status,
          { description: response.description, content: content(response, "output") },
        ]),
      ),
    };
    if (doc.body) operation.requestBody = { required: true, content: content(doc.body, "input") };
    if (doc.authenticated === false) operation.security = [];
    const path = url.replace(/:([A-Za-z]+)/g, "{$1}");
    paths[path] = { ...paths[path], [method.toLowerCase()]: operation };
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "tfe-governance-server: policies and module version deprecation",
      version,
      description: "Local implementation of the HCP Terraform / Terraform Enterprise policy and deprecation API.",
    },
    components: { securitySchemes: { bearer: { type: "http", scheme: "bearer" } } },
    security: [{ bearer: [] }],
    paths,
  };
}
