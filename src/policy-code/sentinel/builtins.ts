// The predeclared functions (Built-in Functions): length, append, delete, keys, values, range, int, float, string,
// bool, print and error. No I/O: print hands its line to the caller.
import { PolicyErrorCalled, SentinelRuntimeError } from "./errors";
import type { Position } from "./lexer";
import { type BuiltinFunction, builtin, int64, isMap, show, typeName, Undefined, type Value } from "./values";

function arity(name: string, args: Value[], at: Position, minimum: number, maximum = minimum): void {
  if (args.length < minimum || args.length > maximum) {
    const wanted = minimum === maximum ? `${minimum}` : `${minimum} to ${maximum}`;
    throw new SentinelRuntimeError(
      `${name} takes ${wanted} argument${maximum === 1 ? "" : "s"}, ${args.length} given`,
      at,
    );
  }
}

/** The byte length of a string, as `length` counts it. */
export const byteLength = (text: string): number => Buffer.byteLength(text, "utf8");

/** An int from text as an integer literal reads (an optional sign, a 0x or 0 prefix), or undefined. */
export function parseInt64(text: string): bigint | undefined {
  const match = /^([+-]?)(0[xX][0-9A-Fa-f]+|0[0-7]*|[1-9][0-9]*)$/.exec(text);
  if (!match) return undefined;
  const digits = match[2] as string;
  const magnitude =
    digits.length > 1 && digits[0] === "0" && !/^0[xX]/.test(digits) ? BigInt(`0o${digits.slice(1)}`) : BigInt(digits);
  const value = match[1] === "-" ? -magnitude : magnitude;
  return value === int64(value) ? value : undefined;
}

export function builtinFunctions(print: (line: string) => void): BuiltinFunction[] {
  return [
    builtin("length", (args, at) => {
      arity("length", args, at, 1);
      const [value] = args as [Value];
      if (value === Undefined) return Undefined;
      if (typeof value === "string") return BigInt(byteLength(value));
      if (Array.isArray(value)) return BigInt(value.length);
      if (isMap(value)) return BigInt(value.size);
      throw new SentinelRuntimeError(`length needs a string, a list or a map, not ${typeName(value)}`, at);
    }),
    builtin("append", (args, at) => {
      arity("append", args, at, 2);
      const [list, value] = args as [Value, Value];
      if (!Array.isArray(list)) throw new SentinelRuntimeError(`append needs a list, not ${typeName(list)}`, at);
      list.push(value);
      return Undefined;
    }),
    builtin("delete", (args, at) => {
      arity("delete", args, at, 2);
      const [map, key] = args as [Value, Value];
      if (!isMap(map)) throw new SentinelRuntimeError(`delete needs a map, not ${typeName(map)}`, at);
      map.delete(key);
      return Undefined;
    }),
    builtin("keys", (args, at) => {
      arity("keys", args, at, 1);
      const [map] = args as [Value];
      if (map === Undefined) return Undefined;
      if (!isMap(map)) throw new SentinelRuntimeError(`keys needs a map, not ${typeName(map)}`, at);
      return map.keys();
    }),
    builtin("values", (args, at) => {
      arity("values", args, at, 1);
      const [map] = args as [Value];
      if (map === Undefined) return Undefined;
      if (!isMap(map)) throw new SentinelRuntimeError(`values needs a map, not ${typeName(map)}`, at);
      return map.values();
    }),
    builtin("range", (args, at) => {
      arity("range", args, at, 1, 3);
      if (!args.every((arg) => typeof arg === "bigint")) {
        throw new SentinelRuntimeError("range takes ints", at);
      }
      const numbers = args as bigint[];
      const [start, end, step] =
        numbers.length === 1
          ? [0n, numbers[0] as bigint, 1n]
          : [numbers[0] as bigint, numbers[1] as bigint, numbers[2] ?? 1n];
      if (step === 0n) throw new SentinelRuntimeError("range's step cannot be 0", at);
      const list: Value[] = [];
      for (let value = start; step > 0n ? value < end : value > end; value += step) {
        list.push(value);
        if (list.length > 10_000_000) throw new SentinelRuntimeError("range is too long", at);
      }
      return list;
    }),
    builtin("int", (args, at) => {
      arity("int", args, at, 1);
      const [value] = args as [Value];
      if (typeof value === "bigint") return value;
      if (typeof value === "number") return Number.isFinite(value) ? int64(BigInt(Math.trunc(value))) : Undefined;
      if (typeof value === "boolean") return value ? 1n : 0n;
      if (typeof value === "string") return parseInt64(value.trim()) ?? Undefined;
      return Undefined;
    }),
    builtin("float", (args, at) => {
      arity("float", args, at, 1);
      const [value] = args as [Value];
      if (typeof value === "number") return value;
      if (typeof value === "bigint") return Number(value);
      if (typeof value === "boolean") return value ? 1 : 0;
      if (typeof value === "string") {
        const text = value.trim();
        if (!/^[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|[iI]nf(?:inity)?|NaN)$/.test(text))
          return Undefined;
        return Number(text.replace(/^([+-]?)[iI]nf(inity)?$/, "$1Infinity"));
      }
      return Undefined;
    }),
    builtin("string", (args, at) => {
      arity("string", args, at, 1);
      const [value] = args as [Value];
      if (typeof value === "string") return value;
      if (typeof value === "bigint" || typeof value === "boolean") return String(value);
      if (typeof value === "number") return value.toFixed(6);
      return Undefined;
    }),
    builtin("bool", (args, at) => {
      arity("bool", args, at, 1);
      const [value] = args as [Value];
      if (typeof value === "boolean") return value;
      if (typeof value === "string") {
        if (["1", "t", "T", "TRUE", "true", "True"].includes(value)) return true;
        if (["0", "f", "F", "FALSE", "false", "False"].includes(value)) return false;
        return Undefined;
      }
      if (typeof value === "bigint") return value !== 0n;
      if (typeof value === "number") return value !== 0;
      return Undefined;
    }),
    builtin("print", (args) => {
      print(args.map((arg) => show(arg)).join(" "));
      return true;
    }),
    builtin("error", (args, at) => {
      const message = args.map((arg) => show(arg)).join(" ");
      print(message);
      throw new PolicyErrorCalled(message, at);
    }),
  ];
}
