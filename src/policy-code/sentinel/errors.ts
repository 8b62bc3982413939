// What stops an evaluation: the program's own error (the specification's runtime errors, the `error` built-in), and
// what this evaluator does not know, which makes a test case "not run" rather than passed or failed. No I/O.
import type { Position } from "./lexer";

/** An error the Sentinel runtime would also raise: the policy errors, and its rules have no value. */
export class SentinelRuntimeError extends Error {
  constructor(
    message: string,
    readonly at?: Position,
    readonly file?: string,
  ) {
    super(message);
    this.name = "SentinelRuntimeError";
  }

  /** `file:line:column: message`, as far as it is known. */
  where(): string {
    const place = [this.file, this.at && `${this.at.line}:${this.at.column}`].filter(Boolean).join(":");
    return place ? `${place}: ${this.message}` : this.message;
  }
}

/** The policy called `error(...)`: a runtime error like the others; execution stops and the policy fails (Errors). */
export class PolicyErrorCalled extends SentinelRuntimeError {}

/** A construct, import or function this evaluator does not implement: whatever the runtime says is not known here. */
export class NotSupported extends Error {
  constructor(message: string) {
    super(message);
    this.name = "NotSupported";
  }
}
