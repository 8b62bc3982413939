// The standard imports about numbers: decimal (exact decimals: a coefficient and a power of ten) and version
// (versions and constraints as HashiCorp's tools read them). No I/O.
import { NotSupported, SentinelRuntimeError } from "../errors";
import type { Position } from "../lexer";
import { builtin, type HostObject, typeName, Undefined, type Value } from "../values";
import { importObject, record } from "./text";

/** A finite decimal is `coefficient × 10^exponent`; NaN and the infinities stand apart. */
interface Decimal {
  special?: "nan" | "+inf" | "-inf";
  coefficient: bigint;
  exponent: number;
}

/** Digits kept by a division, as far as a policy's money and percentages ever need. */
const divisionDigits = 50;

function parseDecimal(text: string): Decimal | undefined {
  const trimmed = text.trim();
  if (/^[+]?(inf|infinity)$/i.test(trimmed)) return { special: "+inf", coefficient: 0n, exponent: 0 };
  if (/^-(inf|infinity)$/i.test(trimmed)) return { special: "-inf", coefficient: 0n, exponent: 0 };
  if (/^nan$/i.test(trimmed)) return { special: "nan", coefficient: 0n, exponent: 0 };
  const match = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(trimmed);
  if (!match || `${match[2]}${match[3] ?? ""}` === "") return undefined;
  const fraction = match[3] ?? "";
  const coefficient = BigInt(`${match[2]}${fraction}` || "0") * (match[1] === "-" ? -1n : 1n);
  return { coefficient, exponent: Number(match[4] ?? 0) - fraction.length };
}

function decimalOf(value: Value, at: Position): Decimal {
  if (typeof value === "bigint") return { coefficient: value, exponent: 0 };
  if (typeof value === "number") {
    if (Number.isNaN(value)) return { special: "nan", coefficient: 0n, exponent: 0 };
    if (!Number.isFinite(value)) return { special: value > 0 ? "+inf" : "-inf", coefficient: 0n, exponent: 0 };
    return parseDecimal(String(value)) as Decimal;
  }
  if (typeof value === "string") {
    const parsed = parseDecimal(value);
    if (parsed) return parsed;
  }
  const held = decimals.get(value as object);
  if (held) return held;
  throw new SentinelRuntimeError(
    `decimal: ${typeName(value)} ${JSON.stringify(String(typeof value === "string" ? value : ""))} is no number`,
    at,
  );
}

const decimals = new WeakMap<object, Decimal>();

function aligned(a: Decimal, b: Decimal): [bigint, bigint, number] {
  const exponent = Math.min(a.exponent, b.exponent);
  return [
    a.coefficient * 10n ** BigInt(a.exponent - exponent),
    b.coefficient * 10n ** BigInt(b.exponent - exponent),
    exponent,
  ];
}

/** -1, 0, 1; undefined where NaN is involved. */
function compareDecimals(a: Decimal, b: Decimal): number | undefined {
  if (a.special === "nan" || b.special === "nan") return undefined;
  const rank = (d: Decimal) => (d.special === "+inf" ? 1 : d.special === "-inf" ? -1 : 0);
  if (rank(a) !== rank(b) || rank(a) !== 0) return Math.sign(rank(a) - rank(b));
  const [x, y] = aligned(a, b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Trailing zeros off the coefficient, up to the exponent 0 (so 100 stays 100, 1.50 becomes 1.5). */
function normalized(d: Decimal): Decimal {
  if (d.special) return d;
  let { coefficient, exponent } = d;
  while (exponent < 0 && coefficient !== 0n && coefficient % 10n === 0n) {
    coefficient /= 10n;
    exponent++;
  }
  return {
    coefficient: coefficient === 0n ? 0n : coefficient,
    exponent: coefficient === 0n ? Math.min(0, exponent) : exponent,
  };
}

function decimalString(d: Decimal): string {
  if (d.special === "nan") return "NaN";
  if (d.special) return d.special === "+inf" ? "Infinity" : "-Infinity";
  const negative = d.coefficient < 0n;
  const digits = (negative ? -d.coefficient : d.coefficient).toString();
  let text: string;
  if (d.exponent >= 0) text = digits + "0".repeat(d.exponent);
  else {
    const padded = digits.padStart(-d.exponent + 1, "0");
    text = `${padded.slice(0, d.exponent)}.${padded.slice(d.exponent)}`;
  }
  return negative ? `-${text}` : text;
}

function arithmetic(op: "add" | "sub" | "mul" | "div" | "mod", a: Decimal, b: Decimal, at: Position): Decimal {
  if (a.special || b.special) {
    throw new NotSupported("decimal arithmetic with NaN or infinity is not supported by this evaluator");
  }
  switch (op) {
    case "add": {
      const [x, y, exponent] = aligned(a, b);
      return normalized({ coefficient: x + y, exponent });
    }
    case "sub": {
      const [x, y, exponent] = aligned(a, b);
      return normalized({ coefficient: x - y, exponent });
    }
    case "mul":
      return normalized({ coefficient: a.coefficient * b.coefficient, exponent: a.exponent + b.exponent });
    case "div": {
      if (b.coefficient === 0n) throw new SentinelRuntimeError("decimal division by zero", at);
      const scale = divisionDigits;
      const quotient = (a.coefficient * 10n ** BigInt(scale)) / b.coefficient;
      return normalized({ coefficient: quotient, exponent: a.exponent - b.exponent - scale });
    }
    case "mod": {
      if (b.coefficient === 0n) throw new SentinelRuntimeError("decimal division by zero", at);
      const [x, y, exponent] = aligned(a, b);
      return normalized({ coefficient: x % y, exponent });
    }
  }
}

function decimalValue(d: Decimal): HostObject {
  const self = (name: string, body: (args: Value[], at: Position) => Value) => builtin(`decimal.${name}`, body);
  const one = (name: string, args: Value[], at: Position): Decimal => {
    if (args.length !== 1) throw new SentinelRuntimeError(`decimal ${name} takes 1 argument, ${args.length} given`, at);
    return decimalOf(args[0] as Value, at);
  };
  const compare = (name: string, test: (order: number) => boolean) =>
    self(name, (args, at) => {
      const order = compareDecimals(d, one(name, args, at));
      return order === undefined ? false : test(order);
    });
  const operation = (name: string, op: "add" | "sub" | "mul" | "div" | "mod") =>
    self(name, (args, at) => decimalValue(arithmetic(op, d, one(name, args, at), at)));
  const rounding = (name: string, round: (coefficient: bigint, divisor: bigint) => bigint) =>
    self(name, () => {
      if (d.special || d.exponent >= 0) return decimalValue(d);
      const divisor = 10n ** BigInt(-d.exponent);
      return decimalValue({ coefficient: round(d.coefficient, divisor), exponent: 0 });
    });
  const floorDivide = (coefficient: bigint, divisor: bigint) => {
    const quotient = coefficient / divisor;
    return coefficient < 0n && quotient * divisor !== coefficient ? quotient - 1n : quotient;
  };
  const members: Record<string, Value> = {
    string: decimalString(d),
    sign:
      d.special === "nan"
        ? 0n
        : d.special
          ? d.special === "+inf"
            ? 1n
            : -1n
          : BigInt(Math.sign(Number(d.coefficient))),
    coefficient: d.coefficient,
    exponent: BigInt(d.exponent),
    float:
      d.special === "nan"
        ? Number.NaN
        : d.special
          ? d.special === "+inf"
            ? Infinity
            : -Infinity
          : Number(decimalString(d)),
    int: d.special
      ? Undefined
      : d.exponent >= 0
        ? d.coefficient * 10n ** BigInt(d.exponent)
        : floorDivide(d.coefficient, 10n ** BigInt(-d.exponent)),
    is: compare("is", (order) => order === 0),
    is_not: self("is_not", (args, at) => compareDecimals(d, one("is_not", args, at)) !== 0),
    less_than: compare("less_than", (order) => order < 0),
    lt: compare("lt", (order) => order < 0),
    less_than_or_equals: compare("less_than_or_equals", (order) => order <= 0),
    lte: compare("lte", (order) => order <= 0),
    greater_than: compare("greater_than", (order) => order > 0),
    gt: compare("gt", (order) => order > 0),
    greater_than_or_equals: compare("greater_than_or_equals", (order) => order >= 0),
    gte: compare("gte", (order) => order >= 0),
    add: operation("add", "add"),
    subtract: operation("subtract", "sub"),
    sub: operation("sub", "sub"),
    multiply: operation("multiply", "mul"),
    mul: operation("mul", "mul"),
    divide: operation("divide", "div"),
    div: operation("div", "div"),
    modulo: operation("modulo", "mod"),
    mod: operation("mod", "mod"),
    remainder: operation("remainder", "mod"),
    rem: operation("rem", "mod"),
    ceiling: rounding("ceiling", (coefficient, divisor) => -floorDivide(-coefficient, divisor)),
    ceil: rounding("ceil", (coefficient, divisor) => -floorDivide(-coefficient, divisor)),
    floor: rounding("floor", floorDivide),
    absolute: self("absolute", () =>
      decimalValue({ ...d, coefficient: d.coefficient < 0n ? -d.coefficient : d.coefficient }),
    ),
    abs: self("abs", () => decimalValue({ ...d, coefficient: d.coefficient < 0n ? -d.coefficient : d.coefficient })),
    negate: self("negate", () => decimalValue({ ...d, coefficient: -d.coefficient })),
    neg: self("neg", () => decimalValue({ ...d, coefficient: -d.coefficient })),
  };
  for (const name of ["power", "pow", "exp", "loge", "ln", "log10", "log", "square_root", "sqrt"]) {
    members[name] = self(name, () => {
      throw new NotSupported(`decimal ${name} is not supported by this evaluator`);
    });
  }
  const object: HostObject = {
    kind: "object",
    typeName: "decimal",
    describe: `decimal ${decimalString(d)}`,
    strict: true,
    get: (name) => (Object.hasOwn(members, name) ? members[name] : undefined),
  };
  decimals.set(object, d);
  return object;
}

export function decimalImport(): HostObject {
  const test = (name: string, check: (d: Decimal) => boolean) =>
    builtin(`decimal.${name}`, (args, at) => {
      if (args.length !== 1) throw new SentinelRuntimeError(`decimal.${name} takes 1 argument`, at);
      return check(decimalOf(args[0] as Value, at));
    });
  const infinity = builtin("decimal.infinity", (args, at) => {
    const sign = args[0];
    if (typeof sign !== "bigint") throw new SentinelRuntimeError("decimal.infinity takes an int sign", at);
    return decimalValue({ special: sign < 0n ? "-inf" : "+inf", coefficient: 0n, exponent: 0 });
  });
  return importObject("decimal", {
    new: builtin("decimal.new", (args, at) => {
      if (args.length !== 1) throw new SentinelRuntimeError(`decimal.new takes 1 argument, ${args.length} given`, at);
      if (args[0] === Undefined) return Undefined;
      return decimalValue(decimalOf(args[0] as Value, at));
    }),
    infinity,
    inf: infinity,
    nan: decimalValue({ special: "nan", coefficient: 0n, exponent: 0 }),
    isinfinite: test("isinfinite", (d) => d.special === "+inf" || d.special === "-inf"),
    isinf: test("isinf", (d) => d.special === "+inf" || d.special === "-inf"),
    isnan: test("isnan", (d) => d.special === "nan"),
  });
}

/** A version as HashiCorp's go-version reads it: numeric segments, a pre-release, metadata. */
interface Version {
  segments: bigint[];
  prerelease: string;
  metadata: string;
  original: string;
}

function parseVersion(text: string): Version | undefined {
  const match = /^v?(\d+(?:\.\d+)*)(?:-([0-9A-Za-z.-]+))?(?:\+([0-9A-Za-z.-]+))?$/.exec(text.trim());
  if (!match) return undefined;
  const segments = (match[1] as string).split(".").map((part) => BigInt(part));
  while (segments.length < 3) segments.push(0n);
  return { segments, prerelease: match[2] ?? "", metadata: match[3] ?? "", original: text.trim() };
}

function comparePrerelease(a: string, b: string): number {
  if (a === b) return 0;
  if (a === "") return 1;
  if (b === "") return -1;
  const [left, right] = [a.split("."), b.split(".")];
  for (let index = 0; index < Math.max(left.length, right.length); index++) {
    const [x, y] = [left[index], right[index]];
    if (x === undefined) return -1;
    if (y === undefined) return 1;
    if (x === y) continue;
    const [xNumber, yNumber] = [/^\d+$/.test(x), /^\d+$/.test(y)];
    if (xNumber && yNumber) return BigInt(x) < BigInt(y) ? -1 : 1;
    if (xNumber !== yNumber) return xNumber ? -1 : 1;
    return x < y ? -1 : 1;
  }
  return 0;
}

function compareVersions(a: Version, b: Version): number {
  for (let index = 0; index < Math.max(a.segments.length, b.segments.length); index++) {
    const [x, y] = [a.segments[index] ?? 0n, b.segments[index] ?? 0n];
    if (x !== y) return x < y ? -1 : 1;
  }
  return comparePrerelease(a.prerelease, b.prerelease);
}

/** Whether the version meets every comma-separated constraint (`>= 1.2, < 2.0`, `~> 1.4`). */
function satisfies(version: Version, constraints: string, at: Position): boolean {
  for (const part of constraints.split(",")) {
    const match = /^\s*(=|!=|>=|<=|>|<|~>)?\s*(v?\d+(?:\.\d+)*(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?)\s*$/.exec(
      part,
    );
    if (!match) throw new SentinelRuntimeError(`version constraint ${JSON.stringify(part.trim())} is malformed`, at);
    const operator = match[1] ?? "=";
    const wanted = parseVersion(match[2] as string) as Version;
    // A pre-release meets only constraints that name a pre-release of the same version (go-version).
    if (
      version.prerelease &&
      !(wanted.prerelease && compareVersions({ ...version, prerelease: "" }, { ...wanted, prerelease: "" }) === 0)
    ) {
      if (operator !== "!=") return false;
    }
    const order = compareVersions(version, wanted);
    const written = (match[2] as string).replace(/^v/, "").split(/[-+]/)[0]?.split(".").length ?? 3;
    const met = (() => {
      switch (operator) {
        case "=":
          return order === 0;
        case "!=":
          return order !== 0;
        case ">":
          return order > 0;
        case "<":
          return order < 0;
        case ">=":
          return order >= 0;
        case "<=":
          return order <= 0;
        default: {
          // ~> 1.2.3 is >= 1.2.3 and < 1.3; ~> 1.2 is >= 1.2 and < 2.
          if (order < 0) return false;
          const fixed = Math.max(1, written - 1);
          return wanted.segments.slice(0, fixed).every((segment, index) => segment === version.segments[index]);
        }
      }
    })();
    if (!met) return false;
  }
  return true;
}

function versionValue(version: Version): HostObject {
  const other = (name: string, args: Value[], at: Position): Version => {
    const [given] = args;
    const parsed = typeof given === "string" ? parseVersion(given) : versions.get(given as object);
    if (args.length !== 1 || !parsed) throw new SentinelRuntimeError(`version ${name} takes one version`, at);
    return parsed;
  };
  const compare = (name: string, test: (order: number) => boolean) =>
    builtin(`version.${name}`, (args, at) => test(compareVersions(version, other(name, args, at))));
  const members: Record<string, Value> = {
    major: version.segments[0] ?? 0n,
    minor: version.segments[1] ?? 0n,
    patch: version.segments[2] ?? 0n,
    prerelease: version.prerelease,
    metadata: version.metadata,
    version: version.original.replace(/^v/, ""),
    greater_than: compare("greater_than", (order) => order > 0),
    gt: compare("gt", (order) => order > 0),
    greater_than_or_equals: compare("greater_than_or_equals", (order) => order >= 0),
    gte: compare("gte", (order) => order >= 0),
    less_than: compare("less_than", (order) => order < 0),
    lt: compare("lt", (order) => order < 0),
    less_than_or_equals: compare("less_than_or_equals", (order) => order <= 0),
    lte: compare("lte", (order) => order <= 0),
    equals: compare("equals", (order) => order === 0),
    eq: compare("eq", (order) => order === 0),
    satisfies: builtin("version.satisfies", (args, at) => {
      const [constraint] = args;
      if (constraint === Undefined) return Undefined;
      if (typeof constraint !== "string")
        throw new SentinelRuntimeError("version satisfies takes a constraint string", at);
      return satisfies(version, constraint, at);
    }),
  };
  const object: HostObject = {
    kind: "object",
    typeName: "version",
    describe: `version ${version.original}`,
    strict: true,
    get: (name) => (Object.hasOwn(members, name) ? members[name] : undefined),
    fields: () =>
      record({ major: members.major as bigint, minor: members.minor as bigint, patch: members.patch as bigint }),
  };
  versions.set(object, version);
  return object;
}

const versions = new WeakMap<object, Version>();

export function versionImport(): HostObject {
  return importObject("version", {
    new: builtin("version.new", (args, at) => {
      const [text] = args;
      if (text === Undefined) return Undefined;
      const parsed = typeof text === "string" ? parseVersion(text) : undefined;
      if (args.length !== 1 || !parsed) {
        throw new SentinelRuntimeError(
          `version.new: ${JSON.stringify(typeof text === "string" ? text : typeName(text as Value))} is no version`,
          at,
        );
      }
      return versionValue(parsed);
    }),
  });
}
