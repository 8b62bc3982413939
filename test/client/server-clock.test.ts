import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ServerClock } from "../../src/client/server-clock";

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
