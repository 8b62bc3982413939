import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { ResolvedClientConfig } from "../client/config";
import { TfeApiError, TfeConnectionError, tfeCause } from "../client/errors";

// What a failed operation says. One provider process serves a whole `pulumi` command, so a cause every resource
// meets (the service down, a token refused) is said in full once, by the first resource that meets it; the others
// name their request and point at it. The advice about the stack config Pulumi recorded at the last `up` is given
// only where it can be the cause: the address the stack's config holds now differs from the recorded one (or the
// stack's config cannot be read), or a refused token came from stack config, which the provider cannot read now.

/** The settings the failed request used, and where they came from, as the client resolved them. */
export type UsedSettings = Pick<ResolvedClientConfig, "address" | "addressSource" | "tokenSource">;

export type Operation = "check" | "diff" | "create" | "update" | "read" | "delete";

/**
 * A cause every resource of a run meets alike: no connection to an address, a token it refused, or an organization
 * the service does not show this token.
 */
function sharedCause(cause: TfeApiError | TfeConnectionError, settings: UsedSettings): string | undefined {
  if (cause instanceof TfeConnectionError) return `${cause.code} at ${settings.address}`;
  if (cause.status === 401 || cause.status === 403) return `${cause.status} from ${settings.address}`;
  if (cause.organizationNotFound !== undefined) {
    return `404 for organization "${cause.organizationNotFound}" at ${settings.address}`;
  }
  return undefined;
}

/**
 * Which setting names the organization a 404 says is missing, or undefined for any other failure: what resources and
 * read functions alike say. `alsoNamedBy`: what else of the caller names it (the resource's organization).
 */
export function organizationAdvice(
  cause: TfeApiError | TfeConnectionError,
  alsoNamedBy = "the resource's organization",
): string | undefined {
  if (!(cause instanceof TfeApiError) || cause.organizationNotFound === undefined) return undefined;
  return (
    `Check the organization's name in tfe:organization (or TFE_ORGANIZATION, or ${alsoNamedBy}), and that the ` +
    "token belongs to that organization"
  );
}

/**
 * `error` with {@link organizationAdvice} said after it where an organization the token does not see caused it: a
 * read function's failure, which no provider's failure report tells.
 */
export function withOrganizationAdvice(error: unknown, alsoNamedBy: string): unknown {
  const cause = tfeCause(error);
  const advice = cause && organizationAdvice(cause, alsoNamedBy);
  if (advice && error instanceof Error) error.message += `. ${advice}`;
  return error;
}

/**
 * The plain `<namespace>:address` values of the project's stack files (`Pulumi.<stack>.yaml` in the project's
 * directory, or its `stackConfigDir`): undefined when none can be read. The provider runs in the project's directory
 * but is not told which stack it serves, so every stack file is read; this is advice, not a decision.
 */
export function stackConfigAddresses(namespace: string, projectDir = process.cwd()): string[] | undefined {
  try {
    const project = readFileSync(join(projectDir, "Pulumi.yaml"), "utf8");
    const configDir = /^stackConfigDir:\s*["']?([^"'\n#]+?)["']?\s*$/m.exec(project)?.[1];
    const dir = configDir ? join(projectDir, configDir) : projectDir;
    const files = readdirSync(dir).filter((file) => /^Pulumi\.[^.]+\.ya?ml$/.test(file));
    if (files.length === 0) return undefined;
    const setting = new RegExp(`^\\s+${namespace}:address:\\s*["']?([^"'\\s#]+)["']?\\s*$`, "m");
    return files.flatMap((file) => setting.exec(readFileSync(join(dir, file), "utf8"))?.[1] ?? []);
  } catch {
    return undefined;
  }
}

/** The commands that run the program, and so read the stack config of now, for an operation's command. */
function runProgramCommands(operation: Operation): string {
  return operation === "delete"
    ? '"pulumi destroy --run-program"'
    : '"pulumi refresh --run-program" or "pulumi preview --refresh --run-program"';
}

/**
 * Why a setting Pulumi recorded at the last `up` may be the cause, or undefined when it cannot be: `refresh`,
 * `destroy` and the refresh of `--refresh` configure the provider with what the last program run recorded.
 */
export function recordedConfigAdvice(
  cause: TfeApiError | TfeConnectionError,
  settings: UsedSettings,
  operation: Operation,
  namespace: string,
  stackAddresses: () => string[] | undefined,
  /** Whether this command runs the program (`--run-program`): then the config is the stack's of now already. */
  runsProgram: () => boolean = () => false,
): string | undefined {
  if (operation !== "read" && operation !== "delete") return undefined;
  if (runsProgram()) return undefined;
  const run = `run ${runProgramCommands(operation)} (or set PULUMI_RUN_PROGRAM=true, as CI should)`;
  if (cause instanceof TfeApiError) {
    if (cause.status !== 401 || !settings.tokenSource.startsWith("stack config ")) return undefined;
    return (
      `${namespace}:token came from the stack config Pulumi recorded at the last "pulumi up" (refresh and destroy ` +
      `do not run the program): if it was rotated since, ${run}`
    );
  }
  if (!settings.addressSource.startsWith("stack config ")) return undefined;
  const now = stackAddresses();
  if (now?.includes(settings.address)) return undefined;
  const holds = !now
    ? "if it changed since"
    : now.length > 0
      ? `the stack's config now says ${now.join(" or ")}`
      : "the stack's config now sets none";
  return (
    `${settings.address} is ${namespace}:address as Pulumi recorded it at the last "pulumi up" (refresh and ` +
    `destroy do not run the program); ${holds}: ${run}`
  );
}

/** The failures of one provider process (one `pulumi` command): each shared cause is said in full once. */
export class FailureReport {
  private readonly said = new Map<string, string>();

  /** A new command starts: what the last one said is not shown in this one's output. */
  clear(): void {
    this.said.clear();
  }

  /**
   * `error` as the engine should show it for `what` (a resource's operation): the first failure of a shared cause
   * whole, with the advice that applies; a later one as its request and a pointer to the first.
   */
  explain(error: unknown, what: string, settings: () => UsedSettings | undefined, advice: () => string | undefined) {
    const cause = tfeCause(error);
    if (!(error instanceof Error) || !cause) return error;
    const used = settings();
    const key = used && sharedCause(cause, used);
    if (!key) return error;
    const first = this.said.get(key);
    if (first !== undefined) {
      error.message = `${cause.method} ${cause.path} failed: ${key}, as said in full for ${first}`;
      return error;
    }
    this.said.set(key, what);
    const more = advice();
    if (more) error.message += `. ${more}`;
    return error;
  }
}

/** Errors of a program's own making (a bug), whose stack is worth printing; any other failure is told by its message. */
function isDefect(error: unknown): boolean {
  return (
    error instanceof TypeError ||
    error instanceof ReferenceError ||
    error instanceof RangeError ||
    error instanceof SyntaxError
  );
}

/**
 * The engine shows an error a provider returns under its resource; Pulumi's Node.js provider hosts also print each
 * one to stderr (`${error}: ${error.stack}`), which the engine shows a second time under the stack, stack trace and
 * all. A failure is said once, where it belongs: `quiet` marks it, and the provider process's `console.error` leaves
 * out what is marked. A defect keeps its printed stack.
 */
const quietPrints = new Set<string>();

export function quiet(error: unknown): unknown {
  if (error instanceof Error && !isDefect(error)) {
    error.stack = `${error.name}: ${error.message}`;
    quietPrints.add(`${error}: ${error.stack}`);
  }
  return error;
}

/** Installs the filter {@link quiet} needs, once, in the provider process. */
export function silenceQuietFailures(): void {
  const print = console.error.bind(console);
  if ((console.error as { quietFailures?: true }).quietFailures) return;
  const filtered = (...args: unknown[]) => {
    if (args.length === 1 && typeof args[0] === "string" && quietPrints.delete(args[0])) return;
    print(...args);
  };
  console.error = Object.assign(filtered, { quietFailures: true as const });
}
