import { setTimeout as sleep } from "node:timers/promises";
import { Agent, type Dispatcher } from "undici";
import type { z } from "zod";
import { type FieldProblem, TfeApiError, TfeConnectionError, TfeValidationError } from "./errors";
import { type JsonApiErrorObject, jsonApiErrorDocument, jsonApiMediaType } from "./jsonapi";
import type { RateLimiter } from "./rate-limiter";
import { registryErrorDocument } from "./registry";

export interface RetryPolicy {
  /** Retries after the first attempt. */
  maxRetries: number;
  /** First backoff ceiling; it doubles with every retry (full jitter: the wait is random below it). */
  baseDelayMs: number;
  /** Largest single wait. */
  maxDelayMs: number;
  /** No retry starts once this much time has passed since the first attempt. */
  maxElapsedMs: number;
}

export const defaultRetryPolicy: RetryPolicy = {
  maxRetries: 6,
  baseDelayMs: 250,
  maxDelayMs: 10_000,
  maxElapsedMs: 60_000,
};

export interface TransportOptions {
  address: string;
  token: string;
  userAgent: string;
  timeoutMs: number;
  retry: RetryPolicy;
  rateLimiter: RateLimiter | null;
}

type Method = "GET" | "POST" | "PATCH" | "PUT" | "DELETE";

interface RequestSpec {
  method: Method;
  path: string;
  query?: Record<string, string> | undefined;
  /** A JSON:API document. */
  body?: unknown;
  rawBody?: Uint8Array;
  contentType?: string;
  accept?: string;
  /** Statuses retried for this request on top of 429, 502, 503 and 504. */
  retryStatuses?: number[];
}

interface JsonRequestSpec<S extends z.ZodType> extends RequestSpec {
  schema: S;
}

const retriedStatuses = new Set([429, 502, 503, 504]);
const idempotentMethods = new Set<Method>(["GET", "PUT", "PATCH", "DELETE"]);
// Failures in which no byte of the request reached the service: safe to retry even for POST.
const notSentCodes = new Set(["ECONNREFUSED", "UND_ERR_CONNECT_TIMEOUT", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH"]);
const maxRedirects = 3;

/**
 * HTTP for the client: keep-alive pools per origin (undici's Agent), a timeout per attempt, retries with
 * exponential backoff and full jitter, the service's rate-limit headers, and the client-side rate limiter.
 * The token lives in a private field: it is never logged, thrown, or serialized.
 */
export class Transport {
  readonly address: string;
  readonly #token: string;
  readonly #agent: Agent;
  readonly #options: Omit<TransportOptions, "token" | "address">;

  constructor(options: TransportOptions) {
    const { token, address, ...rest } = options;
    this.address = address.replace(/\/+$/, "");
    this.#token = token;
    this.#options = rest;
    this.#agent = new Agent({ keepAliveTimeout: 30_000, connections: 16 });
  }

  /** Parses a request document strictly, turning zod issues into errors that name the field and the fix. */
  validate<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
    const result = schema.safeParse(value);
    if (result.success) return result.data;
    throw new TfeValidationError(result.error.issues.map(issueToProblem));
  }

  /** Sends a request and parses the JSON response with `schema` (lenient: unknown members are dropped). */
  async json<S extends z.ZodType>(spec: JsonRequestSpec<S>): Promise<z.output<S>> {
    const { body, attempts } = await this.execute(spec);
    const text = await body.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new TfeApiError({
        status: 200,
        method: spec.method,
        path: spec.path,
        errors: [{ title: "response is not JSON", detail: this.redact(text.slice(0, 200)) }],
        attempts,
      });
    }
    const result = spec.schema.safeParse(parsed);
    if (!result.success) {
      throw new TfeApiError({
        status: 200,
        method: spec.method,
        path: spec.path,
        errors: result.error.issues.map((issue) => ({
          title: "unexpected response shape",
          detail: `${issue.path.join(".") || "(document)"}: ${issue.message}`,
        })),
        attempts,
      });
    }
    return result.data;
  }

  /** Sends a request whose response body does not matter. */
  async send(spec: RequestSpec): Promise<void> {
    const { body } = await this.execute(spec);
    await body.dump();
  }

  /**
   * GETs a path that redirects to a temporary URL and returns its bytes. The token goes only to the service's own
   * origin: a redirect to another origin is followed without the Authorization header.
   */
  async download(path: string): Promise<Buffer> {
    let target = new URL(path, this.address);
    for (let hop = 0; hop <= maxRedirects; hop++) {
      const sameOrigin = target.origin === new URL(this.address).origin;
      const { statusCode, headers, body } = await this.execute({
        method: "GET",
        path: target.pathname + target.search,
        origin: target.origin,
        authorize: sameOrigin,
        accept: "*/*",
        followRedirects: false,
      });
      if (statusCode >= 300 && statusCode < 400) {
        await body.dump();
        const location = headerValue(headers.location);
        if (!location) break;
        target = new URL(location, target);
        continue;
      }
      return Buffer.from(await body.arrayBuffer());
    }
    throw new TfeApiError({
      status: 310,
      method: "GET",
      path,
      errors: [{ title: "too many redirects", detail: `more than ${maxRedirects}, or one without a Location` }],
      attempts: 1,
    });
  }

  async close(): Promise<void> {
    await this.#agent.close();
  }

  private redact(text: string): string {
    return this.#token ? text.split(this.#token).join("[redacted]") : text;
  }

  private async execute(
    spec: RequestSpec & { origin?: string; authorize?: boolean; followRedirects?: boolean },
  ): Promise<Dispatcher.ResponseData & { attempts: number }> {
    const started = performance.now();
    const { retry, rateLimiter, timeoutMs, userAgent } = this.#options;
    const origin = spec.origin ?? this.address;
    const basePath = new URL(this.address).pathname.replace(/\/+$/, "");
    const requestPath =
      (spec.origin ? "" : basePath) + spec.path + (spec.query ? `?${new URLSearchParams(spec.query)}` : "");
    const headers: Record<string, string> = {
      "user-agent": userAgent,
      accept: spec.accept ?? jsonApiMediaType,
    };
    if (spec.authorize !== false) headers.authorization = `Bearer ${this.#token}`;
    let payload: Uint8Array | undefined;
    if (spec.rawBody) {
      payload = spec.rawBody;
      headers["content-type"] = spec.contentType ?? "application/octet-stream";
    } else if (spec.body !== undefined) {
      payload = Buffer.from(JSON.stringify(spec.body));
      headers["content-type"] = jsonApiMediaType;
    }
    const retryable = new Set([...retriedStatuses, ...(spec.retryStatuses ?? [])]);
    const idempotent = idempotentMethods.has(spec.method);

    for (let attempt = 1; ; attempt++) {
      if (rateLimiter && spec.authorize !== false) await rateLimiter.acquire();
      const elapsed = () => performance.now() - started;
      const mayRetry = (waitMs: number) => attempt <= retry.maxRetries && elapsed() + waitMs <= retry.maxElapsedMs;
      let response: Dispatcher.ResponseData;
      try {
        response = await this.#agent.request({
          origin,
          path: requestPath,
          method: spec.method,
          headers,
          body: payload,
          signal: AbortSignal.timeout(timeoutMs),
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
        });
      } catch (error) {
        const code = errorCode(error);
        const notSent = notSentCodes.has(code);
        const waitMs = backoff(retry, attempt);
        if ((idempotent || notSent) && mayRetry(waitMs)) {
          await sleep(waitMs);
          continue;
        }
        throw new TfeConnectionError(
          spec.method,
          spec.path,
          code,
          !notSent,
          attempt,
          this.redact(describeConnectionError(error, origin, timeoutMs)),
        );
      }

      const status = response.statusCode;
      if (retryable.has(status) && (idempotent || status === 429)) {
        const waitMs = serviceWait(response.headers) ?? backoff(retry, attempt);
        if (status === 429) rateLimiter?.pause(waitMs);
        if (mayRetry(waitMs)) {
          await response.body.dump();
          await sleep(waitMs);
          continue;
        }
      }
      if (status >= 400 || (status >= 300 && spec.followRedirects !== false)) {
        throw await this.apiError(spec, response, attempt, payload);
      }
      return Object.assign(response, { attempts: attempt });
    }
  }

  private async apiError(
    spec: RequestSpec,
    response: Dispatcher.ResponseData,
    attempts: number,
    payload: Uint8Array | undefined,
  ): Promise<TfeApiError> {
    const rawBody = this.redact(await response.body.text().catch(() => ""));
    let errors: JsonApiErrorObject[] = [];
    let unparsed: string | undefined = rawBody;
    try {
      const json: unknown = JSON.parse(rawBody);
      const jsonApi = jsonApiErrorDocument.safeParse(json);
      const registry = registryErrorDocument.safeParse(json);
      if (jsonApi.success) {
        errors = jsonApi.data.errors;
        unparsed = undefined;
      } else if (registry.success) {
        errors = registry.data.errors.map((title) => ({ title }));
        unparsed = undefined;
      }
    } catch {
      // Not JSON (a proxy or load balancer page): the message quotes the text instead.
    }
    return new TfeApiError({
      status: response.statusCode,
      method: spec.method,
      path: spec.path,
      errors,
      rawBody: unparsed,
      uploadBytes: spec.rawBody ? payload?.byteLength : undefined,
      attempts,
    });
  }
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** How long the service asked us to wait: `X-RateLimit-Reset` (seconds, fractional) or a proxy's `Retry-After`. */
function serviceWait(headers: Dispatcher.ResponseData["headers"]): number | undefined {
  const reset = Number.parseFloat(headerValue(headers["x-ratelimit-reset"]) ?? "");
  if (Number.isFinite(reset) && reset >= 0) return Math.ceil(reset * 1000);
  const retryAfter = headerValue(headers["retry-after"]);
  if (retryAfter === undefined) return undefined;
  const seconds = Number.parseFloat(retryAfter);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.ceil(seconds * 1000);
  const date = Date.parse(retryAfter);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

function backoff(policy: RetryPolicy, attempt: number): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  return Math.random() * ceiling;
}

function errorCode(error: unknown): string {
  const withCode = error as { code?: unknown; name?: unknown; cause?: { code?: unknown } };
  if (typeof withCode.cause?.code === "string") return withCode.cause.code;
  if (typeof withCode.code === "string") return withCode.code;
  if (withCode.name === "TimeoutError" || withCode.name === "AbortError") return "ETIMEDOUT";
  return "UNKNOWN";
}

function describeConnectionError(error: unknown, origin: string, timeoutMs: number): string {
  const code = errorCode(error);
  if (code === "ETIMEDOUT" || code.endsWith("_TIMEOUT")) return `no answer from ${origin} within ${timeoutMs} ms`;
  if (code === "ECONNREFUSED") return `${origin} refused the connection: is the address right and the service up?`;
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") return `cannot resolve the host of ${origin}`;
  return `connection to ${origin} failed: ${error instanceof Error ? error.message : String(error)}`;
}

function issueToProblem(issue: z.core.$ZodIssue): FieldProblem {
  const path = issue.path.map(String);
  const attributeIndex = path.lastIndexOf("attributes");
  const field =
    attributeIndex >= 0 && path.length > attributeIndex + 1 ? path.slice(attributeIndex + 1).join(".") : path.join(".");
  if (issue.code === "unrecognized_keys") {
    return { field: field || "(document)", message: `has unknown keys ${issue.keys.join(", ")}: remove them` };
  }
  return { field: field || "(document)", message: issue.message };
}
