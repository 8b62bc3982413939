import "../process/node-version";
import { setTimeout as sleep } from "node:timers/promises";
import tls from "node:tls";
import type { Agent, Dispatcher } from "undici";
import type { z } from "zod";
import { jsonApiMediaType, type LenientJsonApiErrorObject, lenientJsonApiErrorDocument } from "../contract/jsonapi";
import { lenientRegistryErrorDocument } from "../contract/registry";
import { keepCompiledCode } from "../process/compile-cache";
import { organizationOfPath, summarizeText, TfeApiError, TfeCancelledError, TfeConnectionError } from "./errors";
import type { RateLimiter } from "./rate-limiter";
import { ServerClock } from "./server-clock";

export interface RetryPolicy {
  /** Retries after the first attempt. */
  maxRetries: number;
  /** First backoff ceiling; it doubles with every retry (full jitter: the wait is random below it). */
  baseDelayMs: number;
  /** Largest single wait. */
  maxDelayMs: number;
  /** No retry starts once this much time has passed since the first attempt. */
  maxElapsedMs: number;
  /**
   * The retry budget, instead of `maxElapsedMs`, of a service that has not answered once in this process and
   * refuses the connection (or none can be made): a wrong or moved address does not start answering, so a command
   * fails in seconds naming it, not after a minute of backoff. A service that answered before keeps the full budget.
   */
  firstContactMs: number;
}

export const defaultRetryPolicy: RetryPolicy = {
  maxRetries: 6,
  baseDelayMs: 250,
  maxDelayMs: 10_000,
  maxElapsedMs: 60_000,
  firstContactMs: 3_000,
};

export interface TransportOptions {
  address: string;
  token: string;
  userAgent: string;
  timeoutMs: number;
  retry: RetryPolicy;
  rateLimiter: RateLimiter | null;
  /** PEM certificates trusted besides Node's own. */
  caCertificate?: string | undefined;
  /** Where the address came from (`stack config tfe:address`), named when it cannot be reached. */
  addressSource?: string | undefined;
  /** Stops the work when it aborts (TfeClientOptions.signal). */
  signal?: AbortSignal | undefined;
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
  /**
   * Retried like GET, PUT, PATCH and DELETE although it is a POST: one whose repeat changes nothing (joining a
   * relationship a second time), so a lost answer or a 5xx costs a retry, not the run.
   */
  idempotent?: boolean;
}

interface JsonRequestSpec<S extends z.ZodType> extends RequestSpec {
  schema: S;
}

const retriedStatuses = new Set([429, 502, 503, 504]);
/** Requests that change nothing on the service: cut off when the run is cancelled. */
const idempotentReads = new Set<Method>(["GET"]);
const idempotentMethods = new Set<Method>(["GET", "PUT", "PATCH", "DELETE"]);
// Failures in which no byte of the request reached the service: safe to retry even for POST.
const notSentCodes = new Set(["ECONNREFUSED", "UND_ERR_CONNECT_TIMEOUT", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"]);
// Failures worth another attempt of an idempotent request. Anything else (a bad argument, an unknown host) would
// fail the same way again, so it is reported at once instead of spending the retry budget.
const transientCodes = new Set([
  ...notSentCodes,
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "UND_ERR_SOCKET",
  "UND_ERR_CLOSED",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
]);
const maxRedirects = 3;

interface Response {
  statusCode: number;
  headers: Dispatcher.ResponseData["headers"];
  body: Buffer;
  attempts: number;
  /** When the answer came (ServerClock.now()). */
  receivedAt: number;
}

interface ExecuteSpec extends RequestSpec {
  /** What errors call the request, where `path` would say more than they should (a signed URL's query). */
  reportedPath?: string;
  /** Another origin to send `path` to (a redirect target); it never gets the token. */
  origin?: string;
  /** Whether a 3xx answer is returned to the caller rather than thrown. */
  acceptRedirects?: boolean;
  /** Never send the token, even to the service's own origin. */
  withoutToken?: boolean;
}

/**
 * HTTP for the client: keep-alive pools per origin (undici's Agent), a timeout per attempt, retries with
 * exponential backoff and full jitter, the service's rate-limit headers, and the client-side rate limiter.
 * The token lives in a private field: it is never logged, thrown, or serialized.
 */
export class Transport {
  readonly address: string;
  readonly #token: string;
  readonly #authorization: string;
  readonly #origin: string;
  readonly #basePath: string;
  readonly #agent: Agent;
  readonly #options: Omit<TransportOptions, "token" | "address">;
  /** Whether the service's origin has answered once (any status): see {@link RetryPolicy.firstContactMs}. */
  #answered = false;
  /** What every answer of the service's own origin tells of its clock (see server-clock.ts). */
  readonly #clock = new ServerClock();
  #sent = 0;
  /**
   * Organizations a read with this token found (an answer below 300 to a GET of or under one): a later 404 under one
   * of them is not the organization's (see TfeApiError.organizationNotFound).
   */
  readonly #readableOrganizations = new Set<string>();

  /** Requests sent so far, every attempt counted: what a read bounded by a request budget counts. */
  get requestsSent(): number {
    return this.#sent;
  }

  constructor(options: TransportOptions) {
    const { token, address, ...rest } = options;
    const url = new URL(address);
    this.#origin = url.origin;
    this.#basePath = url.pathname.replace(/\/+$/, "");
    this.address = this.#origin + this.#basePath;
    this.#token = token;
    this.#authorization = `Bearer ${token}`;
    this.#options = rest;
    // A `ca` replaces Node's trusted certificates: keep them (with NODE_EXTRA_CA_CERTS) and add the given ones.
    const ca = rest.caCertificate ? { ca: [...defaultCertificates(), rest.caCertificate] } : {};
    // undici loads with the first client rather than with the library: a preview that sends no request (a PolicySet
    // whose folder did not change) does not pay its start-up, 70 ms of every such command.
    const { Agent: UndiciAgent } = require("undici") as typeof import("undici");
    keepCompiledCode();
    this.#agent = new UndiciAgent({
      keepAliveTimeout: 30_000,
      connections: 16,
      connect: { timeout: rest.timeoutMs, ...ca },
    });
  }

  /** Sends a request and parses the JSON response with `schema` (lenient: unknown members are dropped). */
  async json<S extends z.ZodType>(spec: JsonRequestSpec<S>): Promise<z.output<S>> {
    const { body, attempts, statusCode } = await this.execute(spec);
    const text = body.toString("utf8");
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new TfeApiError({
        status: statusCode,
        method: spec.method,
        path: spec.path,
        errors: [{ title: "the response is not JSON", detail: summarizeText(this.redact(text)) }],
        attempts,
      });
    }
    const result = spec.schema.safeParse(parsed);
    if (!result.success) {
      throw new TfeApiError({
        status: statusCode,
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

  /**
   * Sends a request whose response body does not matter; answers when the service says it answered (its `Date`
   * header, to the second), undefined where it sent none.
   */
  async send(spec: RequestSpec): Promise<{ answeredAt: Date | undefined; settledBy: Date | undefined }> {
    const { headers, receivedAt } = await this.execute(spec);
    const date = Date.parse(headerValue(headers.date) ?? "");
    if (Number.isNaN(date)) return { answeredAt: undefined, settledBy: undefined };
    return { answeredAt: new Date(date), settledBy: new Date(this.#clock.latestAt(receivedAt, date)) };
  }

  /**
   * GETs a path that redirects to a temporary URL and returns its bytes. The token goes only to the service's own
   * origin: a redirect to another origin is followed without the Authorization header.
   */
  async download(path: string): Promise<Buffer> {
    let target = new URL(this.#basePath + path, this.#origin);
    for (let hop = 0; hop <= maxRedirects; hop++) {
      const sameOrigin = target.origin === this.#origin;
      const { statusCode, headers, body } = await this.execute({
        method: "GET",
        path: target.pathname + target.search,
        // The query of a temporary URL is its signature: a credential while it lasts, so errors leave it out.
        reportedPath: hop === 0 ? path : sameOrigin ? target.pathname : target.origin + target.pathname,
        origin: target.origin,
        accept: "*/*",
        acceptRedirects: true,
      });
      if (statusCode < 300 || statusCode >= 400) return body;
      const location = headerValue(headers.location);
      if (!location) break;
      target = new URL(location, target);
    }
    throw new TfeApiError({
      status: 310,
      method: "GET",
      path,
      errors: [{ title: "too many redirects", detail: `more than ${maxRedirects}, or one without a Location` }],
      attempts: 1,
    });
  }

  /**
   * PUTs bytes to a link the service handed out (a policy set version's upload): the link is its own credential,
   * so the token is not sent there, not even when the link is on the service's own origin.
   */
  async putToLink(link: string, bytes: Uint8Array, what: string): Promise<void> {
    const target = new URL(link, this.#origin);
    await this.execute({
      method: "PUT",
      path: target.pathname + target.search,
      // The query of a signed link is a credential while it lasts: errors name the upload instead.
      reportedPath: what,
      origin: target.origin,
      withoutToken: true,
      rawBody: bytes,
      contentType: "application/octet-stream",
    });
  }

  async close(): Promise<void> {
    await this.#agent.close();
  }

  private redact(text: string): string {
    return this.#token ? text.split(this.#token).join("[redacted]") : text;
  }

  private async execute(spec: ExecuteSpec): Promise<Response> {
    const started = performance.now();
    const { retry, timeoutMs, userAgent } = this.#options;
    const origin = spec.origin ?? this.#origin;
    const authorize = origin === this.#origin && !spec.withoutToken;
    // The service's limit counts requests to its own origin, not to the one serving downloads.
    const rateLimiter = authorize ? this.#options.rateLimiter : null;
    const requestPath =
      (spec.origin ? "" : this.#basePath) + spec.path + (spec.query ? `?${new URLSearchParams(spec.query)}` : "");
    const headers: Record<string, string> = {
      "user-agent": userAgent,
      accept: spec.accept ?? jsonApiMediaType,
    };
    if (authorize) headers.authorization = this.#authorization;
    let payload: Uint8Array | undefined;
    if (spec.rawBody) {
      payload = spec.rawBody;
      headers["content-type"] = spec.contentType ?? "application/octet-stream";
    } else if (spec.body !== undefined) {
      payload = Buffer.from(JSON.stringify(spec.body));
      headers["content-type"] = jsonApiMediaType;
    }
    const idempotent = spec.idempotent === true || idempotentMethods.has(spec.method);

    // A 429 is the service saying when to come back, not a failure: only maxElapsedMs bounds those retries. Counted
    // against maxRetries, several processes sharing a token ran one request's retries out on 429s alone.
    let rateLimited = 0;
    const cancel = this.#options.signal;
    const cancelled = () => new TfeCancelledError(spec.method, spec.reportedPath ?? spec.path);
    // A wait between attempts ends at once when the run is cancelled.
    const wait = (waitMs: number) => sleep(waitMs, undefined, { signal: cancel }).catch(() => undefined);
    for (let attempt = 1; ; attempt++) {
      await rateLimiter?.acquire();
      if (cancel?.aborted) throw cancelled();
      const mayRetry = (waitMs: number) =>
        attempt - rateLimited <= retry.maxRetries && performance.now() - started + waitMs <= retry.maxElapsedMs;
      let response: Omit<Response, "attempts">;
      try {
        // undici's timers bound the wait for the answer and every stall of its body; the signal bounds the whole
        // attempt, so a body that trickles in a byte at a time cannot hold it past timeoutMs either. A stalled or
        // trickling body is retried like a stalled answer.
        this.#sent++;
        const sentAt = ServerClock.now();
        const attemptTimeout = AbortSignal.timeout(timeoutMs);
        const {
          statusCode,
          headers: responseHeaders,
          body,
        } = await this.#agent.request({
          origin,
          path: requestPath,
          method: spec.method,
          headers,
          body: payload,
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
          // A read is cut off when the run is cancelled; a write is let finish, so that its answer is recorded.
          signal:
            idempotentReads.has(spec.method) && cancel ? AbortSignal.any([attemptTimeout, cancel]) : attemptTimeout,
        });
        const receivedAt = ServerClock.now();
        const dateMs = Date.parse(headerValue(responseHeaders.date) ?? "");
        if (origin === this.#origin && !Number.isNaN(dateMs)) this.#clock.observe(sentAt, receivedAt, dateMs);
        response = { statusCode, headers: responseHeaders, body: Buffer.from(await body.arrayBuffer()), receivedAt };
      } catch (error) {
        rateLimiter?.answered(undefined);
        if (cancel?.aborted && idempotentReads.has(spec.method)) throw cancelled();
        const code = errorCode(error);
        const notSent = notSentCodes.has(code);
        const waitMs = backoff(retry, attempt);
        const unreached = notSent && !this.#answered && origin === this.#origin;
        const withinBudget = unreached
          ? performance.now() - started + waitMs <= retry.firstContactMs && mayRetry(waitMs)
          : mayRetry(waitMs);
        if ((notSent || (idempotent && transientCodes.has(code))) && withinBudget) {
          await wait(waitMs);
          continue;
        }
        throw new TfeConnectionError(
          spec.method,
          spec.reportedPath ?? spec.path,
          code,
          !notSent,
          attempt,
          this.redact(
            describeConnectionError(
              error,
              origin,
              timeoutMs,
              origin === this.#origin ? this.#options.addressSource : "",
            ),
          ),
        );
      }
      if (origin === this.#origin) this.#answered = true;

      rateLimiter?.answered(Number.parseFloat(headerValue(response.headers["x-ratelimit-limit"]) ?? ""));
      const status = response.statusCode;
      if ((retriedStatuses.has(status) || spec.retryStatuses?.includes(status)) && (idempotent || status === 429)) {
        const waitMs = retryWait(
          status,
          response.headers,
          backoff(retry, attempt),
          origin === this.#origin ? this.#clock.earliestAt(response.receivedAt) : response.receivedAt,
        );
        if (status === 429) {
          rateLimiter?.rejected(waitMs);
          rateLimited++;
        }
        if (mayRetry(waitMs)) {
          await wait(waitMs);
          continue;
        }
      }
      if (status >= 400 || (status >= 300 && !spec.acceptRedirects)) {
        throw this.apiError(spec, response, attempt, payload);
      }
      const organization = origin === this.#origin ? organizationOfPath(spec.path) : undefined;
      if (spec.method === "GET" && status < 300 && organization !== undefined) {
        this.#readableOrganizations.add(organization);
      }
      return { ...response, attempts: attempt };
    }
  }

  private apiError(
    spec: ExecuteSpec,
    response: Omit<Response, "attempts">,
    attempts: number,
    payload: Uint8Array | undefined,
  ): TfeApiError {
    const rawBody = this.redact(response.body.toString("utf8"));
    let errors: LenientJsonApiErrorObject[] = [];
    let unparsed: string | undefined = rawBody;
    try {
      const json: unknown = JSON.parse(rawBody);
      const jsonApi = lenientJsonApiErrorDocument.safeParse(json);
      const registry = lenientRegistryErrorDocument.safeParse(json);
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
      path: spec.reportedPath ?? spec.path,
      errors,
      rawBody: unparsed,
      uploadBytes: spec.rawBody ? payload?.byteLength : undefined,
      attempts,
      organizationReadable: this.#readableOrganizations.has(organizationOfPath(spec.path) ?? ""),
    });
  }
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/**
 * How long to wait before retrying `status`. `X-RateLimit-Reset` speaks of the rate limit only: a 5xx that carries it
 * (possibly 0) still backs off, or a failing service would be asked again at once; a proxy's `Retry-After` is
 * honoured as a floor. `answererNow`: the earliest the answering side's clock read when the answer came, on this
 * process's clock's scale, for a `Retry-After` date.
 */
function retryWait(
  status: number,
  headers: Dispatcher.ResponseData["headers"],
  backoffMs: number,
  answererNow: number,
): number {
  if (status === 429) return rateLimitWait(headers) ?? retryAfterWait(headers, answererNow) ?? backoffMs;
  return Math.max(retryAfterWait(headers, answererNow) ?? 0, backoffMs);
}

function rateLimitWait(headers: Dispatcher.ResponseData["headers"]): number | undefined {
  const reset = Number.parseFloat(headerValue(headers["x-ratelimit-reset"]) ?? "");
  return Number.isFinite(reset) && reset >= 0 ? Math.ceil(reset * 1000) : undefined;
}

/**
 * A `Retry-After` in seconds, or as a date: a date on the clock of whoever answered, so it is measured from
 * `answererNow` (that clock, as its answers' `Date` headers bound it) and not from this machine's clock, which may
 * be minutes off: ahead, "in 1 s" would read as already past; behind, as minutes away.
 */
function retryAfterWait(headers: Dispatcher.ResponseData["headers"], answererNow: number): number | undefined {
  const retryAfter = headerValue(headers["retry-after"]);
  if (retryAfter === undefined) return undefined;
  const seconds = Number.parseFloat(retryAfter);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.ceil(seconds * 1000);
  const date = Date.parse(retryAfter);
  return Number.isNaN(date) ? undefined : Math.max(0, date - answererNow);
}

function backoff(policy: RetryPolicy, attempt: number): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  return Math.random() * ceiling;
}

function errorCode(error: unknown): string {
  const withCode = error as { code?: unknown; name?: unknown; cause?: { code?: unknown } };
  // The attempt's signal (AbortSignal.timeout) ran out: a DOMException, whose numeric code says nothing.
  if (withCode.name === "TimeoutError") return "ETIMEDOUT";
  if (typeof withCode.cause?.code === "string") return withCode.cause.code;
  if (typeof withCode.code === "string") return withCode.code;
  return "UNKNOWN";
}

/** What Node trusts by default; `getCACertificates` (Node 22.15+) includes NODE_EXTRA_CA_CERTS. */
function defaultCertificates(): readonly string[] {
  return typeof tls.getCACertificates === "function" ? tls.getCACertificates("default") : tls.rootCertificates;
}

// OpenSSL's verdicts on a certificate chain it does not trust.
const untrustedCertificateCodes = new Set([
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "CERT_UNTRUSTED",
]);

function describeConnectionError(
  error: unknown,
  address: string,
  timeoutMs: number,
  addressSource: string | undefined,
): string {
  const code = errorCode(error);
  // The address and where it came from: a moved server, or a setting recorded earlier, shows at once.
  const origin = addressSource ? `${address} (the address from ${addressSource})` : address;
  if (untrustedCertificateCodes.has(code)) {
    return (
      `the certificate of ${origin} is not trusted by this process: trust its CA with tfe:caCertificate or ` +
      "TFE_CA_CERTIFICATE (a PEM file), or NODE_EXTRA_CA_CERTS when the process starts"
    );
  }
  if (code.endsWith("TIMEDOUT") || code.endsWith("_TIMEOUT")) return `no answer from ${origin} within ${timeoutMs} ms`;
  if (code === "ECONNREFUSED") return `${origin} refused the connection: is the address right and the service up?`;
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") return `cannot resolve the host of ${origin}`;
  return `connection to ${origin} failed: ${error instanceof Error ? error.message : String(error)}`;
}
