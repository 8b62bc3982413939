export interface RequestLogEntry {
  /** `api` for the service's origin, `download` for the origin serving signed code URLs. */
  origin: "api" | "download";
  method: string;
  /** Path and query string as requested; signatures of download URLs are left out. */
  path: string;
  /** The route pattern that matched, e.g. `/api/v2/policies/:policyId`; undefined for unknown routes. */
  route: string | undefined;
  /** 0 when the connection was reset instead of answered. */
  status: number;
  /** Set when the client went away before its request was whole (e.g. an upload cut short). */
  clientAborted?: boolean;
  durationMs: number;
  at: string;
}

/** How many entries the log keeps by default: enough for any test run, bounded for a server left running. */
export const defaultRequestLogSize = 10_000;

/**
 * The newest requests the server answered, oldest first, at most `capacity` of them (a ring buffer: a server
 * left running for days holds a fixed amount). Holds no header, so never the token.
 */
export class RequestLog {
  private ring: RequestLogEntry[] = [];
  /** Index of the oldest entry once the ring is full. */
  private start = 0;
  private readonly listeners: ((entry: RequestLogEntry) => void)[] = [];

  constructor(private readonly capacity = defaultRequestLogSize) {
    if (!Number.isSafeInteger(capacity) || capacity < 1) {
      throw new Error(`requestLogSize must be a whole number of 1 or more, not ${capacity}`);
    }
  }

  /** A copy: later requests do not change it. */
  entries(): RequestLogEntry[] {
    return [...this.ring.slice(this.start), ...this.ring.slice(0, this.start)];
  }

  add(entry: RequestLogEntry): void {
    if (this.ring.length < this.capacity) {
      this.ring.push(entry);
    } else {
      this.ring[this.start] = entry;
      this.start = (this.start + 1) % this.capacity;
    }
    for (const listener of this.listeners) listener(entry);
  }

  clear(): void {
    this.ring = [];
    this.start = 0;
  }

  onEntry(listener: (entry: RequestLogEntry) => void): void {
    this.listeners.push(listener);
  }
}
