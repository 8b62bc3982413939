import { describe, expect, it } from "vitest";
import { RateLimiter, TfeClient, TfeConfigError } from "../../src/client/index";
import { empty, type ReceivedRequest, sequence, showPolicy, startFaultServer, testClient, token } from "./helpers";

const spread = (requests: ReceivedRequest[]) => requests.at(-1)!.at - requests[0]!.at;
const readMany = (client: TfeClient, count: number) =>
  Promise.all(Array.from({ length: count }, () => client.policies.read("pol-1")));

describe("client-side rate limiter", () => {
  it("lets at most 20 of 40 requests at 20 per second through in any second, where unlimited ones arrive together", async () => {
    const limitedServer = await startFaultServer(showPolicy());
    await readMany(testClient(limitedServer.url, { rateLimit: { requestsPerSecond: 20 } }), 40);
    const unlimitedServer = await startFaultServer(showPolicy());
    await readMany(testClient(unlimitedServer.url), 40);

    // 20 at once, then the next 20 once the first have left the one-second window.
    expect(spread(limitedServer.requests)).toBeGreaterThanOrEqual(900);
    expect(spread(unlimitedServer.requests)).toBeLessThan(spread(limitedServer.requests) / 2);
    // Counted from the first arrival, as the second 20 cannot leave before 1 s after the first 20 did; a token
    // bucket would have let 10 more through by half a second.
    const first = limitedServer.requests[0]!.at;
    expect(limitedServer.requests.filter((request) => request.at - first < 500).length).toBeLessThanOrEqual(20);
  });

  it("keeps a fractional rate: 1.5 per second sends one request per 667 ms", async () => {
    const server = await startFaultServer(showPolicy());
    await readMany(testClient(server.url, { rateLimit: { requestsPerSecond: 1.5 } }), 2);
    expect(spread(server.requests)).toBeGreaterThanOrEqual(620);
  });

  it("is shared by every client of the same address and token", async () => {
    const server = await startFaultServer(showPolicy());
    const rateLimit = { requestsPerSecond: 10 };
    await Promise.all([
      readMany(testClient(server.url, { rateLimit }), 10),
      readMany(testClient(server.url, { rateLimit }), 10),
    ]);
    // Two separate buckets would let all 20 through at once; one bucket holds the second 10 back ~1 s.
    expect(spread(server.requests)).toBeGreaterThanOrEqual(900);
  });

  it("does not hold back a client with another token", async () => {
    const server = await startFaultServer(showPolicy());
    const rateLimit = { requestsPerSecond: 5 };
    await readMany(testClient(server.url, { rateLimit }), 5);
    await readMany(testClient(server.url, { rateLimit, token: `${token}-other` }), 5);
    expect(spread(server.requests)).toBeLessThan(500);
  });

  it("pauses every caller of the bucket when the service answers 429", async () => {
    const server = await startFaultServer(sequence(empty(429, { "x-ratelimit-reset": "0.5" }), showPolicy()));
    const rateLimit = { requestsPerSecond: 1000 };
    const first = testClient(server.url, { rateLimit }).policies.read("pol-1");
    while (server.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    await new Promise((resolve) => setTimeout(resolve, 100));
    await testClient(server.url, { rateLimit }).policies.read("pol-2");
    await first;

    const limited = server.requests[0]!;
    const other = server.requests.find((request) => request.url.endsWith("pol-2"))!;
    // Unpaused, the other caller's request would arrive ~100 ms after the 429.
    expect(other.at - limited.at).toBeGreaterThanOrEqual(450);
    expect(server.requests).toHaveLength(3);
  });

  it("serves callers in the order they asked", async () => {
    const limiter = new RateLimiter(10);
    const order: number[] = [];
    await Promise.all(Array.from({ length: 15 }, (_, index) => limiter.acquire().then(() => order.push(index))));
    expect(order).toEqual(Array.from({ length: 15 }, (_, index) => index));
  });

  it("rejects a rate that is not positive with an error naming the option", () => {
    for (const requestsPerSecond of [0, -1, Number.NaN]) {
      expect(() => new TfeClient({ token, rateLimit: { requestsPerSecond } })).toThrow(TfeConfigError);
      expect(() => new TfeClient({ token, rateLimit: { requestsPerSecond } })).toThrow(/rateLimit\.requestsPerSecond/);
    }
  });
});
