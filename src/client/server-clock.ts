// The service's clock, as far as its answers tell it. Every answer's `Date` header says the second it was sent in;
// the answer was sent between when this process sent the request and when it got the answer. Each answer so
// bounds the offset between the service's clock and this process's (the service's minus ours) from both sides, and
// the bounds of many answers together pin it to about a round trip: far finer than the header's second. No I/O.

export class ServerClock {
  /** The service's clock minus this process's, in ms: at least `low`, less than `high`. */
  private low = Number.NEGATIVE_INFINITY;
  private high = Number.POSITIVE_INFINITY;

  /** This process's clock, in ms: monotonic, so a wall-clock step cannot move what was observed. */
  static now(): number {
    return performance.timeOrigin + performance.now();
  }

  /** One answer: the request sent at `sentAt`, the answer got at `receivedAt` (ours), its `Date` header `dateMs`. */
  observe(sentAt: number, receivedAt: number, dateMs: number): void {
    const low = dateMs - receivedAt;
    const high = dateMs + 1000 - sentAt;
    // Bounds that no longer meet say a clock moved (the service's, a VM's): only what was just seen holds.
    if (low >= this.high || high <= this.low) {
      this.low = low;
      this.high = high;
      return;
    }
    this.low = Math.max(this.low, low);
    this.high = Math.min(this.high, high);
  }

  /**
   * The earliest the service's clock can read at `at` (this process's clock, ServerClock.now()): what a time the
   * service names (a `Retry-After` date) is measured against, so that a wait it asks for is never cut short by a
   * clock of ours that is behind it, nor stretched by one ahead. Where no answer has bounded it yet, this process's
   * own clock stands in.
   */
  earliestAt(at: number): number {
    return Number.isFinite(this.low) ? at + this.low : at;
  }

  /**
   * The latest time the service's clock can have read when an answer sent by it reached this process at
   * `receivedAt`, with its `Date` header `dateMs`: never later than the end of that header's second.
   */
  latestAt(receivedAt: number, dateMs: number): number {
    return Math.min(dateMs + 1000, receivedAt + this.high);
  }
}
