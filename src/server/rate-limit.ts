/**
 * Per-token token buckets, as the service limits each user: a burst of `limit` requests, refilled at `limit`
 * per second.
 */
export class RateLimit {
  private readonly buckets = new Map<string, { tokens: number; refilledAt: number }>();

  constructor(readonly limit: number) {}

  /** Takes one request from the token's bucket, or says how many seconds (fractional) to wait for the next. */
  take(token: string): { allowed: true } | { allowed: false; resetSeconds: number } {
    const now = performance.now();
    const bucket = this.buckets.get(token) ?? { tokens: this.limit, refilledAt: now };
    bucket.tokens = Math.min(this.limit, bucket.tokens + ((now - bucket.refilledAt) / 1000) * this.limit);
    bucket.refilledAt = now;
    this.buckets.set(token, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { allowed: true };
    }
    return { allowed: false, resetSeconds: (1 - bucket.tokens) / this.limit };
  }
}
