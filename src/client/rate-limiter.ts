import { createHash } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";

/**
 * A token bucket: up to `requestsPerSecond` requests in any second, with a burst of the same size. A 429 from
 * the service pauses every caller sharing the bucket until the service's reset time.
 */
export class RateLimiter {
  private tokens: number;
  private refilledAt = performance.now();
  private pausedUntil = 0;
  private queue: Promise<void> = Promise.resolve();

  constructor(readonly requestsPerSecond: number) {
    if (!(requestsPerSecond > 0)) throw new RangeError("requestsPerSecond must be greater than 0");
    this.tokens = requestsPerSecond;
  }

  /** Resolves when the caller may send one request. Callers are served in order. */
  acquire(): Promise<void> {
    const turn = this.queue.then(() => this.takeToken());
    this.queue = turn;
    return turn;
  }

  /** Holds every caller back for `milliseconds` from now (the service said to wait). */
  pause(milliseconds: number): void {
    this.pausedUntil = Math.max(this.pausedUntil, performance.now() + milliseconds);
  }

  private async takeToken(): Promise<void> {
    for (;;) {
      const now = performance.now();
      if (now < this.pausedUntil) {
        await sleep(this.pausedUntil - now);
        continue;
      }
      this.tokens = Math.min(
        this.requestsPerSecond,
        this.tokens + ((now - this.refilledAt) / 1000) * this.requestsPerSecond,
      );
      this.refilledAt = now;
      if (this.tokens >= 1) {
        this.tokens -= 1;
        return;
      }
      await sleep(((1 - this.tokens) / this.requestsPerSecond) * 1000);
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
