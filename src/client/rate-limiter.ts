import { createHash } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";

/**
 * The share of the service's advertised limit the client paces to. The service counts requests as they arrive, and
 * network jitter can bunch requests that left evenly spaced; a twentieth in reserve absorbs that (a 429 that gets
 * through anyway slows the pace, see below) while keeping a paced run within about 5% of the time the limit itself
 * allows. (go-tfe paces at two thirds of the limit, plus a burst of a third.)
 */
export const shareOfAdvertisedLimit = 0.95;
/** After a 429, each second without another gives back this share of the ceiling. */
const recoveryPerSecond = 0.1;
/** A 429 never slows the pace below this many requests per second. */
const slowestRate = 1;

/**
 * Paces requests to stay under the service's rate limit, which the service announces in `X-RateLimit-Limit` on
 * its answers (go-tfe reads it the same way): at most 95% of it in any one-second window. An explicit
 * `requestsPerSecond` caps the pace further. Until an answer has told the limit, the first request goes alone and
 * the others wait for its answer; where no answer advertises a limit, nothing is held back.
 *
 * Two rules, both over send times. The window: at most `floor(rate)` sends in any one second (sliding), so a
 * service counting per second sees no more whatever second it counts; a token bucket of the same rate would let
 * twice that through in the first second (a full burst plus the refill). The spacing: sends leave one `1 / floor(rate)`
 * of a second apart, spread over the second rather than as a burst followed by a wait, so the window is never what
 * holds a request back for long, and answers come back at the pace they are asked. A send that a busy event loop
 * let leave late brings the next one forward by up to half a spacing, so late timers do not slow the pace; the
 * window still bounds what any second holds.
 *
 * A 429 holds every caller back until the service's reset time and halves the pace; each second without a 429
 * gives back a tenth of the ceiling. Processes that share a token, each with its own limiter, so settle on shares
 * of the limit rather than trading 429s until their retries run out.
 */
export class RateLimiter {
  readonly #configured: number | undefined;
  #advertised: number | undefined;
  /** Requests per second now: the ceiling, or less after a 429. Undefined while no limit is known. */
  #rate: number | undefined;
  #rateChangedAt = 0;
  /** Send times within the last window, oldest first. */
  readonly #sent: number[] = [];
  /** When the next send is due on the spacing. */
  #nextAt = 0;
  #pausedUntil = 0;
  #queue: Promise<void> = Promise.resolve();
  /** Open once any answer came back (or an attempt failed): from then on requests are paced by what is known. */
  #firstAnswer: Promise<void> | undefined;
  #openFirstAnswer: () => void = () => {};
  #probeSent = false;

  /** `requestsPerSecond`: a fixed cap. Without it the pace follows the service's `X-RateLimit-Limit` alone. */
  constructor(requestsPerSecond?: number) {
    if (requestsPerSecond !== undefined && !(requestsPerSecond > 0 && Number.isFinite(requestsPerSecond))) {
      throw new RangeError(`requestsPerSecond must be a number above 0, not ${requestsPerSecond}`);
    }
    this.#configured = requestsPerSecond;
    this.#rate = requestsPerSecond;
    if (requestsPerSecond === undefined) {
      this.#firstAnswer = new Promise((resolve) => {
        this.#openFirstAnswer = resolve;
      });
    }
  }

  /** The pace in requests per second right now; undefined while nothing limits it. */
  get requestsPerSecond(): number | undefined {
    return this.#currentRate(performance.now());
  }

  /** Resolves when the caller may send one request. Callers are served in order. */
  acquire(): Promise<void> {
    const turn = this.#queue.then(() => this.#takeTurn());
    this.#queue = turn;
    return turn;
  }

  /**
   * An attempt ended, with the limit its answer advertised (`X-RateLimit-Limit`). Anything but a positive number
   * (an answer without the header, or no answer at all) keeps the limit known so far.
   */
  answered(advertisedLimit: number | undefined): void {
    if (advertisedLimit !== undefined && advertisedLimit > 0 && Number.isFinite(advertisedLimit)) {
      if (advertisedLimit !== this.#advertised) {
        this.#advertised = advertisedLimit;
        const ceiling = this.#ceiling()!;
        this.#rate = Math.min(this.#rate ?? ceiling, ceiling);
        this.#rateChangedAt = performance.now();
      }
    }
    this.#openFirstAnswer();
  }

  /** The service answered 429: every caller waits `milliseconds` from now, and the pace halves. */
  rejected(milliseconds: number): void {
    const now = performance.now();
    this.#pausedUntil = Math.max(this.#pausedUntil, now + milliseconds);
    const rate = this.#currentRate(now);
    // The requests of one window that all met the limit count as one signal, not one halving each.
    if (rate !== undefined && now - this.#rateChangedAt >= 1000) {
      this.#rate = Math.max(slowestRate, rate / 2);
      this.#rateChangedAt = now;
    }
  }

  #ceiling(): number | undefined {
    const advertised = this.#advertised === undefined ? undefined : this.#advertised * shareOfAdvertisedLimit;
    if (advertised === undefined) return this.#configured;
    return this.#configured === undefined ? advertised : Math.min(this.#configured, advertised);
  }

  /** The pace, recovered towards the ceiling by the seconds gone since it last changed. */
  #currentRate(now: number): number | undefined {
    const ceiling = this.#ceiling();
    if (ceiling === undefined || this.#rate === undefined) return undefined;
    const seconds = Math.floor((now - this.#rateChangedAt) / 1000);
    if (this.#rate < ceiling && seconds > 0) {
      this.#rate = Math.min(ceiling, this.#rate + seconds * recoveryPerSecond * ceiling);
      this.#rateChangedAt += seconds * 1000;
    }
    return this.#rate;
  }

  async #takeTurn(): Promise<void> {
    if (this.#firstAnswer) {
      if (!this.#probeSent) {
        this.#probeSent = true;
        // It counts in the window once the limit is known: the first second holds it and the paced sends after it.
        this.#sent.push(performance.now());
        return;
      }
      await this.#firstAnswer;
      this.#firstAnswer = undefined;
    }
    for (;;) {
      const now = performance.now();
      let wait = this.#pausedUntil - now;
      const rate = this.#currentRate(now);
      const window = rate === undefined ? undefined : windowOf(rate);
      if (window) {
        const { capacity, windowMs } = window;
        while (this.#sent.length > 0 && this.#sent[0]! <= now - windowMs) this.#sent.shift();
        if (this.#sent.length >= capacity) {
          wait = Math.max(wait, this.#sent[this.#sent.length - capacity]! + windowMs - now);
        }
        wait = Math.max(wait, this.#nextAt - now);
      }
      if (wait <= 0) {
        if (window) {
          const spacing = window.windowMs / window.capacity;
          this.#sent.push(now);
          this.#nextAt = Math.max(this.#nextAt, now - spacing / 2) + spacing;
        }
        return;
      }
      await sleep(wait);
    }
  }
}

/**
 * The window rule at `rate` requests per second: `capacity` sends in any `windowMs`. A whole second for any rate
 * of 1 or more (28.5 per second is 28 in any second, never 28 in 982 ms); a fractional rate below 1, such as 0.5,
 * is one request in any two seconds.
 */
function windowOf(rate: number): { capacity: number; windowMs: number } {
  const capacity = Math.max(1, Math.floor(rate));
  return { capacity, windowMs: Math.max(1000, (capacity / rate) * 1000) };
}

const sharedLimiters = new Map<string, RateLimiter>();

/**
 * The service limits requests per token, so every client in this process that uses the same address and token
 * shares one limiter (keyed by a hash, so the token itself is not kept here). `requestsPerSecond`: a fixed cap on
 * top of the service's advertised limit; undefined follows the service alone.
 */
export function sharedRateLimiter(address: string, token: string, requestsPerSecond?: number): RateLimiter {
  const key = createHash("sha256")
    .update(`${address}\n${token}\n${requestsPerSecond ?? "service"}`)
    .digest("hex");
  let limiter = sharedLimiters.get(key);
  if (!limiter) {
    limiter = new RateLimiter(requestsPerSecond);
    sharedLimiters.set(key, limiter);
  }
  return limiter;
}
