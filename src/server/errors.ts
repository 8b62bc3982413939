import { type IncomingMessage, STATUS_CODES } from "node:http";

import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { z } from "zod";
import { type JsonApiErrorObject, jsonApiMediaType } from "../contract/jsonapi";
import { maxReportedErrors } from "../contract/limits";

/**
 * An answer other than success, carried to the error handler, which renders it as a JSON:API error document.
 * It lists the first `maxReportedErrors` problems and counts the rest: a body with 20,000 bad entries would
 * otherwise answer megabytes.
 */
export class ApiError extends Error {
  readonly errors: JsonApiErrorObject[];

  constructor(
    readonly status: number,
    errors: JsonApiErrorObject[],
  ) {
    const reported = errors.slice(0, maxReportedErrors);
    if (errors.length > maxReportedErrors) {
      reported.push({
        status: String(status),
        title: "more errors",
        detail: `and ${errors.length - maxReportedErrors} more: fix the ones listed and send again`,
      });
    }
    super(reported.map((error) => error.detail ?? error.title).join("; "));
    this.errors = reported;
  }

  /** Sent as `Retry-After` (a 503 that a client should retry). */
  retryAfterSeconds: number | undefined;

  static single(status: number, title: string, detail: string, source?: JsonApiErrorObject["source"]): ApiError {
    return new ApiError(status, [{ status: String(status), title, detail, ...(source ? { source } : {}) }]);
  }
}

/** Whether the client closed the connection before its request was whole. */
export function isClientAbort(request: IncomingMessage): boolean {
  return request.destroyed && !request.complete;
}

/** The one 404 for "missing" and "not yours": callers cannot tell the two apart (no existence leak). */
export function notFound(): ApiError {
  return ApiError.single(404, "not found", "The resource does not exist, or the token has no access to it.");
}

// Schema-level messages (e.g. "is required: say why ...") win over these; these replace zod's generic wording
// for the plain type and value checks.
/** A whole settings document that failed its schema (a seed, fault rules): every issue, at its path. */
export function invalidDocument(what: string, error: z.ZodError): Error {
  const problems = error.issues.map((issue) => `${issue.path.join(".") || "(root)"} ${issue.message}`);
  return new Error(`${what} is invalid: ${problems.join("; ")}`);
}

export const issueMessages: z.core.$ZodErrorMap = (issue) => {
  if (issue.input === undefined) return "is required";
  if (issue.code === "invalid_type") return `must be a ${issue.expected}, not ${describeValue(issue.input)}`;
  if (issue.code === "invalid_value") {
    return `must be one of ${issue.values.map((value) => JSON.stringify(value)).join(", ")}, not ${quoteValue(issue.input)}`;
  }
  return undefined;
};

/**
 * A sent value as a message shows it. Only scalars are written out: stringifying a structure could overflow the
 * stack on deep nesting (a 500), and JSON.stringify would show an overflowing number (1e400) as null.
 */
function quoteValue(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return describeValue(value);
}

function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return `a ${typeof value}`;
}

/** One 422 error object per zod issue, each pointing at the member that is wrong and saying how to fix it. */
export function validationError(issues: readonly z.core.$ZodIssue[]): ApiError {
  const errors = issues.flatMap((issue): JsonApiErrorObject[] => {
    const path = issue.path.map(String);
    if (issue.code === "unrecognized_keys") {
      return issue.keys.map((key) => invalidAttribute([...path, key], "is not a known member: remove it"));
    }
    return [invalidAttribute(path, issue.message)];
  });
  return new ApiError(422, errors);
}

export function invalidAttribute(path: readonly string[], message: string): JsonApiErrorObject {
  const member = path.at(-1) ?? "body";
  return {
    status: "422",
    title: "invalid attribute",
    detail: `${member} ${message}`,
    source: { pointer: path.length > 0 ? `/${path.join("/")}` : "" },
  };
}

/** Parses a request body with a client schema, turning a mismatch into a 422 naming each wrong member. */
export function parseBody<Schema extends z.ZodType>(schema: Schema, body: unknown): z.output<Schema> {
  const result = schema.safeParse(body, { error: issueMessages });
  if (!result.success) throw validationError(result.error.issues);
  return result.data;
}

/** The service's answer to a second resource of the same name (or version): 422 pointing at the attribute. */
export function alreadyTaken(attribute: "name" | "version"): ApiError {
  const label = attribute === "name" ? "Name" : "Version";
  return ApiError.single(422, "invalid attribute", `${label} has already been taken`, {
    pointer: `/data/attributes/${attribute}`,
  });
}

export function badParameter(parameter: string, detail: string): ApiError {
  return ApiError.single(400, "invalid query parameter", `${parameter} ${detail}`, { parameter });
}

const registryPrefix = "/api/registry/";

/** An error as the interface at `url` words them: JSON:API, or the registry's list of strings. */
export function errorDocument(url: string, error: ApiError): { mediaType: string; body: unknown } {
  if (url.startsWith(registryPrefix)) {
    return { mediaType: "application/json", body: { errors: [STATUS_CODES[error.status] ?? "Error"] } };
  }
  return { mediaType: jsonApiMediaType, body: { errors: error.errors } };
}

export function sendError(request: FastifyRequest, reply: FastifyReply, error: ApiError) {
  const { mediaType, body } = errorDocument(request.url, error);
  if (error.retryAfterSeconds !== undefined) reply.header("retry-after", String(error.retryAfterSeconds));
  return reply.code(error.status).type(mediaType).send(body);
}

/** Fastify's own errors (bad JSON, media type, size) become 4xx documents; anything else a 500 with no details. */
export function toApiError(error: FastifyError | ApiError, mediaTypeHint: string): ApiError {
  if (error instanceof ApiError) return error;
  // The service answers an overlong id like any unknown one; Fastify's 414 would echo the whole URL.
  if (error.code === "FST_ERR_MAX_PARAM_LENGTH") return notFound();
  if (error.code === "FST_ERR_CTP_INVALID_JSON_BODY") {
    return ApiError.single(
      400,
      "bad request",
      `The body is not valid JSON: send a JSON document with Content-Type ${mediaTypeHint}.`,
    );
  }
  const status = error.statusCode ?? 500;
  if (status === 415) {
    return ApiError.single(415, "unsupported media type", `Send the body with Content-Type ${mediaTypeHint}.`);
  }
  if (status === 413) return ApiError.single(413, "payload too large", error.message);
  if (status >= 400 && status < 500) {
    return ApiError.single(status, (STATUS_CODES[status] ?? "bad request").toLowerCase(), error.message);
  }
  return ApiError.single(500, "internal server error", "The server failed to handle the request.");
}

/**
 * Fastify's `frameworkErrors` option: the errors it meets before routing (a path with a malformed percent-encoding
 * such as `%ZZ`) would otherwise bypass the error handler and answer in Fastify's own shape.
 */
export function frameworkErrors(mediaTypeHint: string) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply) =>
    sendError(request, reply, toApiError(error, mediaTypeHint));
}

export function installErrorHandling(app: FastifyInstance, mediaTypeHint: string): void {
  app.setErrorHandler((error: FastifyError | ApiError, request, reply) => {
    const apiError = toApiError(error, mediaTypeHint);
    // A client that went away mid-body (an upload cut short) is no server error; the request log marks it.
    if (apiError.status >= 500 && !isClientAbort(request.raw))
      process.stderr.write(`${request.method} ${request.url}: ${error.message}\n`);
    return sendError(request, reply, apiError);
  });
}
