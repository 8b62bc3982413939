/** How the limit is counted: see {@link RateLimit}. */
export type RateLimitCounting = "token-bucket" | "every-second";

/**
 * Per-token limits, as the service limits each user, counted one of two ways:
 *
 * - `token-bucket` (the default): a burst of `limit` requests, refilled at `limit` per second. Lenient: a full
 *   burst plus its refill gets through within one second, up to twice the limit.
 * - `every-second`: at most `limit` requests of a token in any one-second window (sliding), as a service that counts
 *   requests per second sees it whatever second its count starts at. A client that keeps to this keeps to any
 *   per-second count.
 *
 * Either way it keeps, per token, the most requests taken within any one second (`busiestSecond`), so a test or a
 * benchmark can say how close a client came to the limit.
 */
export class RateLimit {
  private readonly buckets = new Map<string, { tokens: number; refilledAt: number }>();
  /** Per token, the arrival times of the requests taken within the last second, oldest first. */
  private readonly taken = new Map<string, number[]>();
  private busiest = 0;

  constructor(
    readonly limit: number,
    readonly counting: RateLimitCounting = "token-bucket",
  ) {}

  /** Takes one request of the token's limit, or says how many seconds (fractional) to wait for the next. */
  take(token: string): { allowed: true } | { allowed: false; resetSeconds: number } {
    const now = performance.now();
    const lastSecond = this.taken.get(token) ?? [];
    this.taken.set(token, lastSecond);
    while (lastSecond.length > 0 && lastSecond[0]! <= now - 1000) lastSecond.shift();
    const verdict =
      this.counting === "every-second" ? this.takeInWindow(lastSecond, now) : this.takeFromBucket(token, now);
    if (verdict.allowed) {
      lastSecond.push(now);
      this.busiest = Math.max(this.busiest, lastSecond.length);
    }
    return verdict;
  }

  /** The most requests of one token taken within any one second (by arrival), since start or the last reset. */
  busiestSecond(): number {
    return this.busiest;
  }

  resetBusiestSecond(): void {
    this.busiest = 0;
  }

  private takeInWindow(lastSecond: readonly number[], now: number) {
    if (lastSecond.length < this.limit) return { allowed: true } as const;
    // Free once the request `limit` places back leaves the window.
    const leaves = lastSecond[lastSecond.length - this.limit]! + 1000;
    return { allowed: false, resetSeconds: Math.max(0.001, (leaves - now) / 1000) } as const;
  }

  private takeFromBucket(token: string, now: number) {
    const bucket = this.buckets.get(token) ?? { tokens: this.limit, refilledAt: now };
    bucket.tokens = Math.min(this.limit, bucket.tokens + ((now - bucket.refilledAt) / 1000) * this.limit);
    bucket.refilledAt = now;
    this.buckets.set(token, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { allowed: true } as const;
    }
    return { allowed: false, resetSeconds: (1 - bucket.tokens) / this.limit } as const;
  }
}
