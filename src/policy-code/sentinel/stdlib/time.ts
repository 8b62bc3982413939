// The standard imports time (timespaces in UTC, durations in nanoseconds), sockaddr (IP addresses and networks) and
// collection (list helpers that call a predicate). No I/O: `time.now` is the moment the evaluation was given.
import { NotSupported, SentinelRuntimeError } from "../errors";
import type { Position } from "../lexer";
import { builtin, equal, type HostObject, isMap, SentinelMap, typeName, Undefined, type Value } from "../values";
import { importObject, record } from "./text";

const weekdays = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
const months = [
  "January",
  "February",
  "March",
  "April",
  "May",
  "June",
  "July",
  "August",
  "September",
  "October",
  "November",
  "December",
];

/** A moment: nanoseconds since the epoch, and the zone offset it was written in (seconds east of UTC). */
interface Moment {
  nanos: bigint;
  zone: number;
}

const moments = new WeakMap<object, Moment>();

/** A "timeish": seconds since the epoch, an RFC 3339 timestamp, or a timespace. */
function momentOf(value: Value, at: Position): Moment {
  if (typeof value === "bigint") return { nanos: value * 1_000_000_000n, zone: 0 };
  const held = typeof value === "object" && value !== null ? moments.get(value) : undefined;
  if (held) return held;
  if (typeof value === "string") {
    const match = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|z|[+-]\d{2}:\d{2})$/.exec(
      value,
    );
    if (match) {
      const offset = match[8] as string;
      const zone = /^[Zz]$/.test(offset)
        ? 0
        : (offset[0] === "-" ? -1 : 1) * (Number(offset.slice(1, 3)) * 3600 + Number(offset.slice(4, 6)) * 60);
      const utc = Date.UTC(
        Number(match[1]),
        Number(match[2]) - 1,
        Number(match[3]),
        Number(match[4]),
        Number(match[5]),
        Number(match[6]),
      );
      const fraction = BigInt((match[7] ?? "").padEnd(9, "0"));
      return { nanos: (BigInt(utc) / 1000n - BigInt(zone)) * 1_000_000_000n + fraction, zone };
    }
  }
  throw new SentinelRuntimeError(
    `time: ${typeName(value)} is no time (give seconds since the epoch or an RFC 3339 timestamp)`,
    at,
  );
}

function floorDivide(value: bigint, divisor: bigint): bigint {
  const quotient = value / divisor;
  return value < 0n && quotient * divisor !== value ? quotient - 1n : quotient;
}

function timespace(moment: Moment): HostObject {
  const seconds = floorDivide(moment.nanos, 1_000_000_000n);
  const local = new Date(Number(seconds + BigInt(moment.zone)) * 1000);
  const zoneMinutes = Math.abs(moment.zone) / 60;
  const zoneString = `${moment.zone < 0 ? "-" : "+"}${String(Math.floor(zoneMinutes / 60)).padStart(2, "0")}:${String(zoneMinutes % 60).padStart(2, "0")}`;
  const fields: Record<string, Value> = {
    year: BigInt(local.getUTCFullYear()),
    month: BigInt(local.getUTCMonth() + 1),
    month_name: months[local.getUTCMonth()] as string,
    day: BigInt(local.getUTCDate()),
    hour: BigInt(local.getUTCHours()),
    minute: BigInt(local.getUTCMinutes()),
    second: BigInt(local.getUTCSeconds()),
    weekday: BigInt(local.getUTCDay()),
    weekday_name: weekdays[local.getUTCDay()] as string,
    unix: seconds,
    unix_nano: moment.nanos,
    zone: BigInt(moment.zone),
    zone_string: zoneString,
  };
  const compare = (name: string, test: (order: number) => boolean) =>
    builtin(`timespace.${name}`, (args, at) => {
      const other = momentOf(args[0] as Value, at);
      return test(moment.nanos < other.nanos ? -1 : moment.nanos > other.nanos ? 1 : 0);
    });
  const members: Record<string, Value> = {
    ...fields,
    before: compare("before", (order) => order < 0),
    after: compare("after", (order) => order > 0),
    equal: compare("equal", (order) => order === 0),
    add: builtin("timespace.add", (args, at) => {
      const [duration] = args;
      if (typeof duration !== "bigint")
        throw new SentinelRuntimeError("timespace.add takes a duration in nanoseconds (an int)", at);
      return timespace({ nanos: moment.nanos + duration, zone: moment.zone });
    }),
    sub: builtin("timespace.sub", (args, at) => moment.nanos - momentOf(args[0] as Value, at).nanos),
  };
  const object: HostObject = {
    kind: "object",
    typeName: "timespace",
    describe: "timespace",
    strict: true,
    get: (name) => (Object.hasOwn(members, name) ? members[name] : undefined),
    fields: () => record(fields),
  };
  moments.set(object, moment);
  return object;
}

/** The time import, its `now` fixed at `now` (milliseconds since the epoch). */
export function timeImport(now: number): HostObject {
  const nowSpace = timespace({ nanos: BigInt(now) * 1_000_000n, zone: 0 });
  return importObject("time", {
    now: nowSpace,
    load: builtin("time.load", (args, at) => {
      if (args.length !== 1) throw new SentinelRuntimeError(`time.load takes 1 argument, ${args.length} given`, at);
      if (args[0] === Undefined) return Undefined;
      return timespace(momentOf(args[0] as Value, at));
    }),
    nanosecond: 1n,
    microsecond: 1_000n,
    millisecond: 1_000_000n,
    second: 1_000_000_000n,
    minute: 60_000_000_000n,
    hour: 3_600_000_000_000n,
  });
}

/** An address or a network (`10.0.0.0/8`) as its first address, its bit count and its prefix length. */
interface Network {
  first: bigint;
  bits: 32 | 128;
  prefix: number;
}

function parseIpv4(text: string): bigint | undefined {
  const parts = text.split(".");
  if (parts.length !== 4 || !parts.every((part) => /^\d{1,3}$/.test(part) && Number(part) <= 255)) return undefined;
  return parts.reduce((sum, part) => sum * 256n + BigInt(part), 0n);
}

function parseIpv6(text: string): bigint | undefined {
  const zoneless = text.replace(/%.*$/, "");
  const halves = zoneless.split("::");
  if (halves.length > 2) return undefined;
  const groups = (half: string) => (half === "" ? [] : half.split(":"));
  let head = groups(halves[0] as string);
  let tail = halves.length === 2 ? groups(halves[1] as string) : [];
  // A trailing IPv4 part (::ffff:1.2.3.4) is two groups.
  const last = (halves.length === 2 ? tail : head).at(-1);
  if (last?.includes(".")) {
    const v4 = parseIpv4(last);
    if (v4 === undefined) return undefined;
    const pair = [(v4 >> 16n).toString(16), (v4 & 0xffffn).toString(16)];
    if (halves.length === 2) tail = [...tail.slice(0, -1), ...pair];
    else head = [...head.slice(0, -1), ...pair];
  }
  const missing = 8 - head.length - tail.length;
  if ((halves.length === 2 && missing < 1) || (halves.length === 1 && missing !== 0)) return undefined;
  const all = [...head, ...Array(halves.length === 2 ? missing : 0).fill("0"), ...tail];
  if (!all.every((group) => /^[0-9A-Fa-f]{1,4}$/.test(group))) return undefined;
  return all.reduce((sum, group) => sum * 65536n + BigInt(`0x${group}`), 0n);
}

function parseNetwork(text: string): Network | undefined {
  const [address, prefixText, extra] = text.trim().split("/");
  if (address === undefined || extra !== undefined) return undefined;
  const v4 = parseIpv4(address);
  const value = v4 ?? parseIpv6(address);
  if (value === undefined) return undefined;
  const bits = v4 !== undefined ? 32 : 128;
  const prefix = prefixText === undefined ? bits : /^\d+$/.test(prefixText) ? Number(prefixText) : Number.NaN;
  if (!(prefix >= 0 && prefix <= bits)) return undefined;
  const hostBits = BigInt(bits - prefix);
  return { first: (value >> hostBits) << hostBits, bits, prefix };
}

export function sockaddrImport(): HostObject {
  const network = (value: Value, at: Position): Network => {
    const parsed = typeof value === "string" ? parseNetwork(value) : undefined;
    if (!parsed)
      throw new SentinelRuntimeError(
        `sockaddr: ${JSON.stringify(typeof value === "string" ? value : typeName(value))} is no IP address or network`,
        at,
      );
    return parsed;
  };
  const address = (text: Value) => (typeof text === "string" ? parseNetwork(text) : undefined);
  return importObject("sockaddr", {
    is_contained: builtin("sockaddr.is_contained", (args, at) => {
      if (args.length !== 2) throw new SentinelRuntimeError("sockaddr.is_contained takes 2 arguments", at);
      const [outer, inner] = [network(args[0] as Value, at), network(args[1] as Value, at)];
      if (outer.bits !== inner.bits || inner.prefix < outer.prefix) return false;
      const hostBits = BigInt(outer.bits - outer.prefix);
      return inner.first >> hostBits === outer.first >> hostBits;
    }),
    is_equal: builtin("sockaddr.is_equal", (args, at) => {
      if (args.length !== 2) throw new SentinelRuntimeError("sockaddr.is_equal takes 2 arguments", at);
      const [a, b] = [network(args[0] as Value, at), network(args[1] as Value, at)];
      return a.bits === b.bits && a.first === b.first && a.prefix === b.prefix;
    }),
    is_ipv4: builtin("sockaddr.is_ipv4", (args) => address(args[0] as Value)?.bits === 32),
    is_ipv6: builtin("sockaddr.is_ipv6", (args) => address(args[0] as Value)?.bits === 128),
  });
}

type Call = (fn: Value, args: Value[], at: Position) => Value;

/** Whether `value` has every key of `partial` with an equal value, nested maps compared the same way. */
function matchesPartial(value: Value, partial: Value): boolean {
  if (isMap(partial)) {
    if (!isMap(value)) return false;
    for (const [key, expected] of partial.pairs()) {
      const actual = value.get(key);
      if (actual === undefined || !matchesPartial(actual, expected)) return false;
    }
    return true;
  }
  return equal(value, partial) === true;
}

export function collectionImport(call: Call): HostObject {
  const listOf = (name: string, items: Value, at: Position): Value[] => {
    if (Array.isArray(items)) return items;
    if (items instanceof SentinelMap)
      throw new NotSupported(`collection.${name} over a map is not supported by this evaluator`);
    throw new SentinelRuntimeError(`collection.${name} needs a list, not ${typeName(items)}`, at);
  };
  const predicate = (name: string, keep: boolean) =>
    builtin(`collection.${name}`, (args, at) =>
      listOf(name, args[0] as Value, at).filter((item) => (call(args[1] as Value, [item], at) === true) === keep),
    );
  return importObject("collection", {
    filter: predicate("filter", true),
    reject: predicate("reject", false),
    find: builtin(
      "collection.find",
      (args, at) =>
        listOf("find", args[0] as Value, at).find((item) => call(args[1] as Value, [item], at) === true) ?? Undefined,
    ),
    matches: builtin("collection.matches", (args, at) =>
      listOf("matches", args[0] as Value, at).filter((item) => matchesPartial(item, args[1] as Value)),
    ),
  });
}

/** The value at a path (`values.ingress`, `rules.*.port`, `list.0`) in maps and lists; undefined where there is none. */
function valueAt(value: Value, path: string[]): Value {
  if (path.length === 0) return value;
  const [segment, ...rest] = path as [string, ...string[]];
  if (isMap(value)) {
    const found = value.get(segment);
    return found === undefined ? Undefined : valueAt(found, rest);
  }
  if (Array.isArray(value)) {
    // A splat maps the rest of the path over every element.
    if (segment === "*") return value.map((item) => valueAt(item, rest));
    if (!/^\d+$/.test(segment) || Number(segment) >= value.length) return Undefined;
    return valueAt(value[Number(segment)] as Value, rest);
  }
  return Undefined;
}

function pathOf(path: Value, at: Position): string[] {
  if (typeof path === "string") return path === "" ? [] : path.split(".");
  if (Array.isArray(path) && path.every((part) => typeof part === "string" || typeof part === "bigint")) {
    return path.map(String);
  }
  throw new SentinelRuntimeError(
    `collection/maps: a path is a string such as "values.ingress", not ${typeName(path)}`,
    at,
  );
}

export function collectionMapsImport(): HostObject {
  return importObject("collection/maps", {
    get: builtin("maps.get", (args, at) => {
      if (args.length < 2 || args.length > 3)
        throw new SentinelRuntimeError("maps.get takes an object, a path and a default", at);
      const found = valueAt(args[0] as Value, pathOf(args[1] as Value, at));
      return found === Undefined && args.length === 3 ? (args[2] as Value) : found;
    }),
    has: builtin("maps.has", (args, at) => {
      if (args.length !== 2) throw new SentinelRuntimeError("maps.has takes an object and a path", at);
      return valueAt(args[0] as Value, pathOf(args[1] as Value, at)) !== Undefined;
    }),
  });
}
