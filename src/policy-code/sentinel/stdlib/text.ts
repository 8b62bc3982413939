// The standard imports about text and data (their documentation at developer.hashicorp.com/sentinel/docs/imports):
// strings, types, units, json, base64. No I/O.
import { SentinelRuntimeError } from "../errors";
import type { Position } from "../lexer";
import {
  builtin,
  formatFloat,
  fromPlain,
  type HostObject,
  isMap,
  SentinelMap,
  typeName,
  Undefined,
  type Value,
} from "../values";

/** An import's object: its members by name; any other name is "not known here" (never a silent undefined). */
export function importObject(name: string, members: Record<string, Value>): HostObject {
  return {
    kind: "object",
    typeName: "import",
    describe: `import "${name}"`,
    strict: true,
    get: (member) => (Object.hasOwn(members, member) ? members[member] : undefined),
  };
}

/** A function whose arguments must be strings (undefined in, undefined out). */
function stringFunction(qualified: string, counts: number[], body: (args: string[], at: Position) => Value): Value {
  return builtin(qualified, (args, at) => {
    if (!counts.includes(args.length)) {
      throw new SentinelRuntimeError(`${qualified} takes ${counts.join(" or ")} arguments, ${args.length} given`, at);
    }
    if (args.includes(Undefined)) return Undefined;
    for (const arg of args) {
      if (typeof arg !== "string")
        throw new SentinelRuntimeError(`${qualified} takes strings, not ${typeName(arg)}`, at);
    }
    return body(args as string[], at);
  });
}

/** Go's strings.Trim family: the characters of `cutset` off one or both ends. */
function trimCutset(text: string, cutset: string, left: boolean, right: boolean): string {
  const cut = new Set(cutset);
  const chars = [...text];
  let start = 0;
  let end = chars.length;
  while (left && start < end && cut.has(chars[start] as string)) start++;
  while (right && end > start && cut.has(chars[end - 1] as string)) end--;
  return chars.slice(start, end).join("");
}

/** A primitive as strings.join writes it. */
function joinPart(value: Value, at: Position): string[] {
  if (Array.isArray(value)) return value.flatMap((item) => joinPart(item, at));
  if (typeof value === "string") return [value];
  if (typeof value === "bigint" || typeof value === "boolean") return [String(value)];
  if (typeof value === "number") return [formatFloat(value)];
  throw new SentinelRuntimeError(`strings.join cannot join ${typeName(value)}`, at);
}

export function stringsImport(): HostObject {
  return importObject("strings", {
    has_prefix: stringFunction("strings.has_prefix", [2], ([text, prefix]) =>
      (text as string).startsWith(prefix as string),
    ),
    has_suffix: stringFunction("strings.has_suffix", [2], ([text, suffix]) =>
      (text as string).endsWith(suffix as string),
    ),
    trim_prefix: stringFunction("strings.trim_prefix", [2], ([text, prefix]) =>
      (text as string).startsWith(prefix as string)
        ? (text as string).slice((prefix as string).length)
        : (text as string),
    ),
    trim_suffix: stringFunction("strings.trim_suffix", [2], ([text, suffix]) =>
      (suffix as string).length > 0 && (text as string).endsWith(suffix as string)
        ? (text as string).slice(0, -(suffix as string).length)
        : (text as string),
    ),
    trim: stringFunction("strings.trim", [2], ([text, cutset]) =>
      trimCutset(text as string, cutset as string, true, true),
    ),
    to_lower: stringFunction("strings.to_lower", [1], ([text]) => (text as string).toLowerCase()),
    to_upper: stringFunction("strings.to_upper", [1], ([text]) => (text as string).toUpperCase()),
    join: builtin("strings.join", (args, at) => {
      if (args.length !== 2) throw new SentinelRuntimeError(`strings.join takes 2 arguments, ${args.length} given`, at);
      const [list, separator] = args as [Value, Value];
      if (list === Undefined || separator === Undefined) return Undefined;
      if (!Array.isArray(list) || typeof separator !== "string") {
        throw new SentinelRuntimeError(
          `strings.join takes a list and a string, not ${typeName(list)} and ${typeName(separator)}`,
          at,
        );
      }
      return joinPart(list, at).join(separator);
    }),
    split: builtin("strings.split", (args, at) => {
      if (args.length !== 2)
        throw new SentinelRuntimeError(`strings.split takes 2 arguments, ${args.length} given`, at);
      const [text, separator] = args as [Value, Value];
      if (text === Undefined || separator === Undefined) return Undefined;
      // A list is returned as it is (the documentation's special case).
      if (Array.isArray(text)) return text;
      if (typeof text !== "string" || typeof separator !== "string") {
        throw new SentinelRuntimeError(
          `strings.split takes two strings, not ${typeName(text)} and ${typeName(separator)}`,
          at,
        );
      }
      return separator === "" ? [...text] : text.split(separator);
    }),
    replace: builtin("strings.replace", (args, at) => {
      if (args.length !== 3 && args.length !== 4) {
        throw new SentinelRuntimeError(`strings.replace takes 3 or 4 arguments, ${args.length} given`, at);
      }
      if (args.includes(Undefined)) return Undefined;
      const [text, old, replacement, times] = args as [Value, Value, Value, Value | undefined];
      if (typeof text !== "string" || typeof old !== "string" || typeof replacement !== "string") {
        throw new SentinelRuntimeError("strings.replace takes three strings and an optional int", at);
      }
      if (times !== undefined && typeof times !== "bigint")
        throw new SentinelRuntimeError("strings.replace's times is an int", at);
      let left = times === undefined || times < 0n ? Number.POSITIVE_INFINITY : Number(times);
      if (old === "") return text;
      let result = "";
      let rest = text;
      while (left > 0) {
        const at = rest.indexOf(old);
        if (at < 0) break;
        result += rest.slice(0, at) + replacement;
        rest = rest.slice(at + old.length);
        left--;
      }
      return result + rest;
    }),
  });
}

export function typesImport(): HostObject {
  return importObject("types", {
    type_of: builtin("types.type_of", (args, at) => {
      if (args.length !== 1) throw new SentinelRuntimeError(`types.type_of takes 1 argument, ${args.length} given`, at);
      return typeName(args[0] as Value);
    }),
  });
}

export function unitsImport(): HostObject {
  return importObject("units", {
    byte: 1n,
    kilobyte: 1024n,
    megabyte: 1024n ** 2n,
    gigabyte: 1024n ** 3n,
    terabyte: 1024n ** 4n,
    petabyte: 1024n ** 5n,
  });
}

/** A value as JSON: map keys sorted, as Go's encoder writes them; undefined where a part has no JSON form. */
function marshal(value: Value): string | undefined {
  if (value === null) return "null";
  switch (typeof value) {
    case "boolean":
    case "bigint":
      return String(value);
    case "number":
      return Number.isFinite(value) ? JSON.stringify(value) : undefined;
    case "string":
      return JSON.stringify(value);
  }
  if (value === Undefined) return undefined;
  if (Array.isArray(value)) {
    const parts = value.map(marshal);
    return parts.includes(undefined) ? undefined : `[${parts.join(",")}]`;
  }
  if (isMap(value)) {
    const parts: [string, string | undefined][] = [...value.pairs()].map(([key, item]) => [
      typeof key === "string" ? key : String(key),
      marshal(item),
    ]);
    if (parts.some(([, part]) => part === undefined)) return undefined;
    parts.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${parts.map(([key, part]) => `${JSON.stringify(key)}:${part}`).join(",")}}`;
  }
  if (typeof value === "object" && value.kind === "object" && value.fields) return marshal(value.fields());
  return undefined;
}

/** JSON text as values: numbers without a fraction or exponent are ints. */
function unmarshal(text: string, at: Position): Value {
  let plain: unknown;
  try {
    // Integers beyond 2^53 keep their digits: read as text first.
    plain = JSON.parse(text, (_key, value, context?: { source?: string }) =>
      typeof value === "number" && context?.source !== undefined && /^-?\d+$/.test(context.source)
        ? BigInt(context.source)
        : value,
    );
  } catch (error) {
    throw new SentinelRuntimeError(`json.unmarshal: not JSON: ${(error as Error).message}`, at);
  }
  return fromPlain(plain);
}

export function jsonImport(): HostObject {
  return importObject("json", {
    unmarshal: builtin("json.unmarshal", (args, at) => {
      if (args.length !== 1)
        throw new SentinelRuntimeError(`json.unmarshal takes 1 argument, ${args.length} given`, at);
      const [text] = args as [Value];
      if (text === Undefined) return Undefined;
      if (typeof text !== "string")
        throw new SentinelRuntimeError(`json.unmarshal takes a string, not ${typeName(text)}`, at);
      return unmarshal(text, at);
    }),
    marshal: builtin("json.marshal", (args, at) => {
      if (args.length !== 1) throw new SentinelRuntimeError(`json.marshal takes 1 argument, ${args.length} given`, at);
      return marshal(args[0] as Value) ?? Undefined;
    }),
  });
}

export function base64Import(): HostObject {
  const decode = (encoding: "base64" | "base64url") => (text: string, at: Position) => {
    const alphabet = encoding === "base64" ? /^[A-Za-z0-9+/]*={0,2}$/ : /^[A-Za-z0-9_-]*={0,2}$/;
    if (!alphabet.test(text) || text.length % 4 !== 0) {
      throw new SentinelRuntimeError(
        `base64: ${JSON.stringify(text.slice(0, 40))} is not ${encoding === "base64" ? "standard" : "URL"} Base64`,
        at,
      );
    }
    return Buffer.from(text, encoding).toString("utf8");
  };
  return importObject("base64", {
    encode: stringFunction("base64.encode", [1], ([text]) => Buffer.from(text as string).toString("base64")),
    decode: stringFunction("base64.decode", [1], ([text], at) => decode("base64")(text as string, at)),
    urlencode: stringFunction("base64.urlencode", [1], ([text]) => {
      const plain = Buffer.from(text as string).toString("base64url");
      return plain + "=".repeat((4 - (plain.length % 4)) % 4);
    }),
    urldecode: stringFunction("base64.urldecode", [1], ([text], at) => decode("base64url")(text as string, at)),
  });
}

/** A map of string keys, for imports that hand out records. */
export function record(entries: Record<string, Value>): SentinelMap {
  const map = new SentinelMap();
  for (const [key, value] of Object.entries(entries)) map.set(key, value);
  return map;
}
