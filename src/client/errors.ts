import type { LenientJsonApiErrorObject as JsonApiErrorObject } from "../contract/jsonapi";

/** Base class of every error the client throws. */
export class TfeError extends Error {
  override name = "TfeError";
}

export interface FieldProblem {
  /** The input that is wrong, as the caller named it (e.g. `enforcementLevel`, `name`). */
  field: string;
  /** What is wrong with it and how to fix it. */
  message: string;
}

/** A request was rejected before anything was sent. */
export class TfeValidationError extends TfeError {
  override name = "TfeValidationError";
  constructor(readonly problems: FieldProblem[]) {
    super(problems.map((problem) => `${problem.field} ${problem.message}`).join("; "));
  }
}

/** No usable configuration, e.g. no token anywhere. */
export class TfeConfigError extends TfeError {
  override name = "TfeConfigError";
}

/** The request may or may not have reached the service: connection refused, reset, or timed out. */
export class TfeConnectionError extends TfeError {
  override name = "TfeConnectionError";
  constructor(
    readonly method: string,
    readonly path: string,
    readonly code: string,
    /** False only where the request provably never reached the service (refused, or no connection made). */
    readonly mayHaveReachedService: boolean,
    readonly attempts: number,
    detail: string,
  ) {
    super(`${method} ${path} failed after ${attempts} attempt${attempts === 1 ? "" : "s"}: ${detail} (${code})`);
  }
}

export interface ApiErrorDetails {
  status: number;
  method: string;
  path: string;
  errors: JsonApiErrorObject[];
  /** The body when it was not a JSON:API error document (a proxy's HTML page, a registry error). */
  rawBody?: string | undefined;
  /** Size of the upload that was refused with 413. */
  uploadBytes?: number | undefined;
  attempts: number;
  /**
   * Whether a read with this token found the organization the path names earlier in this client's life (the provider
   * process of one operation): then the organization exists, and a 404 under it is the object's or the permission's.
   */
  organizationReadable?: boolean | undefined;
}

/**
 * The caller cancelled (the engine's Cancel, Ctrl-C) before this request was sent, or while it read or waited to
 * retry: nothing of it changed the service. A write already sent is never cut off; it is the next request that stops.
 */
export class TfeCancelledError extends TfeError {
  override name = "TfeCancelledError";
  constructor(
    readonly method: string,
    readonly path: string,
  ) {
    super(`${method} ${path} stopped: the run was cancelled`);
  }
}

/** The service answered with an error status. */
export class TfeApiError extends TfeError {
  override name = "TfeApiError";
  readonly status: number;
  readonly method: string;
  readonly path: string;
  readonly errors: JsonApiErrorObject[];
  readonly attempts: number;
  /**
   * A 404 on a read of a collection right under an organization (its policies, its policy sets) that no earlier read
   * of this token found: the organization this names does not exist, or the token cannot see it.
   */
  readonly organizationNotFound: string | undefined;

  constructor(details: ApiErrorDetails) {
    super(describeApiError(details));
    this.status = details.status;
    this.method = details.method;
    this.path = details.path;
    this.errors = details.errors;
    this.attempts = details.attempts;
    this.organizationNotFound = organizationNotFoundBy(details);
  }

  /** The attributes a 422 names through `source.pointer`, e.g. `name` for `/data/attributes/name`. */
  get invalidAttributes(): string[] {
    return this.errors.map((error) => pointerToAttribute(error.source?.pointer)).filter((name) => name !== undefined);
  }
}

/**
 * A 401 as a command run outside a Pulumi program says it: its token comes from TFE_TOKEN or a credentials file,
 * never from a stack's config, which the client's own message names too. The fix depends on where the refused
 * token came from: TFE_TOKEN is read before any credentials file, so a new login does not replace it.
 */
export function tokenRefusedByCommand(error: TfeApiError, address: string, tokenSource: string): string {
  const host = new URL(address).host;
  const login = `terraform login ${host}`;
  // `terraform login` writes ~/.terraform.d/credentials.tfrc.json only; a CLI config file (TF_CLI_CONFIG_FILE) is
  // read before it, and its credentials block is edited by hand.
  const loginFile = /[\\/]\.terraform\.d[\\/]credentials\.tfrc\.json$/.test(tokenSource);
  const fix =
    tokenSource === "TFE_TOKEN"
      ? `the token came from TFE_TOKEN, which is read before any credentials file: set a valid API token there, or unset it and run "${login}"`
      : loginFile
        ? `the token came from the ${tokenSource}: run "${login}" to write a new one there, or set a valid API token in TFE_TOKEN`
        : `the token came from the ${tokenSource} (TF_CLI_CONFIG_FILE), read before the file terraform login writes: put a valid token in its credentials "${host}" block, or set a valid API token in TFE_TOKEN`;
  return `${error.method} ${error.path}: the token was not accepted (401): ${fix}`;
}

/** `/data/attributes/enforce/0/mode` names `enforce.0.mode`; a pointer outside the attributes keeps its path. */
function pointerToAttribute(pointer: string | null | undefined): string | undefined {
  const parts = (pointer ?? "").split("/").filter(Boolean);
  const attributes = parts.lastIndexOf("attributes");
  const attribute = (attributes >= 0 ? parts.slice(attributes + 1) : parts.filter((part) => part !== "data")).join(".");
  return attribute || undefined;
}

function describeErrorObject(error: JsonApiErrorObject): string {
  const attribute = pointerToAttribute(error.source?.pointer);
  const text = [error.title, error.detail].filter(Boolean).join(": ") || "no detail given";
  return attribute ? `${attribute}: ${text}` : text;
}

function describeApiError(details: ApiErrorDetails): string {
  const request = `${details.method} ${details.path}`;
  const fromBody = details.errors.map(describeErrorObject);
  const bodyText = fromBody.length > 0 ? fromBody.join("; ") : summarizeText(details.rawBody);
  const retried = details.attempts > 1 ? ` after ${details.attempts} attempts` : "";
  switch (details.status) {
    case 401:
      return `${request}: the token was not accepted (401): set a valid API token in tfe:token, TFE_TOKEN or the Terraform credentials file`;
    case 404: {
      const organization = organizationNotFoundBy(details);
      if (organization !== undefined) {
        // Every object of the organization is out of reach: the organization itself is what is wrong.
        return `${request}: organization "${organization}" does not exist, or this token has no access to it (404)`;
      }
      const said = [writePermissionNote(details), notFoundDetail(details.errors, bodyText)].filter(Boolean).join(": ");
      return `${request}: not found, or the token lacks permission for it (404)${said ? `: ${said}` : ""}`;
    }
    case 413: {
      const size = details.uploadBytes !== undefined ? ` of ${details.uploadBytes} bytes` : "";
      // The service's own reason says which limit (a version's files, its unpacked size) where it gives one.
      const reason = details.errors.map((error) => error.detail).filter(Boolean);
      if (reason.length > 0) return `${request}: the payload${size} was refused (413): ${reason.join("; ")}`;
      return `${request}: the payload${size} is larger than the service's 10 MB limit (413); nothing was saved`;
    }
    case 422:
      return `${request}: the service rejected the request (422): ${bodyText || "no detail given"}`;
    case 429:
      return `${request}: rate limited by the service (429)${retried}: lower the request rate or raise the retry budget`;
    default:
      return `${request}: the service answered ${details.status}${retried}${bodyText ? `: ${bodyText}` : ""}`;
  }
}

/**
 * The organization a 404 says is missing or out of this token's sight: a read of a collection right under it
 * (`GET /api/v2/organizations/acme/policies`) finds every object of it, so only the organization can be what is not
 * found, unless an earlier read of this token found it. A write there is no such proof: the service answers 404, never
 * 403, to a token of the organization that lacks the permission to write (service-facts.md).
 */
function organizationNotFoundBy(details: ApiErrorDetails): string | undefined {
  if (details.status !== 404 || details.method !== "GET" || details.organizationReadable) return undefined;
  return organizationOfCollection(details.path);
}

/** The team permission a write of this path takes, as HCP Terraform's settings name it. */
function writePermission(path: string): string | undefined {
  if (
    /^\/api\/v2\/(organizations\/[^/?]+\/)?(policies|policy-sets|policy-set-versions|policy-set-parameters)\b/.test(
      path,
    )
  ) {
    return "Manage policies";
  }
  if (/\/registry-modules\//.test(path)) return "Manage modules";
  return undefined;
}

/**
 * What a write's 404 adds: the permission it takes, and what is known of the organization. Both causes stay named:
 * the service answers 404 alike to an object that is not there and to a token without the permission.
 */
function writePermissionNote(details: ApiErrorDetails): string {
  if (details.method === "GET") return "";
  const permission = writePermission(details.path);
  const organization = organizationOfCollection(details.path);
  if (permission === undefined) return "";
  if (organization === undefined) return `it takes the "${permission}" permission of the token's team`;
  if (details.organizationReadable) {
    return (
      `this token reads organization "${organization}", so it exists: the token's team likely lacks the ` +
      `"${permission}" permission`
    );
  }
  return `check organization "${organization}"'s name, and that the token's team has the "${permission}" permission`;
}

/** The organization of a collection right under it (`/api/v2/organizations/acme/policies`). */
function organizationOfCollection(path: string): string | undefined {
  return decodedName(/^\/api\/v2\/organizations\/([^/?]+)\/[^/?]+(?:\?.*)?$/.exec(path)?.[1]);
}

/** The organization a path is of: itself, or anything under it (`/api/v2/organizations/acme/...`). */
export function organizationOfPath(path: string): string | undefined {
  return decodedName(/^\/api\/v2\/organizations\/([^/?]+)(?:[/?].*)?$/.exec(path)?.[1]);
}

function decodedName(name: string | undefined): string | undefined {
  if (name === undefined) return undefined;
  try {
    return decodeURIComponent(name);
  } catch {
    return name;
  }
}

/**
 * What a 404's body adds to "not found, or the token lacks permission": nothing when it says the same (the service's
 * bare `not found`, or a server's "does not exist, or the token has no access to it").
 */
function notFoundDetail(errors: JsonApiErrorObject[], bodyText: string): string {
  const sameAgain = (error: JsonApiErrorObject) =>
    /^not found$/i.test(error.title ?? "not found") &&
    (!error.detail || /does not exist, or the token has no access/i.test(error.detail));
  if (errors.length > 0 && errors.every(sameAgain)) return "";
  return bodyText;
}

/** A body's text for a message: markup dropped, whitespace collapsed, at most 200 characters. */
export function summarizeText(rawBody: string | undefined): string {
  if (!rawBody) return "";
  const text = rawBody
    .replace(/<[^>]*>/g, " ")
    .replace(/\s+/g, " ")
    .trim();
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

/**
 * Whether a request that failed this way may still have done its work: a 5xx, or a connection that may have reached
 * the service (a timeout, a reset). A create is then looked for before it is sent again.
 */
export function mayHaveTakenEffect(error: unknown): boolean {
  if (error instanceof TfeConnectionError) return error.mayHaveReachedService;
  return error instanceof TfeApiError && error.status >= 500;
}

/**
 * A DELETE whose first answer was lost, retried, finds the object gone: that is the deletion it asked for. Any other
 * failure stays one.
 */
export async function deletedUnlessGone(remove: () => Promise<unknown>): Promise<void> {
  try {
    await remove();
  } catch (error) {
    if (!(error instanceof TfeApiError && error.status === 404)) throw error;
  }
}

/** The client's error behind `error`, following `cause` through the messages callers wrap around it. */
export function tfeCause(error: unknown): TfeApiError | TfeConnectionError | undefined {
  for (let current = error; current instanceof Error; current = current.cause) {
    if (current instanceof TfeApiError || current instanceof TfeConnectionError) return current;
  }
  return undefined;
}
