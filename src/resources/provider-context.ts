import * as pulumi from "@pulumi/pulumi";
import { TfeClient } from "../client/client";
import { resolveClientConfig } from "../client/config";
import { TfeApiError, tfeCause } from "../client/errors";
import type { PolicySet as ServicePolicySet } from "../client/policy-sets";
import { segmentProblem } from "../contract/paths";
import { defaultImpactSettings, type ImpactSettings } from "../impact";
import { packageDoc } from "../process/package-version";
import { EngineLog } from "./engine-log";
import {
  FailureReport,
  type Operation,
  organizationAdvice,
  quiet,
  recordedConfigAdvice,
  stackConfigAddresses,
} from "./failure-report";
import { describeFindings, type Enforcement, type Finding, weakenings } from "./guard";
import { codeChecksRequired, inNamespace, policyTestsRequired, strictSwitch } from "./provider-settings";
import { commandRunsProgram } from "./pulumi-command";
import { isUnknown } from "./unknown";

export { holdsUnknown, isUnknown, knownIds, unknownValue } from "./unknown";
export { inNamespace };

export type CheckFailure = pulumi.dynamic.CheckFailure;

/**
 * What every provider of this library shares: the client, built from the provider's stack config (`tfe:token`,
 * `tfe:address`, `tfe:hostname`) when the engine configures it, else from the environment and the Terraform
 * credentials file. The token stays inside the client; nothing here returns or logs it.
 */
export class ProviderContext {
  /**
   * Ids that a create of this operation made or adopted. The engine runs one provider process per operation, so
   * this is the operation's memory of what it took on: a second resource of the stack declaring one of them is
   * refused, and the delete of a renamed resource's old entry leaves alone what its new entry just adopted.
   */
  readonly claimed = new Map<string, "created" | "adopted">();

  /**
   * How far back and with how many requests a preview reads whom a stricter policy would block:
   * `tfe:impactWindowDays` (`TFE_IMPACT_WINDOW_DAYS`, 0 turns the reads off) and `tfe:impactRequestBudget`
   * (`TFE_IMPACT_REQUEST_BUDGET`). CheckConfig and the program's checks refuse values that are not whole numbers.
   */
  get impactSettings(): ImpactSettings {
    const whole = (key: string, variable: string, fallback: number) => {
      const text = this.stackConfig?.get(key) ?? process.env[variable];
      return text !== undefined && /^\d+$/.test(text) ? Number(text) : fallback;
    };
    return {
      windowDays: whole("impactWindowDays", "TFE_IMPACT_WINDOW_DAYS", defaultImpactSettings.windowDays),
      requestBudget: whole("impactRequestBudget", "TFE_IMPACT_REQUEST_BUDGET", defaultImpactSettings.requestBudget),
    };
  }

  /**
   * `tfe:requireNoBlockedRuns` (or `TFE_REQUIRE_NO_BLOCKED_RUNS`) set to `true`: a raised level that recent runs
   * failed is refused at preview, unless the resource sets `allowStricter`.
   */
  get requireNoBlockedRuns(): boolean {
    return strictSwitch(
      (key) => this.stackConfig?.get(key),
      "requireNoBlockedRuns",
      "TFE_REQUIRE_NO_BLOCKED_RUNS",
      "to refuse a stricter change unless it is known to block no recent run",
    );
  }

  /**
   * What asked for certainty, as the user set it, for a refusal to name: the stack's setting, or the environment
   * variable (a shell may export it for other work, where the stack says nothing of it).
   */
  get requireNoBlockedRunsSetBy(): string {
    if (this.stackConfig?.get("requireNoBlockedRuns") !== undefined) return "tfe:requireNoBlockedRuns";
    return "TFE_REQUIRE_NO_BLOCKED_RUNS=true";
  }

  /**
   * `tfe:requirePolicyTests` (or `TFE_REQUIRE_POLICY_TESTS`) set to `true`: a folder whose own tests fail or cannot run
   * is refused at preview, instead of a warning.
   */
  get requirePolicyTests(): boolean {
    return policyTestsRequired((key) => this.stackConfig?.get(key));
  }

  /**
   * `tfe:verifyCodeOnRefresh` (or `TFE_VERIFY_CODE_ON_REFRESH`) set to `true`: refresh downloads every policy's code,
   * instead of only code whose `updated-at` moved since the state recorded it.
   */
  get verifyCodeOnRefresh(): boolean {
    return (this.stackConfig?.get("verifyCodeOnRefresh") ?? process.env.TFE_VERIFY_CODE_ON_REFRESH) === "true";
  }

  /**
   * Every change that weakens governance is allowed, with a warning: stack config `tfe:allowWeakening` set to
   * `true`, or `TFE_ALLOW_WEAKENING=true` in the environment of one command (an approval that edits nothing).
   */
  get allowWeakening(): boolean {
    return this.stackConfig?.get("allowWeakening") === "true" || process.env.TFE_ALLOW_WEAKENING === "true";
  }

  /** What let a weakening through, as the user set it: the resource's argument, the stack's setting, or the env. */
  private weakeningAllowedBy(onResource: boolean): string {
    if (onResource) return "allowWeakening";
    if (this.stackConfig?.get("allowWeakening") === "true") return "tfe:allowWeakening";
    return "TFE_ALLOW_WEAKENING=true";
  }

  /**
   * The guard of every resource: `after` compared with `before` (see {@link weakenings}). Where nothing weakens,
   * undefined. Where something does or cannot be compared, the refusal's text, naming each finding and every way to
   * allow it; where allowed (on the resource, the stack, or for one run), undefined, with a warning under the
   * resource naming what it let through. The text names no input's value.
   */
  async judge(change: {
    subject: string;
    what: "policy" | "policy set" | "policy folder";
    before: Enforcement;
    /**
     * What the service enforces now, read at preview, where it may be stricter than the state knows (changed
     * outside Pulumi since the last refresh): the change is compared with both.
     */
    onService?: Enforcement | undefined;
    after: Enforcement;
    allowedOnResource: boolean;
    urn: unknown;
    /** Rewrites each finding's text before it is shown (a policy id with its name). */
    describe?: (findings: Finding[]) => Promise<Finding[]>;
  }): Promise<string | undefined> {
    let findings = weakenings(change.before, change.after, change.what);
    if (change.onService) {
      const known = new Set(findings.map((finding) => finding.text));
      for (const finding of weakenings(change.onService, change.after, change.what)) {
        if (known.has(finding.text)) continue;
        findings.push({ ...finding, text: `${finding.text} (as the service holds it now: changed outside Pulumi)` });
      }
    }
    if (findings.length === 0) return undefined;
    if (change.describe) findings = await change.describe(findings);
    const text = describeFindings(change.subject, findings);
    if (change.allowedOnResource || this.allowWeakening) {
      await this.warn(change.urn, `${text} (allowed by ${this.weakeningAllowedBy(change.allowedOnResource)})`);
      return undefined;
    }
    return inNamespace(
      `${text}. If that is intended, set allowWeakening: true on this resource, run "pulumi config set ` +
        'tfe:allowWeakening true" for the stack, or set TFE_ALLOW_WEAKENING=true for one run. Pulumi stops at the ' +
        "first resource refused: TFE_ALLOW_WEAKENING=true pulumi preview lists every weakening of the change, as " +
        "warnings, and changes nothing",
      this.namespace,
    );
  }

  /**
   * A checker of policy code is missing (no `opa`): with `tfe:requireCodeChecks` (or `TFE_REQUIRE_CODE_CHECKS`)
   * set to `true` that fails, naming the fix; without, a warning says once per run what went unchecked.
   */
  missingChecker(fail: (reason: string) => void, what: string, why: string): void {
    if (codeChecksRequired((key) => this.stackConfig?.get(key))) {
      fail(
        `${what} was not checked: ${why}, and tfe:requireCodeChecks (or TFE_REQUIRE_CODE_CHECKS) asks for every ` +
          `check: install OPA (${packageDoc("ci.md")} shows how in CI), or put it on PATH`,
      );
      return;
    }
    warnOnce(
      what,
      `warning: ${what} was not checked: ${why}. Install OPA to check it at preview (${packageDoc("ci.md")}), and set ` +
        "tfe:requireCodeChecks true (or TFE_REQUIRE_CODE_CHECKS=true in CI) to make a missing checker an error",
    );
  }

  private readonly engineLog = new EngineLog();

  /**
   * How a message reads in the program's language: settings under this provider's namespace; where the plugin serves
   * another language, its arguments as that language spells them (src/plugin/program-language.ts).
   */
  wording: (message: string) => string = (message) => inNamespace(message, this.namespace);

  /** A fact the engine shows under the resource, which no diff can show (a secret that changed). */
  info(urn: unknown, message: string): Promise<void> {
    return this.engineLog.info(urn, this.wording(message));
  }

  /**
   * A warning about the resource of `urn` (its inputs' `__urn`): Pulumi shows it under that resource; without a URN,
   * on stderr, where Pulumi shows it under the stack.
   */
  warn(urn: unknown, message: string): Promise<void> {
    return this.engineLog.warn(urn, this.wording(message));
  }

  private readonly policySets = new Map<string, Promise<ServicePolicySet | undefined>>();

  /**
   * A policy set as the service holds it, read once per operation however many resources name it; undefined when it
   * does not exist or this token cannot see it (the service answers 404 to both).
   */
  policySetOf(id: string): Promise<ServicePolicySet | undefined> {
    let read = this.policySets.get(id);
    if (!read) {
      read = this.client.policySets.read(id).catch((error: unknown) => {
        if (error instanceof TfeApiError && error.status === 404) return undefined;
        this.policySets.delete(id);
        throw error;
      });
      this.policySets.set(id, read);
    }
    return read;
  }

  /** Whether a create of this operation adopted `id`: then it is another resource's now, not to be deleted. */
  adoptedThisOperation(id: string): boolean {
    return this.claimed.get(id) === "adopted";
  }
  private stackConfig: { get(key: string): string | undefined } | undefined;
  private cachedClient: TfeClient | undefined;

  configure(request: pulumi.dynamic.ConfigureRequest): void {
    const config = request.config;
    this.configureFrom((key) => {
      const value: unknown = config.get(`tfe:${key}`);
      return typeof value === "string" ? value : undefined;
    }, "tfe");
  }

  /**
   * The settings of the provider, from `get` (a key without its namespace: `token`), under `namespace`: `tfe` for
   * the Node.js dynamic providers, `tfegov` for the plugin that serves other languages. Messages name the namespace.
   */
  configureFrom(get: (key: string) => string | undefined, namespace: string): void {
    this.stackConfig = { get };
    this.namespace = namespace;
    this.cachedClient = undefined;
  }

  /** The namespace of the provider's settings, as the program wrote them (`tfe`, or `tfegov` from other languages). */
  namespace = "tfe";

  /** The organization of a resource that names none: the provider's `organization` setting, then the env. */
  get defaultOrganization(): string | undefined {
    return this.stackConfig?.get("organization") ?? (process.env.TFE_ORGANIZATION || undefined);
  }

  get client(): TfeClient {
    if (!this.cachedClient) {
      this.cachedClient = TfeClient.fromConfig({
        stackConfig: this.stackConfig,
        signal: this.cancellation.signal,
        // A program's ways: a resource takes no token of its own (the client's token option is no program's word).
        tokenWays:
          'the stack\'s config ("pulumi config set --secret tfe:token ..."); the TFE_TOKEN environment variable',
      });
    }
    return this.cachedClient;
  }

  /** Aborted when the engine cancels the run: the context's client then sends nothing more (see `cancel`). */
  private readonly cancellation = new AbortController();

  /**
   * The engine's Cancel (Ctrl-C): no request is sent after it, reads and waits to retry stop at once, a write in
   * flight finishes, and each operation then fails as a failure half-way does, its state recording what it did.
   */
  cancel(): void {
    this.cancellation.abort();
  }

  /** Whether the engine cancelled this context's command. */
  get cancelled(): boolean {
    return this.cancellation.signal.aborted;
  }

  /** Lets tests and scripts use an explicit client. */
  useClient(client: TfeClient): void {
    this.cachedClient = client;
  }

  /** Where this process's failures are said once per cause (shared by every provider of the process). */
  failures = sharedFailureReport;

  /** The Pulumi project's directory, whose stack files say the stack config of now: the provider runs there. */
  projectDir = process.cwd();

  /**
   * `error` of `operation` on `what` as the engine should show it: a cause every resource meets (the service down,
   * the token refused) in full once per run, with the advice about recorded stack config only where that can be
   * the cause (see failure-report.ts); a later failure of the same cause as its request and a pointer.
   */
  explainFailure(error: unknown, operation: Operation, what: string): unknown {
    const settings = () => {
      try {
        return resolveClientConfig({ stackConfig: this.stackConfig });
      } catch {
        return undefined;
      }
    };
    return this.failures.explain(error, what, settings, () => {
      const cause = tfeCause(error);
      const used = settings();
      if (cause && organizationAdvice(cause)) return organizationAdvice(cause);
      if (!cause || !used || !this.stackConfig) return undefined;
      return recordedConfigAdvice(
        cause,
        used,
        operation,
        this.namespace,
        () => stackConfigAddresses(this.namespace, this.projectDir),
        () => commandRunsProgram(),
      );
    });
  }
}

/**
 * A change the guard refused, thrown from `diff` (where the engine hands the provider the state's outputs, the
 * baseline): the engine shows its message under the resource and stops before any request. It carries no stack:
 * the message is the whole of it.
 */
export class GovernanceRefusal extends Error {
  constructor(message: string) {
    super(message);
    this.name = "GovernanceRefusal";
    this.stack = message;
  }
}

/** An object of an organization, as a listing names it. */
export interface NamedObject {
  id: string;
  name: string;
  kind: string;
}

/**
 * The names an organization's objects of one kind (policies, policy sets) hold, listed once per operation: every
 * create and rename checks its name there at preview, for one listing (a page per 100 objects) however many check.
 * The provider process lives for one operation, so the listing is as fresh as the preview.
 */
export class NameListings {
  private readonly listings = new Map<string, Promise<ReadonlyMap<string, NamedObject>>>();
  /**
   * Names that resources of this stack held before the operation, as their checks showed. A replacement is checked
   * twice, the second time as a create (no old inputs): the name it finds held there is its own old object's.
   */
  private readonly heldByStack = new Map<string, unknown>();

  /** Records that a resource of this stack (`urn`) holds `name` (its check had old inputs). */
  heldHere(organization: string, name: string, urn?: unknown): void {
    this.heldByStack.set(`${organization}\0${name}`, urn);
  }

  isHeldHere(organization: string, name: string): boolean {
    return this.heldByStack.has(`${organization}\0${name}`);
  }

  /** The resource of this stack that held `name`, as its check said (undefined where none, or none said). */
  heldBy(organization: string, name: string): unknown {
    return this.heldByStack.get(`${organization}\0${name}`);
  }

  constructor(private readonly list: (organization: string) => AsyncIterable<NamedObject>) {}

  async holder(organization: string, name: string): Promise<NamedObject | undefined> {
    let listing = this.listings.get(organization);
    if (!listing) {
      listing = (async () => {
        const names = new Map<string, NamedObject>();
        for await (const object of this.list(organization)) names.set(object.name, object);
        return names;
      })();
      // A failed listing is not kept: the next check asks again, and says why it failed itself.
      listing.catch(() => this.listings.delete(organization));
      this.listings.set(organization, listing);
    }
    return (await listing).get(name);
  }
}

/**
 * At preview, the object that already holds the name a create (or a rename) would take, unless the resource adopts
 * what it finds: the service refuses the name at apply, so a pull request's preview must fail instead.
 * `holder` answers from {@link NameListings}; nothing is read when the name, the organization or the adoption is
 * not known yet, or when there are failures already. A name a resource of this stack held before is passed: the
 * engine checks a replacement a second time as a create, and its old object still holds the name then.
 */
export async function takenNameHolder(
  failures: CheckFailure[],
  olds: Record<string, unknown>,
  inputs: Record<string, unknown>,
  names: NameListings,
): Promise<NamedObject | undefined> {
  if (typeof olds.name === "string" && typeof olds.organization === "string") {
    names.heldHere(olds.organization, olds.name, inputs.__urn);
  }
  const { name, organization, adoptExisting } = inputs;
  if (failures.length > 0 || typeof name !== "string" || typeof organization !== "string") return undefined;
  if (isUnknown(name) || isUnknown(organization) || isUnknown(adoptExisting)) return undefined;
  if (olds.name === name && olds.organization === organization) return undefined;
  // A name a resource of this stack held is no taken name to refuse (a replacement's second check, as a create, finds
  // its own old object; a rename; a swap of names). But one adopted from another resource of the stack is compared
  // like any adoption: what it declares against what the service holds.
  if (names.isHeldHere(organization, name)) {
    const holder = names.heldBy(organization, name);
    const fromAnother = adoptExisting === true && holder !== undefined && holder !== inputs.__urn;
    if (!fromAnother) return undefined;
  }
  return names.holder(organization, name);
}

/**
 * Reads that share one listing during an operation. The engine refreshes every resource at once, each with a read of
 * its own: the first read of a key (an organization, a module) goes alone, so a resource refreshed alone still costs
 * one request, and every later read of that key waits for one listing, fetched once however many wait. The provider
 * process lives for one operation, so nothing read here outlives it.
 */
export class SharedListings<T> {
  private readonly reads = new Map<string, number>();
  private readonly listings = new Map<string, Promise<ReadonlyMap<string, T> | undefined>>();

  /**
   * The listing of `key` to answer from, or undefined where this read should go alone: the first read of the key,
   * and every read where `fetch` gave up (it is told how many reads of the key there are so far, to weigh a long
   * listing against as many single reads).
   */
  async listing(
    key: string,
    fetch: (reads: () => number) => Promise<ReadonlyMap<string, T> | undefined>,
  ): Promise<ReadonlyMap<string, T> | undefined> {
    const reads = (this.reads.get(key) ?? 0) + 1;
    this.reads.set(key, reads);
    if (reads === 1) return undefined;
    let listing = this.listings.get(key);
    if (!listing) {
      // A failed listing costs nothing but the shortcut: each read goes alone, and says why it failed itself.
      listing = fetch(() => this.reads.get(key) ?? 0).catch(() => undefined);
      this.listings.set(key, listing);
    }
    return listing;
  }
}

/** How a resource reaches one kind of object, for {@link deleteConfirmingGone} and {@link answersNotFound}. */
export interface ObjectAccess {
  /** `policy`, `policy set`: what messages call the object. */
  what: string;
  remove(id: string): Promise<void>;
  read(id: string): Promise<unknown>;
  /** Lists one page of the organization's objects of this kind: the token's view of them. */
  listOne(organization: string): Promise<unknown>;
}

/**
 * Whether a 404 for an object of `organization` means it is gone: the service answers 404 to a token without
 * access too, so the token must be able to list that organization's objects. Without an organization (an object
 * read by id alone, as `get` does) there is nothing more to ask.
 */
export async function answersNotFound(access: ObjectAccess, organization: string | undefined): Promise<boolean> {
  if (organization === undefined) return true;
  try {
    await access.listOne(organization);
    return true;
  } catch (error) {
    if (error instanceof TfeApiError && error.status === 404) return false;
    throw error;
  }
}

/**
 * Deletes the object; a 404 is success only when the object is gone for a token that could see it. Otherwise the
 * error says why it stays in state: still there (the token may not delete it), or not visible to this token.
 */
export async function deleteConfirmingGone(
  access: ObjectAccess,
  id: string,
  organization: string | undefined,
): Promise<void> {
  try {
    await access.remove(id);
  } catch (error) {
    if (!(error instanceof TfeApiError && error.status === 404)) throw error;
    const stillThere = await access.read(id).then(
      () => true,
      (readError: unknown) => {
        if (readError instanceof TfeApiError && readError.status === 404) return false;
        throw readError;
      },
    );
    if (!stillThere && (await answersNotFound(access, organization))) return;
    throw new Error(
      `deleting ${access.what} ${id} failed: the service answered 404, but ` +
        (stillThere
          ? `the ${access.what} is still there and enforcing: the token lacks the team permission "Manage policies"`
          : `this token cannot list the ${access.what === "policy" ? "policies" : `${access.what}s`} of organization "${organization}" either`) +
        `; it stays in state. Use a token that may manage policies in "${organization}" ` +
        "(tfe:token, TFE_TOKEN or the credentials file)",
    );
  }
}

/**
 * The failure of a create or update that changed the service part of the way: Pulumi's dynamic provider hands an
 * error with `id` and `properties` to the engine as a resource that failed to initialize, and the engine records
 * it with these properties (a create is not left outside the state) and updates it at the next `up`.
 */
export function partialFailure(error: Error, id: string, properties: object): Error {
  return Object.assign(new Error(error.message), { id, properties, reasons: [error.message] });
}

const warned = new Set<string>();

/** Whether `key` is met for the first time in this command: what is said once per command is said then. */
export function firstThisCommand(key: string): boolean {
  if (warned.has(key)) return false;
  warned.add(key);
  return true;
}

/**
 * Prints `message` once per Pulumi command, however many resources meet it: a provider process serves one command,
 * and an attached one (PULUMI_DEBUG_PROVIDERS) forgets at each new command (`forgetSaidOnce`).
 */
export function warnOnce(key: string, message: string): void {
  if (firstThisCommand(key)) console.error(message);
}

/** One per command, for every resource type: cleared with the said-once keys at each new command. */
const sharedFailureReport = new FailureReport();

/** A new command (see provider-set.ts `startCommand`): what the last said once is said again in this one's output. */
export function forgetSaidOnce(): void {
  warned.clear();
  sharedFailureReport.clear();
}

/** What every provider of this library starts from: its context, configured by the engine. */
export abstract class ContextProvider {
  readonly context = new ProviderContext();

  async configure(request: pulumi.dynamic.ConfigureRequest): Promise<void> {
    this.context.configure(request);
  }
}

/** What a failing operation was working on, for a message: the resource's id, else the name it declares. */
function subject(type: string, id: unknown, props: unknown): string {
  const name = (props as { name?: unknown } | undefined)?.name;
  if (typeof id === "string" && id) return `${type} ${id}`;
  return typeof name === "string" ? `${type} ${JSON.stringify(name)}` : type;
}

/**
 * `provider`, each operation's failure told once, where it belongs ({@link ProviderContext.explainFailure} and
 * {@link quiet}): what every provider of this library is served as.
 */
export function withFailureReports<P extends ContextProvider & pulumi.dynamic.ResourceProvider>(
  provider: P,
  type: string,
): P {
  const explain = (error: unknown, operation: Operation, what: string) =>
    quiet(provider.context.explainFailure(error, operation, what));
  const { check, diff, create, read, update, delete: remove } = provider;
  if (check) {
    provider.check = (olds, news) =>
      check.call(provider, olds, news).catch((error: unknown) => {
        throw explain(error, "check", subject(type, undefined, news));
      });
  }
  if (diff) {
    provider.diff = (id, olds, news) =>
      diff.call(provider, id, olds, news).catch((error: unknown) => {
        throw explain(error, "diff", subject(type, id, news));
      });
  }
  if (create) {
    provider.create = (inputs) =>
      create.call(provider, inputs).catch((error: unknown) => {
        throw explain(error, "create", subject(type, undefined, inputs));
      });
  }
  if (read) {
    provider.read = (id, props) =>
      read.call(provider, id, props).catch((error: unknown) => {
        throw explain(error, "read", subject(type, id, props));
      });
  }
  if (update) {
    provider.update = (id, olds, news) =>
      update.call(provider, id, olds, news).catch((error: unknown) => {
        throw explain(error, "update", subject(type, id, news));
      });
  }
  if (remove) {
    provider.delete = (id, props) =>
      remove.call(provider, id, props).catch((error: unknown) => {
        throw explain(error, "delete", subject(type, id, props));
      });
  }
  return provider;
}

/** In a Pulumi program: the organization a resource uses when none is given (`tfe:organization`, then the env). */
export function defaultOrganization(): string | undefined {
  return new pulumi.Config("tfe").get("organization") ?? process.env.TFE_ORGANIZATION;
}

/** Validates a value that goes into a request path; the failure names the property. */
export function checkPathValue(failures: CheckFailure[], property: string, value: unknown, fix: string): void {
  if (isUnknown(value)) return;
  const problem = segmentProblem(value);
  if (problem) failures.push({ property, reason: `${property} ${problem}: ${fix}` });
}

/** The organization rule every resource shares. */
export function checkOrganization(failures: CheckFailure[], value: unknown): void {
  checkPathValue(failures, "organization", value, 'set it, or set "pulumi config set tfe:organization <name>"');
}

/** The `keys` whose new value is not known yet or differs from the old one. */
/**
 * A diff with the properties it found changed, each as its path (`["enforcementLevel"]`, `["parameters", "region"]`):
 * what the plugin turns into the detailed diff other languages show (src/plugin/detailed-diff.ts). Node.js programs
 * show the inputs' own diff; the dynamic-provider host passes on only the fields it knows.
 */
export interface DiffWithChanges extends pulumi.dynamic.DiffResult {
  changed: string[][];
}

export function changedProperties<K extends string>(
  olds: { [P in K]?: unknown },
  news: { [P in K]?: unknown },
  keys: readonly K[],
): K[] {
  return keys.filter((key) => isUnknown(news[key]) || !sameValue(olds[key], news[key]));
}

/**
 * `a` and `b` hold the same value, treating `undefined` and `null` alike, and objects alike whatever the order of
 * their keys: the engine hands back objects from state with their keys sorted, a program has them in its own order.
 */
export function sameValue(a: unknown, b: unknown): boolean {
  return JSON.stringify(a ?? null, sortedKeys) === JSON.stringify(b ?? null, sortedKeys);
}

function sortedKeys(_key: string, value: unknown): unknown {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return value;
  return Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** What ids of one kind look like, for {@link checkIdList}: `pol-...`, `polset-...`, `ws-...`, `prj-...`. */
export interface IdShape {
  what: string;
  pattern: RegExp;
  example: string;
}

/**
 * A list of service ids, checked: each looks like an id of its kind (a name is the usual slip), and the list comes
 * back without repeats, sorted, as state keeps it. Unknown values (preview) pass as they are.
 */
export function checkIdList(failures: CheckFailure[], property: string, value: unknown, shape: IdShape): unknown {
  if (value === undefined || value === null) return [];
  if (isUnknown(value)) return value;
  if (!Array.isArray(value) || value.some((id) => !isUnknown(id) && (typeof id !== "string" || id === ""))) {
    failures.push({ property, reason: `${property} must be a list of ${shape.what} ids, e.g. ["${shape.example}"]` });
    return value;
  }
  value.forEach((id, index) => {
    if (isUnknown(id) || shape.pattern.test(id)) return;
    failures.push({
      property,
      reason:
        `${property}[${index}] ${JSON.stringify(id)} is not a ${shape.what} id: ${shape.what} ids look like ` +
        `${shape.example}; a ${shape.what}'s name is not its id`,
    });
  });
  return value.some(isUnknown) ? value : [...new Set(value as string[])].sort();
}
