// Property-based hostile input over HTTP: random and mutated paths, query strings, headers and bodies against
// every route the OpenAPI document lists. The server must answer each with a status below 500, promptly, and
// its memory must stay bounded.
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningServer } from "../../src/server";
import { createPolicy, organization, otherToken, readOnlyToken, start, token } from "./helpers";

let server: RunningServer;
let routes: { method: string; path: string }[];
let policyIds: string[];

beforeAll(async () => {
  server = await start();
  const document = (await (await fetch(`${server.url}/api/openapi.json`)).json()) as {
    paths: Record<string, Record<string, unknown>>;
  };
  routes = Object.entries(document.paths).flatMap(([path, operations]) =>
    Object.keys(operations).map((method) => ({ method: method.toUpperCase(), path })),
  );
  policyIds = [(await createPolicy(server, "fuzz-target")).id, (await createPolicy(server, "fuzz-other")).id];
});
afterAll(() => server.close());

const hostileText = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.constantFrom("", ".", "..", "%2e%2e", "%00", "%ZZ", "\u0000", "\uD800", "a".repeat(5000), "1e400", "-1", "null"),
);

const validParameters: Record<string, string> = {
  organization,
  namespace: organization,
  name: "vpc",
  provider: "aws",
  version: "1.0.0",
};

/** A value for a path parameter: often a real one, so that requests get past the 404 to the body checks. */
const pathValue = () =>
  fc.oneof({ weight: 8, arbitrary: fc.constant("<valid>") }, { weight: 1, arbitrary: hostileText });

const queryString = fc
  .array(
    fc.tuple(
      fc.oneof(
        fc.constantFrom("page[number]", "page[size]", "search[name]", "filter[kind]", "sort", "include"),
        hostileText,
      ),
      hostileText,
    ),
    { maxLength: 4 },
  )
  .map((pairs) => (pairs.length === 0 ? "" : `?${new URLSearchParams(pairs)}`));

const validAttributes = { name: "fuzz-new", "enforcement-level": "advisory", kind: "sentinel", description: "d" };
const deprecation = { "deprecated-status": "Deprecated", reason: "fuzz", link: "https://example.com" };

/** Bodies: random JSON, JSON:API documents with mutated members, broken JSON, raw bytes, nothing. */
const body = fc.oneof(
  fc.constant(undefined),
  fc.jsonValue({ maxDepth: 4 }).map((value) => JSON.stringify(value)),
  fc
    .record({
      type: fc.constantFrom("policies", "module-versions", "registry-modules", "registry-module-versions", "x"),
      id: fc.option(fc.oneof(fc.constant("<policy>"), hostileText), { nil: undefined }),
      attributes: fc.oneof(
        fc.constant({ ...validAttributes }),
        fc.constant({ deprecation }),
        fc.dictionary(
          fc.oneof(
            fc.constantFrom(...Object.keys(validAttributes), "deprecation", "enforce", "query", "version"),
            hostileText,
          ),
          fc.oneof(fc.jsonValue({ maxDepth: 3 }), hostileText),
          { maxKeys: 6 },
        ),
      ),
    })
    .map((data) => JSON.stringify({ data })),
  fc.string({ maxLength: 200 }).map((text) => `{"data": ${text}`),
  fc.uint8Array({ maxLength: 2048 }).map((bytes) => Buffer.from(bytes).toString("latin1")),
  fc.nat({ max: 5000 }).map((depth) => `${"[".repeat(depth)}${"]".repeat(depth)}`),
);

const contentType = fc.option(
  fc.oneof(
    fc.constantFrom(
      "application/vnd.api+json",
      "application/json",
      "application/octet-stream",
      "text/plain",
      "application/json; charset=latin1",
      "multipart/form-data; boundary=x",
    ),
    fc.stringMatching(/^[a-z]{1,10}\/[a-z+.-]{1,20}$/),
  ),
  { nil: undefined },
);

// Mostly the token with every permission, so that requests reach the body checks behind authentication.
const authorization = fc.oneof(
  { weight: 8, arbitrary: fc.constant(`Bearer ${token}`) },
  { weight: 1, arbitrary: fc.constantFrom(readOnlyToken, otherToken).map((value) => `Bearer ${value}`) },
  { weight: 1, arbitrary: fc.option(fc.stringMatching(/^[\x21-\x7e ]{0,60}$/), { nil: undefined }) },
);

// A collection before each measurement, so that the numbers compare live memory rather than garbage not yet freed.
setFlagsFromString("--expose-gc");
const collectGarbage = runInNewContext("gc") as () => void;
function liveMemory() {
  collectGarbage();
  return process.memoryUsage();
}

const methods = ["GET", "POST", "PATCH", "PUT", "DELETE", "HEAD", "OPTIONS"];

const requestArbitraries = [
  fc.nat({ max: 1000 }),
  // Mostly the route's own method; now and then another one.
  fc.oneof({ weight: 4, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constantFrom(...methods) }),
  fc.array(pathValue(), { minLength: 6, maxLength: 6 }),
  queryString,
  authorization,
  contentType,
  body,
] as const;

let requests = 0;
const statuses = new Map<number, number>();

async function sendHostile(
  routeIndex: number,
  method: string | undefined,
  values: string[],
  query: string,
  auth: string | undefined,
  type: string | undefined,
  payload: string | undefined,
): Promise<void> {
  const route = routes[routeIndex % routes.length]!;
  let index = 0;
  const path = route.path.replace(/\{([^}]+)\}/g, (_match, parameter: string) => {
    const value = values[index++] ?? "x";
    if (value === "<valid>") return validParameters[parameter] ?? policyIds[0]!;
    // Percent-escapes go as they are (malformed ones too); the rest is encoded from its UTF-8 bytes, which
    // turns a lone surrogate into U+FFFD instead of throwing.
    return value.startsWith("%") ? value : encodeURIComponent(Buffer.from(value).toString());
  });
  const chosenMethod = method ?? route.method;
  const headers: Record<string, string> = {};
  if (auth !== undefined) headers.authorization = auth;
  if (type !== undefined) headers["content-type"] = type;
  const sendsBody = payload !== undefined && chosenMethod !== "GET" && chosenMethod !== "HEAD";
  const response = await fetch(`${server.url}${path}${query}`, {
    method: chosenMethod,
    headers,
    body: sendsBody ? payload.replaceAll("<policy>", policyIds[1]!) : undefined,
    redirect: "manual",
    // A hang fails the property instead of the whole test run.
    signal: AbortSignal.timeout(10_000),
  });
  await response.arrayBuffer();
  requests++;
  statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
  if (response.status >= 500) throw new Error(`${chosenMethod} ${path}${query} answered ${response.status}`);
  // A deleted target would turn the rest of the run into 404s: put a new one in its place.
  if (chosenMethod === "DELETE" && response.status === 204 && path.startsWith("/api/v2/policies/")) {
    policyIds = await Promise.all(
      policyIds.map(async (id, position) =>
        path.includes(id) ? (await createPolicy(server, `fuzz-${position}-${requests}`)).id : id,
      ),
    );
  }
}

const megabytes = (bytes: number) => Math.round(bytes / 1e6);

describe("hostile input over HTTP", () => {
  it("never answers 5xx, never hangs, and keeps memory bounded", async () => {
    const property = fc.asyncProperty(...requestArbitraries, sendHostile);
    // A first round warms the JIT, caches and pools, so that the measured round compares like with like.
    await fc.assert(property, { numRuns: 300, interruptAfterTimeLimit: 6_000, markInterruptAsFailure: false });
    const before = liveMemory();
    const warmUpRequests = requests;
    await fc.assert(property, { numRuns: 3000, interruptAfterTimeLimit: 14_000, markInterruptAsFailure: false });
    const after = liveMemory();
    console.log(
      `hostile input: ${requests} requests (${requests - warmUpRequests} measured); ` +
        `statuses ${JSON.stringify(Object.fromEntries(statuses))}; ` +
        `rss ${megabytes(before.rss)} -> ${megabytes(after.rss)} MB, ` +
        `heap ${megabytes(before.heapUsed)} -> ${megabytes(after.heapUsed)} MB ` +
        `(of ${megabytes(before.heapTotal)} -> ${megabytes(after.heapTotal)} MB), ` +
        `external ${megabytes(before.external)} -> ${megabytes(after.external)} MB`,
    );
    expect(requests - warmUpRequests).toBeGreaterThan(100);
    expect(server.requestLog.entries().filter((entry) => entry.status >= 500)).toEqual([]);
    // Live memory (the JavaScript heap after a full collection, and buffers) is what a leak would grow. The
    // process's resident size also holds the client, the fuzzer and pages the allocator keeps, so its bound is looser.
    expect(after.heapUsed + after.external - (before.heapUsed + before.external)).toBeLessThan(100 * 1024 * 1024);
    expect(after.rss - before.rss).toBeLessThan(250 * 1024 * 1024);
  }, 60_000);
});
