import { createHash } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";

/**
 * At most `requestsPerSecond` requests in any one-second window (a sliding window over the latest send times).
 * A token bucket of the same rate would let twice that through in the first second (a full burst plus the
 * refill), which a service counting per second answers with 429s. A 429 from the service pauses every caller
 * sharing the limiter until the service's reset time.
 */
export class RateLimiter {
  /** Send times of the latest `capacity` requests; `next` indexes the oldest. */
  private readonly sent: number[];
  private next = 0;
  private readonly windowMs: number;
  private pausedUntil = 0;
  private queue: Promise<void> = Promise.resolve();

  constructor(readonly requestsPerSecond: number) {
    if (!(requestsPerSecond > 0 && Number.isFinite(requestsPerSecond))) {
      throw new RangeError(`requestsPerSecond must be a number above 0, not ${requestsPerSecond}`);
    }
    // A fractional rate such as 0.5 becomes one request per two-second window.
    const capacity = Math.max(1, Math.floor(requestsPerSecond));
    this.windowMs = (capacity / requestsPerSecond) * 1000;
    this.sent = new Array<number>(capacity).fill(Number.NEGATIVE_INFINITY);
  }

  /** Resolves when the caller may send one request. Callers are served in order. */
  acquire(): Promise<void> {
    const turn = this.queue.then(() => this.takeTurn());
    this.queue = turn;
    return turn;
  }

  /** Holds every caller back for `milliseconds` from now (the service said to wait). */
  pause(milliseconds: number): void {
    this.pausedUntil = Math.max(this.pausedUntil, performance.now() + milliseconds);
  }

  private async takeTurn(): Promise<void> {
    for (;;) {
      const now = performance.now();
      const wait = Math.max(this.pausedUntil - now, this.sent[this.next]! + this.windowMs - now);
      if (wait <= 0) {
        this.sent[this.next] = now;
        this.next = (this.next + 1) % this.sent.length;
        return;
      }
      await sleep(wait);
    }
  }
}

const sharedLimiters = new Map<string, RateLimiter>();

/**
 * The service limits requests per token, so every client in this process that uses the same address and token
 * shares one bucket (keyed by a hash, so the token itself is not kept here).
 */
export function sharedRateLimiter(address: string, token: string, requestsPerSecond: number): RateLimiter {
  const key = createHash("sha256").update(`${address}\n${token}\n${requestsPerSecond}`).digest("hex");
  let limiter = sharedLimiters.get(key);
  if (!limiter) {
    limiter = new RateLimiter(requestsPerSecond);
    sharedLimiters.set(key, limiter);
  }
  return limiter;
}
