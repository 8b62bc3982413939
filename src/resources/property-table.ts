import * as pulumi from "@pulumi/pulumi";
import { closestName } from "../contract/names";
import { type CheckFailure, defaultOrganization, isUnknown, sameValue, unknownValue } from "./provider-context";

export { closestName };

/** What an argument may hold; each kind names itself in the failure message. */
export type ArgumentKind = "string" | "boolean" | "number" | "string list" | "list" | "object";

/**
 * One property of a resource, declared once: what the program may pass for it (absent for what the provider derives,
 * such as a code hash), and what a change of it does on the service. `check` refuses what the table does not list
 * and what does not match its kind; `diff` takes its replace and update lists from it, the constructor its outputs.
 */
export interface PropertySpec {
  argument?: ArgumentKind;
  change: "replaces" | "updates" | "none";
  /** An output of the resource (`resource.<name>`), also when the program leaves it out or reads one with `get`. */
  output: boolean;
  /** How it meets the service; absent for what only the provider knows (a code hash, `adoptExisting`). */
  service?: ServiceBinding;
  /** An object whose keys are data (labels, paths, parameter keys): they cross the engine's wire escaped. */
  keyed?: true;
  /** Computed from these inputs: a secret wherever one of them is (see derived-secrets.ts). */
  secretWith?: readonly string[];
  /**
   * Computed from these arguments (a hash of the code, the policies read from a folder): a diff shows its change as
   * a change of the first of them the program set, the property the user wrote.
   */
  shownAs?: readonly string[];
  /**
   * An output that neither the program gives nor check derives (an id the service assigned, a count it keeps): the
   * properties whose change in an update changes it, `[]` for one that no update changes. Absent: any update may
   * change it. An update's preview shows it as state holds it where none of them changed, else as not known yet.
   */
  changesWith?: readonly string[];
}

/** How a property maps onto the client's view of the remote object (its type, its create and update options). */
export interface ServiceBinding {
  /** The client's name for it, where it differs (`id` for `policyId`). */
  as?: string;
  /** Sent when set in the create request; `"create and update"`: also in an update, when it changed. */
  sent?: "create" | "create and update";
  /** An update sends null to clear it (a description); other properties are never sent as null. */
  clears?: true;
  /**
   * What the service holds, read back into state; `"held, else declared"` keeps the declared value where the
   * service's answer says nothing (null or absent): the organization of a path, a level the answer left out.
   */
  read: "as held" | "held, else declared";
}

export type PropertyTable = Readonly<Record<string, PropertySpec>>;

/** The names of a table that a program may pass. */
export type ArgumentNames<T extends PropertyTable> = {
  [K in keyof T]: T[K] extends { argument: ArgumentKind } ? K : never;
}[keyof T];

type SameNames<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

/**
 * A resource's table, held to its args interface (`propertyTable<PolicyArgs>()({...})`): the build stops when the
 * table's arguments and the interface's properties differ, so the documented type and the checked one cannot drift.
 */
export function propertyTable<Args>() {
  return <const T extends PropertyTable>(
    table: T & (SameNames<ArgumentNames<T>, keyof Args> extends true ? unknown : "differs from the args interface"),
  ): T => table;
}

/** What `check` needs of a table; components and functions, which have no state, list only this. */
export type ArgumentTable = Readonly<Record<string, Partial<PropertySpec>>>;

/**
 * The resource's outputs, each `undefined`: Pulumi makes an output property only for the keys it is given, so every
 * declared output needs one, also where the program leaves the input out and for `get`.
 */
export function outputSlots(table: PropertyTable): Record<string, undefined> {
  return Object.fromEntries(Object.keys(table).flatMap((key) => (table[key]?.output ? [[key, undefined]] : [])));
}

/**
 * What a resource's constructor hands the engine: every output's slot, and unless the resource is read by id
 * (`opts.id`), the arguments with the organization and the name defaulted (`tfe:organization`, the resource's name)
 * and `derived` (arguments made ready for the provider) over them.
 */
export function declaredProps(
  table: PropertyTable,
  name: string,
  args: { organization?: unknown; name?: unknown },
  opts: pulumi.CustomResourceOptions | undefined,
  derived: Record<string, unknown> = {},
): Record<string, unknown> {
  const outputs = outputSlots(table);
  if (opts?.id) return outputs;
  return {
    ...outputs,
    ...args,
    organization: args.organization ?? defaultOrganization(),
    name: args.name ?? name,
    ...derived,
  };
}

/**
 * The program's arguments among `values`, what `read` gives the engine as the inputs of a resource it imports: never
 * a derived property (a hash, a size, a baseline), which `pulumi import` would hand back to `check` as an argument;
 * a flag only where it is on. A refresh keeps the inputs as check recorded them, derived ones included: dropping
 * them there would show every refresh as a change.
 */
/** Whether `props` hold no state at all: the engine reads an id it does not manage yet (`pulumi import`). */
export function importing(props: object): boolean {
  return Object.keys(props).every((key) => key.startsWith("__"));
}

export function argumentsOf(table: ArgumentTable, values: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(values).filter(
      ([key, value]) => table[key]?.argument !== undefined && value !== undefined && value !== false,
    ),
  );
}

/** The table's properties that meet the service, with their binding. */
function bound(table: PropertyTable): [string, ServiceBinding][] {
  return Object.entries(table).flatMap(([key, spec]) => (spec.service ? [[key, spec.service]] : []));
}

// The helpers below take and give plain objects: the table, not the compiler, ties their keys to the resource's
// interfaces and the client's types, so each caller names the type it gets back.

/** State from the service's object: every bound property as the binding reads it (lists as sorted sets). */
export function readFromService<State>(table: PropertyTable, remoteObject: object, declaredObject: object): State {
  const [remote, declared] = [remoteObject as Record<string, unknown>, declaredObject as Record<string, unknown>];
  const state: Record<string, unknown> = {};
  for (const [key, binding] of bound(table)) {
    const held = remote[binding.as ?? key];
    const value = held === null || held === undefined ? (binding.read === "as held" ? held : declared[key]) : held;
    state[key] = Array.isArray(value) ? [...value].sort() : value;
  }
  return state as State;
}

/** The service's object as the state recorded it: the inverse of {@link readFromService}. */
export function recordedRemote<Remote>(table: PropertyTable, stateObject: object): Remote {
  const state = stateObject as Record<string, unknown>;
  return Object.fromEntries(bound(table).map(([key, binding]) => [binding.as ?? key, state[key]])) as Remote;
}

/** The create request's options: every property sent at create that is set. */
export function createOptions<Options>(table: PropertyTable, declaredObject: object): Options {
  const declared = declaredObject as Record<string, unknown>;
  return Object.fromEntries(
    bound(table).flatMap(([key, binding]) =>
      binding.sent && declared[key] !== null && declared[key] !== undefined ? [[binding.as ?? key, declared[key]]] : [],
    ),
  ) as Options;
}

/** The update request's options: every property sent at update whose declared value differs from the held one. */
export function updateOptions<Options>(table: PropertyTable, heldObject: object, declaredObject: object): Options {
  const [held, declared] = [heldObject as Record<string, unknown>, declaredObject as Record<string, unknown>];
  return Object.fromEntries(
    bound(table).flatMap(([key, binding]) => {
      if (binding.sent !== "create and update" || sameValue(held[key], declared[key])) return [];
      const value = declared[key] ?? null;
      return value === null && !binding.clears ? [] : [[binding.as ?? key, value]];
    }),
  ) as Options;
}

/**
 * What an update will leave of a resource's outputs, as its preview answers before any request: the checked inputs
 * (`news`, with what check derives from them), and each output the update computes as state holds it where the update
 * leaves it ({@link PropertySpec.changesWith}, against the properties the resource's diff found `changed`), else not
 * known yet. A count or a version the service will compute anew is never shown at its old value; where the diff is
 * not known, nothing it might change is kept.
 */
export function outputsAfterUpdate(
  table: PropertyTable,
  olds: Record<string, unknown>,
  news: Record<string, unknown>,
  changed: ReadonlySet<string> | undefined,
): Record<string, unknown> {
  const outputs = { ...news };
  for (const [key, spec] of Object.entries(table)) {
    if (!spec.output || spec.argument !== undefined || key in news) continue;
    const kept = spec.changesWith?.every((property) => changed !== undefined && !changed.has(property));
    outputs[key] = kept && key in olds ? olds[key] : unknownValue;
  }
  return outputs;
}

/** The names whose change does `change`, in the table's order. */
export function propertiesThat<T extends PropertyTable>(
  table: T,
  change: PropertySpec["change"],
): (keyof T & string)[] {
  return Object.keys(table).filter((key) => table[key]?.change === change);
}

/** The properties of a table whose keys are data (see wire-keys.ts). */
export function keyedProperties(table: PropertyTable): string[] {
  return Object.keys(table).filter((key) => table[key]?.keyed === true);
}

const expectation: Record<ArgumentKind, { matches: (value: unknown) => boolean; wanted: string }> = {
  string: { matches: (value) => typeof value === "string", wanted: "a string" },
  boolean: { matches: (value) => typeof value === "boolean", wanted: "true or false" },
  number: {
    matches: (value) => typeof value === "number" && Number.isFinite(value) && value >= 0,
    wanted: "a number from 0",
  },
  "string list": {
    matches: (value) => Array.isArray(value) && value.every((item) => typeof item === "string" || isPending(item)),
    wanted: "a list of strings",
  },
  list: { matches: Array.isArray, wanted: "a list" },
  object: {
    matches: (value) => typeof value === "object" && value !== null && !Array.isArray(value),
    wanted: "an object",
  },
};

/**
 * The program's arguments against the table: a name the table does not know (with the closest one it does), a value
 * of another kind. Pulumi's own members (`__provider` and others with `__`) pass, as do values not known yet
 * (outputs of other resources during preview) and absent ones (`undefined`, `null`): other rules say what is required.
 */
export function argumentFailures(table: ArgumentTable, args: Record<string, unknown>, subject: string): CheckFailure[] {
  const names = Object.keys(table).filter((key) => table[key]?.argument !== undefined);
  const failures: CheckFailure[] = [];
  for (const [property, value] of Object.entries(args)) {
    if (property.startsWith("__")) continue;
    const kind = table[property]?.argument;
    if (kind === undefined) {
      const suggestion = closestName(property, names);
      failures.push({
        property,
        reason: suggestion
          ? `${property} is not a property of ${subject}: did you mean ${suggestion}?`
          : `${property} is not a property of ${subject}; its properties are ${names.join(", ")}`,
      });
      continue;
    }
    if (value === undefined || value === null || isPending(value)) continue;
    const { matches, wanted } = expectation[kind];
    if (!matches(value)) {
      failures.push({ property, reason: `${property} must be ${wanted}, not ${describe(value)}` });
    }
  }
  return failures;
}

/** {@link argumentFailures} for code that runs in the program (components, functions): throws them all at once. */
export function assertArguments(table: ArgumentTable, args: object, subject: string): void {
  if (typeof args !== "object" || args === null) throw new Error(`${subject} must be an object, not ${describe(args)}`);
  const failures = argumentFailures(table, args as Record<string, unknown>, subject);
  if (failures.length > 0) throw new Error(failures.map((failure) => failure.reason).join("; "));
}

/** Not known yet: Pulumi's unknown marker in a provider, an output or a promise in the program. */
function isPending(value: unknown): boolean {
  return isUnknown(value) || pulumi.Output.isInstance(value) || value instanceof Promise;
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "string") return `the string ${JSON.stringify(value)}`;
  if (typeof value === "object") return "an object";
  return `the ${typeof value} ${String(value)}`;
}
