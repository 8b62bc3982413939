import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ServerClock } from "../../src/client/server-clock";
import { type Reply, sequence, showPolicy, startFaultServer, testClient } from "./helpers";

// The service's clock as its answers' Date headers (to the second) tell it: whatever the offset and the timings,
// the latest time a bound says the service's clock read at an answer is never before the time it really read, and
// many answers narrow it to about a round trip.

const exchange = fc.record({
  sentAt: fc.integer({ min: 0, max: 60_000 }),
  travel: fc.integer({ min: 0, max: 200 }),
  handling: fc.integer({ min: 0, max: 300 }),
  back: fc.integer({ min: 0, max: 200 }),
});

describe("ServerClock", () => {
  it("never bounds the service's clock below what it read, for any offset and timings", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -3_600_000, max: 3_600_000 }),
        fc.array(exchange, { minLength: 1, maxLength: 40 }),
        (offset, exchanges) => {
          const clock = new ServerClock();
          const ordered = [...exchanges].sort((a, b) => a.sentAt - b.sentAt);
          for (const { sentAt, travel, handling, back } of ordered) {
            // The service answers at its own time `answered`, and its Date header says that second.
            const answered = sentAt + travel + handling + offset;
            const receivedAt = sentAt + travel + handling + back;
            const dateMs = Math.floor(answered / 1000) * 1000;
            clock.observe(sentAt, receivedAt, dateMs);
            const latest = clock.latestAt(receivedAt, dateMs);
            expect(latest).toBeGreaterThanOrEqual(answered);
            expect(latest).toBeLessThanOrEqual(dateMs + 1000);
          }
        },
      ),
      { numRuns: 500, seed: 20261127 },
    );
  });

  it("narrows the window from the header's second to about a round trip over many answers", () => {
    const clock = new ServerClock();
    const offset = 123_456;
    let sentAt = 0;
    let last = { receivedAt: 0, dateMs: 0, answered: 0 };
    for (let index = 0; index < 200; index++) {
      sentAt += 37;
      const answered = sentAt + 5 + offset;
      const receivedAt = sentAt + 10;
      const dateMs = Math.floor(answered / 1000) * 1000;
      clock.observe(sentAt, receivedAt, dateMs);
      last = { receivedAt, dateMs, answered };
    }
    const latest = clock.latestAt(last.receivedAt, last.dateMs);
    expect(latest - last.answered).toBeGreaterThanOrEqual(0);
    expect(latest - last.answered).toBeLessThan(50);
  });
});

describe("a Retry-After date, read on the service's clock", () => {
  const tenMinutes = 10 * 60 * 1000;
  /** 503 with a `Retry-After` date 2 s on, from a service whose clock is `offset` ms from this machine's. */
  const unavailableUntil =
    (offset: number): Reply =>
    (_request, response) => {
      const serviceNow = Date.now() + offset;
      response.writeHead(503, {
        date: new Date(serviceNow).toUTCString(),
        "retry-after": new Date(serviceNow + 2000).toUTCString(),
      });
      response.end();
    };
  const gap = (requests: { at: number }[]) => requests[1]!.at - requests[0]!.at;

  for (const [offset, ahead] of [
    [tenMinutes, "10 minutes ahead"],
    [-tenMinutes, "10 minutes behind"],
  ] as const) {
    it(`waits what the service asks with its clock ${ahead}: a date 2 s on, to the second, is 1 to 3 s away`, async () => {
      const server = await startFaultServer(sequence(unavailableUntil(offset), showPolicy()));
      // Read on this machine's clock, ahead the date is 10 minutes away (past the budget: no retry at all), behind
      // it is long past (the retry goes at once, after fastRetry's 20 ms at most).
      await testClient(server.url).policies.update("pol-1", { enforcementLevel: "advisory" });
      expect(server.requests).toHaveLength(2);
      // The date names a second: 2 s on is at least 1 s on. The clock's bound from the answer's Date header can
      // only add to the wait (up to the header's second and a round trip), never shorten it.
      expect(gap(server.requests)).toBeGreaterThanOrEqual(990);
      expect(gap(server.requests)).toBeLessThan(4000);
    });
  }

  it("bounds the earliest the service's clock reads from below: never later than it really reads", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -3_600_000, max: 3_600_000 }),
        fc.array(exchange, { minLength: 1, maxLength: 20 }),
        fc.integer({ min: 0, max: 5_000 }),
        (offset, exchanges, later) => {
          const clock = new ServerClock();
          let receivedAt = 0;
          for (const { sentAt, travel, handling, back } of [...exchanges].sort((a, b) => a.sentAt - b.sentAt)) {
            const answered = sentAt + travel + handling + offset;
            receivedAt = sentAt + travel + handling + back;
            clock.observe(sentAt, receivedAt, Math.floor(answered / 1000) * 1000);
          }
          const at = receivedAt + later;
          expect(clock.earliestAt(at)).toBeLessThanOrEqual(at + offset);
        },
      ),
      { numRuns: 300, seed: 20261128 },
    );
    // With nothing observed, this machine's clock stands in.
    expect(new ServerClock().earliestAt(1234)).toBe(1234);
  });
});
