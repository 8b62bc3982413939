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
  durationMs: number;
  at: string;
}

/** Every request the server answered, oldest first. Holds no header, so never the token. */
export class RequestLog {
  private items: RequestLogEntry[] = [];
  private readonly listeners: ((entry: RequestLogEntry) => void)[] = [];

  /** A copy: later requests do not change it. */
  entries(): RequestLogEntry[] {
    return [...this.items];
  }

  add(entry: RequestLogEntry): void {
    this.items.push(entry);
    for (const listener of this.listeners) listener(entry);
  }

  clear(): void {
    this.items = [];
  }

  onEntry(listener: (entry: RequestLogEntry) => void): void {
    this.listeners.push(listener);
  }
}
