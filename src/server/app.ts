import Fastify, { type FastifyInstance } from "fastify";
import { jsonApiMediaType } from "../contract/jsonapi";
import { authenticate } from "./auth";
import type { AppContext } from "./context";
import { ApiError, frameworkErrors, installErrorHandling, invalidAttribute, isClientAbort, sendError } from "./errors";
import { installFaultHooks, wasResetByFault } from "./fault-hooks";
import { buildOpenApiDocument, type DocumentedRoute, jsonApiErrors } from "./openapi";
import { installBodyTimeout } from "./request-bodies";
import { registerDiscoveryRoute } from "./routes/discovery";
import { registerModuleVersionRoutes } from "./routes/module-versions";
import { registerPolicyRoutes } from "./routes/policies";
import { registerPolicySetRoutes } from "./routes/policy-sets";
import { registerRegistryRoutes } from "./routes/registry";
import { registerRunPages } from "./routes/run-pages";
import { registerRunRoutes } from "./routes/runs";
import { registerUploadRoute } from "./routes/upload";
import { registerVcsRoutes } from "./routes/vcs";
import { registerWorkspaceRoutes } from "./routes/workspaces";

/** Largest JSON body accepted; policy code goes through the upload route, which has its own limit. */
export const maxJsonBodyBytes = 1024 * 1024;
/** What `TFP-API-Version` reports: the API version whose behaviour this server follows. */
export const apiVersion = "2.6";

/** Default of `bodyTimeoutMs`: a 10 MB upload at 1 Mbit/s arrives in well under a minute and a half. */
export const defaultBodyTimeoutMs = 90_000;

/**
 * Walks a parsed body (without recursion: nesting can be deep) for text holding a lone UTF-16 surrogate, which
 * SQLite would store changed; answers the JSON pointer of the first one.
 */
// In a `u` pattern a surrogate pair is one code point, so this range matches only a surrogate without its pair.
const loneSurrogate = /[\uD800-\uDFFF]/u;

function loneSurrogatePath(value: unknown): string[] | undefined {
  const pending: { value: unknown; path: string[] }[] = [{ value, path: [] }];
  for (let item = pending.pop(); item !== undefined; item = pending.pop()) {
    if (typeof item.value === "string") {
      if (loneSurrogate.test(item.value)) return item.path;
    } else if (item.value !== null && typeof item.value === "object") {
      for (const [key, member] of Object.entries(item.value)) {
        if (loneSurrogate.test(key)) return [...item.path, key];
        pending.push({ value: member, path: [...item.path, key] });
      }
    }
  }
  return undefined;
}

/**
 * Query strings as the service (a Rails application) reads them: a parameter given twice counts with its last
 * value. Every value is then a string, so a repeated `search[name]` cannot reach a handler as an array.
 */
function lastValueQuery(query: string): Record<string, string> {
  const parameters: Record<string, string> = Object.create(null);
  for (const [name, value] of new URLSearchParams(query)) parameters[name] = value;
  return parameters;
}

function needsToken(url: string): boolean {
  return url.startsWith("/api/") && !url.startsWith("/api/openapi.json");
}

export function buildApp(context: AppContext): FastifyInstance {
  const app = Fastify({
    ...(context.tls ? { https: context.tls } : {}),
    logger: false,
    bodyLimit: maxJsonBodyBytes,
    forceCloseConnections: true,
    routerOptions: { querystringParser: lastValueQuery },
    frameworkErrors: frameworkErrors(jsonApiMediaType),
  });
  const documented: DocumentedRoute[] = [];
  app.decorateRequest("principal", null);
  app.addHook("onRoute", (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const doc = route.config?.doc;
    // Fastify adds a HEAD twin to every GET; the document describes the GETs.
    for (const method of methods) {
      if (method === "HEAD") continue;
      if (doc) documented.push({ method, url: route.url, doc });
      context.servedRoutes?.push({ origin: "api", method, url: route.url });
    }
  });

  app.removeContentTypeParser(["text/plain", "application/json"]);
  const parseJson = app.getDefaultJsonParser("error", "error");
  // go-tfe (and so the Terraform provider) sends the JSON:API Content-Type on every DELETE, with no body, and the
  // service accepts it: an empty body is no body, and a route that needs one answers 422 for its absence.
  app.addContentTypeParser(
    ["application/json", jsonApiMediaType],
    { parseAs: "string" },
    (request, body: string, done) => {
      if (body === "") return done(null, undefined);
      parseJson(request, body, (error, parsed) => {
        if (error) return done(error, undefined);
        // A lone surrogate can only arrive escaped (\uD800): decoding UTF-8 never yields one.
        const path = /\\u[dD][89a-fA-F]/.test(body) ? loneSurrogatePath(parsed) : undefined;
        if (path) {
          const problem = "holds a lone UTF-16 surrogate (half of a pair, \\uD800-\\uDFFF): send valid Unicode text";
          return done(new ApiError(422, [invalidAttribute(path, problem)]), undefined);
        }
        done(null, parsed);
      });
    },
  );
  installErrorHandling(app, jsonApiMediaType);

  installBodyTimeout(app, context.bodyTimeoutMs);

  // Node caches its Date header for up to a second, refreshed by a timer that a busy event loop delays: an answer
  // could then carry the second before the changes it made. Clients bound a change's updated-at by the answer's Date,
  // as they may with the service's, so each answer says the time it was sent.
  app.addHook("onSend", async (_request, reply, payload) => {
    reply.header("date", new Date().toUTCString());
    return payload;
  });

  app.addHook("onRequest", async (request, reply) => {
    const started = performance.now();
    reply.raw.on("close", () =>
      context.log.add({
        origin: "api",
        method: request.method,
        path: request.url,
        route: request.routeOptions.url,
        status: reply.raw.writableFinished ? reply.statusCode : 0,
        ...(!wasResetByFault(request.raw) && isClientAbort(request.raw) ? { clientAborted: true } : {}),
        durationMs: performance.now() - started,
        at: new Date().toISOString(),
      }),
    );
    // Advertised only where enforced: clients pace to this header, so a limit that is not there would slow them
    // for nothing. The service always enforces and sends it (30); `--rate-limit 30` reproduces that.
    if (context.rateLimit) reply.header("x-ratelimit-limit", String(context.rateLimit.limit));
    // The route the router matched, not the raw path: `/%61pi/v2/...` reaches an /api/ route too, and must take
    // its token and its share of the rate limit like any other spelling.
    if (needsToken(request.routeOptions.url ?? request.url)) {
      request.principal = authenticate(context.storage, request.headers.authorization);
      const verdict = context.rateLimit?.take(request.principal.token);
      if (verdict && !verdict.allowed) {
        reply.header("x-ratelimit-reset", verdict.resetSeconds.toFixed(3));
        throw ApiError.single(429, "too many requests", "Rate limit exceeded: wait X-RateLimit-Reset seconds.");
      }
    }
  });
  installFaultHooks(app, context.faults);

  app.setNotFoundHandler((request, reply) =>
    sendError(
      request,
      reply,
      ApiError.single(
        404,
        "not found",
        `No route ${request.method} ${request.url.split("?")[0]}: see /api/openapi.json.`,
      ),
    ),
  );

  app.get(
    "/api/v2/ping",
    {
      config: {
        doc: {
          summary: "Liveness; carries TFP-API-Version, and X-RateLimit-Limit when a limit is enforced",
          responses: { 204: { description: "Alive" }, ...jsonApiErrors(401, 429) },
        },
      },
    },
    async (_request, reply) => reply.code(204).header("tfp-api-version", apiVersion).send(),
  );

  registerPolicyRoutes(app, context);
  registerPolicySetRoutes(app, context);
  registerUploadRoute(app, context);
  registerModuleVersionRoutes(app, context);
  registerRegistryRoutes(app, context);
  registerWorkspaceRoutes(app, context);
  registerRunRoutes(app, context);
  registerRunPages(app, context);
  registerVcsRoutes(app, context);
  registerDiscoveryRoute(app);

  let openApiDocument: Record<string, unknown> | undefined;
  app.get(
    "/api/openapi.json",
    {
      config: {
        doc: {
          summary: "This document",
          authenticated: false,
          responses: { 200: { description: "OpenAPI 3.1 document", mediaType: "application/json" } },
        },
      },
    },
    async (_request, reply) => {
      openApiDocument ??= buildOpenApiDocument(documented, context.version);
      return reply.type("application/json").send(openApiDocument);
    },
  );
  return app;
}
