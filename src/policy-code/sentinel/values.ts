// Sentinel's values at run time, as the specification describes them: undefined, null, booleans, integers (signed
// 64-bit, here `bigint`), floats (`number`), strings, lists, maps, functions, rules, and the objects imports hand
// out (a module's globals, a timespace, a version). Equality and the printed form. No I/O.
import type { Expression, Statement } from "./ast";
import type { Position } from "./lexer";

/** The value `undefined` (JavaScript's own `undefined` never stands for a Sentinel value). */
export const Undefined: unique symbol = Symbol("undefined");
export type UndefinedValue = typeof Undefined;

export type Value =
  | UndefinedValue
  | null
  | boolean
  | bigint
  | number
  | string
  | Value[]
  | SentinelMap
  | SentinelFunction
  | BuiltinFunction
  | Rule
  | HostObject;

/** A Sentinel function: its literal, and the scope it was written in (functions close over their blocks). */
export interface SentinelFunction {
  kind: "function";
  params: string[];
  body: Statement[];
  scope: Scope;
  /** The file it was written in, for messages. */
  file: string;
}

/** A function given by the runtime (a built-in, an import's function or a value's method). */
export interface BuiltinFunction {
  kind: "builtin";
  name: string;
  call(args: Value[], at: Position): Value;
}

/** A rule: evaluated when first used, then remembered (Rule Expressions). */
export interface Rule {
  kind: "rule";
  when?: Expression;
  body: Expression;
  scope: Scope;
  file: string;
  state: "new" | "evaluating" | "done";
  value?: Value;
}

/**
 * What an import hands out, and values with methods (a timespace, a decimal, a version): fields read by selector.
 * `get` gives JavaScript's `undefined` for a name it does not have, so that an unknown function of a standard import
 * can be told apart from a field whose value is `undefined`.
 */
export interface HostObject {
  kind: "object";
  /** The type name `types.type_of` gives. */
  typeName: string;
  /** For messages: `import "strings"`, `decimal`. */
  describe: string;
  get(name: string): Value | undefined;
  /** The object as a map, where it has a printed or marshalled form (a timespace's fields). */
  fields?(): SentinelMap;
  /** Comparison with another value, where the object has one (a decimal with a number). */
  equals?(other: Value): boolean | undefined;
  /** Whether unknown fields say "not supported here" (a standard import) rather than undefined (a module). */
  strict: boolean;
}

/** Variables of one block, within the blocks around it (Declarations and Scope). */
export class Scope {
  readonly variables = new Map<string, Value>();

  constructor(readonly parent?: Scope) {}

  /** The scope that holds `name`, if any does. */
  holder(name: string): Scope | undefined {
    for (let scope: Scope | undefined = this; scope; scope = scope.parent) {
      if (scope.variables.has(name)) return scope;
    }
    return undefined;
  }

  lookup(name: string): Value | undefined {
    for (let scope: Scope | undefined = this; scope; scope = scope.parent) {
      const value = scope.variables.get(name);
      if (value !== undefined || scope.variables.has(name)) return value;
    }
    return undefined;
  }

  /** Assignment: the variable where it is declared, else a new one here. */
  assign(name: string, value: Value): void {
    (this.holder(name) ?? this).variables.set(name, value);
  }
}

/**
 * A map: keys are booleans, numbers or strings (Map Literals), kept in the order they were added. Keys are held by a
 * string that tells their type apart (`1` the int, `1.0` the float and `"1"` the string are three keys).
 */
export class SentinelMap {
  private readonly entries = new Map<string, [Value, Value]>();

  static keyOf(key: Value): string | undefined {
    switch (typeof key) {
      case "string":
        return key.charCodeAt(0) === 0 ? `\u0000s${key}` : key;
      case "bigint":
        return `\u0000i${key}`;
      case "number":
        return Number.isInteger(key) ? `\u0000i${key}` : `\u0000f${key}`;
      case "boolean":
        return `\u0000b${key}`;
      default:
        return undefined;
    }
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: Value): Value | undefined {
    const encoded = SentinelMap.keyOf(key);
    return encoded === undefined ? undefined : this.entries.get(encoded)?.[1];
  }

  has(key: Value): boolean {
    const encoded = SentinelMap.keyOf(key);
    return encoded !== undefined && this.entries.has(encoded);
  }

  /** False where the key is of no type a map takes. */
  set(key: Value, value: Value): boolean {
    const encoded = SentinelMap.keyOf(key);
    if (encoded === undefined) return false;
    const existing = this.entries.get(encoded);
    if (existing) existing[1] = value;
    else this.entries.set(encoded, [key, value]);
    return true;
  }

  delete(key: Value): void {
    const encoded = SentinelMap.keyOf(key);
    if (encoded !== undefined) this.entries.delete(encoded);
  }

  keys(): Value[] {
    return [...this.entries.values()].map(([key]) => key);
  }

  values(): Value[] {
    return [...this.entries.values()].map(([, value]) => value);
  }

  pairs(): IterableIterator<[Value, Value]> {
    return this.entries.values();
  }

  copy(): SentinelMap {
    const copy = new SentinelMap();
    for (const [key, value] of this.entries.values()) copy.set(key, value);
    return copy;
  }
}

export const isList = (value: Value): value is Value[] => Array.isArray(value);
export const isMap = (value: Value): value is SentinelMap => value instanceof SentinelMap;
export const isNumber = (value: Value): value is bigint | number =>
  typeof value === "bigint" || typeof value === "number";

/** The name `types.type_of` gives each value. */
export function typeName(value: Value): string {
  if (value === Undefined) return "undefined";
  if (value === null) return "null";
  switch (typeof value) {
    case "boolean":
      return "bool";
    case "bigint":
      return "int";
    case "number":
      return "float";
    case "string":
      return "string";
  }
  if (Array.isArray(value)) return "list";
  if (value instanceof SentinelMap) return "map";
  switch (value.kind) {
    case "function":
    case "builtin":
      return "func";
    case "rule":
      return "rule";
    case "object":
      return value.typeName;
  }
}

/** Integer arithmetic wraps at 64 bits (Integer overflow). */
export const int64 = (value: bigint): bigint => BigInt.asIntN(64, value);

/**
 * Equality as `==` and `is` define it: true or false, undefined where either side is undefined; an int and a float
 * compare as numbers. Values of other different types are unequal: the specification's text says "undefined", but
 * the runtime answers false (HashiCorp's PCI DSS library relies on `false is not ""` being true in a case it expects
 * to pass: cloudtrail-server-side-encryption-enabled/success-kms-key-id-present).
 */
export function equal(left: Value, right: Value): boolean | UndefinedValue {
  if (left === Undefined || right === Undefined) return Undefined;
  if (left === null || right === null) return left === right;
  if (isNumber(left) && isNumber(right)) {
    return typeof left === typeof right ? left === right : Number(left) === Number(right);
  }
  if (typeof left === "object" && !Array.isArray(left) && !(left instanceof SentinelMap) && left.kind === "object") {
    return left.equals?.(right) ?? Undefined;
  }
  if (
    typeof right === "object" &&
    !Array.isArray(right) &&
    !(right instanceof SentinelMap) &&
    right.kind === "object"
  ) {
    return right.equals?.(left) ?? Undefined;
  }
  if (typeof left !== typeof right) return false;
  if (typeof left !== "object") return left === right;
  if (Array.isArray(left)) {
    if (!Array.isArray(right)) return false;
    if (left.length !== right.length) return false;
    for (let index = 0; index < left.length; index++) {
      if (equal(left[index] as Value, right[index] as Value) !== true) return false;
    }
    return true;
  }
  if (left instanceof SentinelMap) {
    if (!(right instanceof SentinelMap)) return false;
    if (left.size !== right.size) return false;
    for (const [key, value] of left.pairs()) {
      const other = right.get(key);
      if (other === undefined || equal(value, other) !== true) return false;
    }
    return true;
  }
  return left === right;
}

/** A float as Go's `%v` writes it (`1.5`, `1e+21`), which Sentinel's printing follows. */
export function formatFloat(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (!Number.isFinite(value)) return value > 0 ? "+Inf" : "-Inf";
  const text = String(value);
  const exponent = /e([+-])(\d+)$/.exec(text);
  if (!exponent) return text;
  const digits = (exponent[2] as string).padStart(2, "0");
  return `${text.slice(0, exponent.index)}e${exponent[1]}${digits}`;
}

/** The printed form of a value (Printing): strings bare at the top, quoted inside lists and maps. */
export function show(value: Value, nested = false): string {
  if (value === Undefined) return "undefined";
  if (value === null) return "null";
  switch (typeof value) {
    case "boolean":
    case "bigint":
      return String(value);
    case "number":
      return formatFloat(value);
    case "string":
      return nested ? JSON.stringify(value) : value;
  }
  if (Array.isArray(value)) return `[${value.map((item) => show(item, true)).join(", ")}]`;
  if (value instanceof SentinelMap) {
    return `{${[...value.pairs()].map(([key, item]) => `${show(key, true)}: ${show(item, true)}`).join(", ")}}`;
  }
  switch (value.kind) {
    case "function":
    case "builtin":
      return "func";
    case "rule":
      return value.state === "done" && value.value !== undefined ? show(value.value, nested) : "rule";
    case "object":
      return value.fields ? show(value.fields(), nested) : value.describe;
  }
}

/** A plain JavaScript value (JSON, HCL as hcl2json gives it) as a Sentinel value: integral numbers become ints. */
export function fromPlain(plain: unknown): Value {
  if (plain === null || plain === undefined) return null;
  switch (typeof plain) {
    case "boolean":
    case "string":
      return plain;
    case "number":
      return Number.isInteger(plain) ? BigInt(plain) : plain;
    case "bigint":
      return plain;
  }
  if (Array.isArray(plain)) return plain.map(fromPlain);
  const map = new SentinelMap();
  for (const [key, item] of Object.entries(plain as Record<string, unknown>)) map.set(key, fromPlain(item));
  return map;
}

/** A Sentinel value as plain JavaScript for a report (`undefined` as the string "undefined"). */
export function toPlain(value: Value): unknown {
  if (value === Undefined) return "undefined";
  if (value === null || typeof value === "boolean" || typeof value === "string" || typeof value === "number") {
    return value;
  }
  if (typeof value === "bigint") {
    return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER)
      ? Number(value)
      : String(value);
  }
  if (Array.isArray(value)) return value.map(toPlain);
  if (value instanceof SentinelMap) {
    return Object.fromEntries([...value.pairs()].map(([key, item]) => [show(key), toPlain(item)]));
  }
  return show(value);
}

/** A built-in function value. */
export function builtin(name: string, call: (args: Value[], at: Position) => Value): BuiltinFunction {
  return { kind: "builtin", name, call };
}
