import { describe, expect, it } from "vitest";
import { TfeApiError, TfeClient, TfeConnectionError } from "../../src/client/index";
import {
  empty,
  fastRetry,
  freePort,
  hang,
  type Reply,
  rejection,
  reset,
  sequence,
  showPolicy,
  startFaultServer,
  testClient,
} from "./helpers";

type Method = "GET" | "PUT" | "PATCH" | "DELETE" | "POST";

const operations: Record<Method, (client: TfeClient) => Promise<unknown>> = {
  GET: (client) => client.policies.read("pol-1"),
  PUT: (client) => client.policies.upload("pol-1", "main = rule { true }"),
  PATCH: (client) => client.policies.update("pol-1", { enforcementLevel: "advisory" }),
  DELETE: (client) => client.policies.delete("pol-1"),
  POST: (client) => client.policies.create("acme", { name: "restrict", enforcementLevel: "advisory" }),
};
const idempotent: Method[] = ["GET", "PUT", "PATCH", "DELETE"];
const gap = (requests: { at: number }[], index: number) => requests[index]!.at - requests[index - 1]!.at;

describe("retries of idempotent methods", () => {
  for (const method of idempotent) {
    for (const status of [429, 502, 503, 504]) {
      it(`${method} is retried after ${status} and then succeeds`, async () => {
        const server = await startFaultServer(sequence(empty(status), showPolicy()));
        await operations[method](testClient(server.url));
        expect(server.requests.map((request) => request.method)).toEqual([method, method]);
      });
    }

    it(`${method} is retried after the connection is reset`, async () => {
      const server = await startFaultServer(sequence(reset, showPolicy()));
      await operations[method](testClient(server.url));
      expect(server.requests).toHaveLength(2);
    });
  }

  it("retries a GET whose response body is cut off, and reports a cut-off POST as a connection error", async () => {
    const truncated: Reply = (_request, response) => {
      response.writeHead(200, { "content-type": "application/vnd.api+json", "content-length": "5000" });
      response.write('{"data":{"id":"pol-1"');
      setTimeout(() => response.socket?.destroy(), 10);
    };
    const server = await startFaultServer(sequence(truncated, showPolicy(), truncated));
    const client = testClient(server.url);
    await operations.GET(client);
    const error = await rejection(() => operations.POST(client));
    expect(error).toBeInstanceOf(TfeConnectionError);
    expect(error).toMatchObject({ method: "POST", mayHaveReachedService: true, attempts: 1 });
    expect(server.requests.map((request) => request.method)).toEqual(["GET", "GET", "POST"]);
  });

  it("GET is retried after a timeout, with a fresh timeout for the new attempt", async () => {
    const server = await startFaultServer(sequence(hang, showPolicy()));
    await operations.GET(testClient(server.url, { timeoutMs: 200 }));
    expect(server.requests).toHaveLength(2);
  });

  it("stops after maxRetries and reports the attempts in the error", async () => {
    const server = await startFaultServer(empty(503));
    const error = await rejection(() => operations.GET(testClient(server.url, { retry: { maxRetries: 2 } })));
    expect(error).toBeInstanceOf(TfeApiError);
    expect(error).toMatchObject({ status: 503, attempts: 3 });
    expect((error as Error).message).toContain("after 3 attempts");
    expect(server.requests).toHaveLength(3);
  });

  it("does not retry statuses outside the retry list (500 on a policy update)", async () => {
    const server = await startFaultServer(sequence(empty(500), showPolicy()));
    const error = await rejection(() => operations.PATCH(testClient(server.url)));
    expect(error).toMatchObject({ status: 500, attempts: 1 });
    expect(server.requests).toHaveLength(1);
  });

  it("bounds the whole attempt: a body that trickles in a byte every 100 ms cannot hold it past timeoutMs", async () => {
    const server = await startFaultServer((_request, response) => {
      response.writeHead(200, { "content-type": "application/vnd.api+json" });
      const drip = setInterval(() => response.write(" "), 100);
      response.on("close", () => clearInterval(drip));
      setTimeout(() => {
        clearInterval(drip);
        response.end();
      }, 5_000);
    });
    const client = testClient(server.url, { timeoutMs: 500, retry: { maxRetries: 0 } });
    const started = performance.now();
    const error = await rejection(() => operations.GET(client));
    // Each pause is 100 ms, well under the 500 ms a pause may last: only a bound on the attempt ends it before the
    // body's 5 s. The margin is wide on purpose; what matters is 5 s against half a second.
    expect(performance.now() - started).toBeLessThan(3_000);
    expect(error).toBeInstanceOf(TfeConnectionError);
    expect((error as Error).message).toMatch(/no answer from .* within 500 ms/);
  });
});

describe("429 answers", () => {
  it("do not use up the retry budget: the service says when to come back, so only maxElapsedMs bounds them", async () => {
    const limited = empty(429, { "x-ratelimit-reset": "0.01" });
    const server = await startFaultServer(sequence(...Array.from({ length: 8 }, () => limited), showPolicy()));
    await operations.PUT(testClient(server.url));
    expect(server.requests).toHaveLength(9);
  });

  it("leave the budget for failures: 3 retries after 503s still end it, with 429s between them", async () => {
    const limited = empty(429, { "x-ratelimit-reset": "0.01" });
    const server = await startFaultServer(
      sequence(limited, empty(503), limited, empty(503), limited, empty(503), limited, empty(503), showPolicy()),
    );
    const error = await rejection(() => operations.GET(testClient(server.url)));
    expect(error).toMatchObject({ status: 503, attempts: 8 });
  });
});

describe("POST is retried only where the request provably did not reach the service", () => {
  it("retries after 429", async () => {
    const server = await startFaultServer(sequence(empty(429), showPolicy()));
    await operations.POST(testClient(server.url));
    expect(server.requests).toHaveLength(2);
  });

  for (const status of [502, 503, 504]) {
    it(`does not retry after ${status}: a repeated create could duplicate the policy`, async () => {
      const server = await startFaultServer(sequence(empty(status), showPolicy()));
      const error = await rejection(() => operations.POST(testClient(server.url)));
      expect(error).toBeInstanceOf(TfeApiError);
      expect(error).toMatchObject({ status, method: "POST", attempts: 1 });
      expect(server.requests).toHaveLength(1);
    });
  }

  it("does not retry after a reset", async () => {
    const server = await startFaultServer(sequence(reset, showPolicy()));
    const error = await rejection(() => operations.POST(testClient(server.url)));
    expect(error).toBeInstanceOf(TfeConnectionError);
    expect(error).toMatchObject({ mayHaveReachedService: true, attempts: 1 });
    expect(server.requests).toHaveLength(1);
  });

  it("does not retry after a timeout", async () => {
    const server = await startFaultServer(sequence(hang, showPolicy()));
    const error = await rejection(() => operations.POST(testClient(server.url, { timeoutMs: 150 })));
    expect(error).toBeInstanceOf(TfeConnectionError);
    expect(error).toMatchObject({ mayHaveReachedService: true, attempts: 1 });
    expect(server.requests).toHaveLength(1);
  });
});

describe("connection refused", () => {
  for (const method of [...idempotent, "POST"] as Method[]) {
    it(`${method} is retried, then fails saying the request never reached the service`, async () => {
      const address = `http://127.0.0.1:${await freePort()}`;
      const error = await rejection(() => operations[method](testClient(address, { retry: { maxRetries: 2 } })));
      expect(error).toBeInstanceOf(TfeConnectionError);
      expect(error).toMatchObject({ code: "ECONNREFUSED", mayHaveReachedService: false, attempts: 3 });
      expect((error as Error).message).toContain("refused the connection");
    });
  }

  it("a POST retried after refusals reaches the service once the service is up", async () => {
    const port = await freePort();
    const client = testClient(`http://127.0.0.1:${port}`, { retry: { maxRetries: 200, maxElapsedMs: 10_000 } });
    const created = operations.POST(client);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const server = await startFaultServer(showPolicy(), port);
    await created;
    expect(server.requests.map((request) => request.method)).toEqual(["POST"]);
  });
});

describe("an address that never answered", () => {
  it("gives up once firstContactMs has passed, naming the address and the setting it came from", async () => {
    const address = `http://127.0.0.1:${await freePort()}`;
    const client = TfeClient.fromConfig({
      stackConfig: { get: (key) => ({ address, token: "tfe-token-0123456789" })[key] },
      rateLimit: false,
      retry: { ...fastRetry, maxRetries: 10_000, maxElapsedMs: 600_000, firstContactMs: 0 },
    });
    const error = await rejection(() => operations.GET(client));
    expect(error).toMatchObject({ code: "ECONNREFUSED", attempts: 1 });
    expect((error as Error).message).toContain(`${address} (the address from stack config tfe:address) refused`);
  });

  it("keeps the whole retry budget once the service has answered: a restart is waited out", async () => {
    const server = await startFaultServer(showPolicy());
    const client = testClient(server.url, { retry: { ...fastRetry, maxRetries: 3, firstContactMs: 0 } });
    await operations.GET(client);
    await server.close();
    const error = await rejection(() => operations.GET(client));
    expect(error).toMatchObject({ code: "ECONNREFUSED", attempts: 4 });
  });
});

describe("waits the service asks for", () => {
  it("honours a fractional X-RateLimit-Reset before retrying", async () => {
    const server = await startFaultServer(
      sequence(empty(429, { "x-ratelimit-limit": "30", "x-ratelimit-reset": "0.35" }), showPolicy()),
    );
    await operations.GET(testClient(server.url));
    expect(server.requests).toHaveLength(2);
    // Without the header the retry would come within fastRetry.maxDelayMs (20 ms).
    expect(gap(server.requests, 1)).toBeGreaterThanOrEqual(330);
  });

  it("honours a proxy's Retry-After in seconds", async () => {
    const server = await startFaultServer(sequence(empty(503, { "retry-after": "1" }), showPolicy()));
    await operations.PUT(testClient(server.url));
    expect(gap(server.requests, 1)).toBeGreaterThanOrEqual(980);
  });

  it("backs off a 5xx that carries X-RateLimit-Reset: 0, which speaks of the rate limit only", async () => {
    const server = await startFaultServer(
      sequence(empty(503, { "x-ratelimit-reset": "0" }), empty(503, { "x-ratelimit-reset": "0" }), showPolicy()),
    );
    const client = testClient(server.url, { retry: { baseDelayMs: 1_000, maxDelayMs: 1_000 } });
    await operations.GET(client);
    expect(server.requests).toHaveLength(3);
    // Full jitter draws each wait from [0, 1 s]: both under 10 ms is a 1-in-10,000 chance, where taking the header
    // as the wait retries within a millisecond or two every time.
    expect(gap(server.requests, 1) + gap(server.requests, 2)).toBeGreaterThan(10);
  });

  it("gives up at once when the asked-for wait exceeds the retry time budget", async () => {
    const server = await startFaultServer(sequence(empty(429, { "x-ratelimit-reset": "30" }), showPolicy()));
    const error = await rejection(() => operations.GET(testClient(server.url, { retry: { maxElapsedMs: 1_000 } })));
    expect(error).toMatchObject({ status: 429, attempts: 1 });
    expect((error as Error).message).toContain("rate limited");
    expect(server.requests).toHaveLength(1);
  });

  it("stops retrying once maxElapsedMs has passed, however many retries are left", async () => {
    const server = await startFaultServer(empty(503));
    const retry = { ...fastRetry, maxRetries: 10_000, maxElapsedMs: 200 };
    const error = await rejection(() => operations.GET(testClient(server.url, { retry })));
    expect(error).toMatchObject({ status: 503 });
    expect((error as TfeApiError).attempts).toBe(server.requests.length);
    expect(server.requests.length).toBeGreaterThan(1);
    expect(server.requests.length).toBeLessThan(retry.maxRetries);
  });
});

describe("per-request timeout", () => {
  it("ends an attempt that gets no answer and says so", async () => {
    const server = await startFaultServer(hang);
    const client = testClient(server.url, { timeoutMs: 100, retry: { maxRetries: 0 } });
    const error = await rejection(() => operations.GET(client));
    expect(error).toBeInstanceOf(TfeConnectionError);
    expect((error as Error).message).toMatch(
      /GET \/api\/v2\/policies\/pol-1 failed after 1 attempt: no answer from .* within 100 ms/,
    );
    expect(server.requests).toHaveLength(1);
  });
});
