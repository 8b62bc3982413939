import { describe, expect, it } from "vitest";
import { NotSupported, PolicyErrorCalled, SentinelRuntimeError } from "../../../src/policy-code/sentinel/errors";
import { Evaluator, type ImportSource } from "../../../src/policy-code/sentinel/evaluator";
import { parseSentinel } from "../../../src/policy-code/sentinel/parser";
import { standardImport } from "../../../src/policy-code/sentinel/stdlib";
import { fromPlain, type Rule, show, toPlain, Undefined, type Value } from "../../../src/policy-code/sentinel/values";

// The evaluator against the specification's examples (Undefined, Operators, Quantifiers, Statements, Built-in
// Functions, Program Execution) and the standard imports' documented examples.

const noon = Date.UTC(2019, 10, 16, 1, 20, 30);

function evaluator(params: Record<string, unknown> = {}, mocks: Record<string, unknown> = {}) {
  let self: Evaluator | undefined;
  const imports: ImportSource = {
    resolve(name) {
      if (name in mocks) return fromPlain(mocks[name]);
      const found = standardImport(name, { now: noon, call: (fn, args, at) => (self as Evaluator).call(fn, args, at) });
      if (!found) throw new SentinelRuntimeError(`no import ${name}`);
      return found;
    },
  };
  self = new Evaluator(imports, new Map(Object.entries(params).map(([key, value]) => [key, fromPlain(value)])));
  return self;
}

/** Runs the source and gives each global's value (rules evaluated), as plain JavaScript. */
function globals(source: string, params: Record<string, unknown> = {}, mocks: Record<string, unknown> = {}) {
  const engine = evaluator(params, mocks);
  const scope = engine.run(parseSentinel(source), "policy.sentinel");
  const values: Record<string, unknown> = {};
  for (const [name, value] of scope.variables) {
    const resolved =
      typeof value === "object" && value !== null && "kind" in value && value.kind === "rule"
        ? engine.ruleValue(value as Rule)
        : value;
    values[name] = toPlain(resolved as Value);
  }
  return { values, printed: engine.printed };
}

/** The value of one expression. */
const value = (expression: string, mocks: Record<string, unknown> = {}) => {
  const imports = Object.keys(mocks)
    .map((name) => `import "${name}"\n`)
    .join("");
  return globals(`import "strings"\nimport "types"\n${imports}x = ${expression}\n`, {}, mocks).values.x;
};

describe("undefined (Undefined)", () => {
  it.each([
    ["undefined or true", true],
    ["undefined or false", "undefined"],
    ["undefined or undefined", "undefined"],
    ["undefined and true", "undefined"],
    ["undefined and false", "undefined"],
    ["undefined xor true", "undefined"],
    ["false or true or undefined", true],
    ["false or undefined or true", true],
    ["true and false and undefined", false],
    ["true and undefined and false", "undefined"],
    ["undefined + 5", "undefined"],
    ["-undefined", "undefined"],
    ["!undefined", "undefined"],
    ["{}.missing", "undefined"],
    ["{}.missing.deeper", "undefined"],
    ["[1][5]", "undefined"],
    ["null[1]", "undefined"],
    ["[1, 2][-1]", 2],
    ["1 and true", "undefined"],
  ])("%s is %s", (expression, expected) => {
    expect(value(expression)).toEqual(expected);
  });
});

describe("operators", () => {
  it.each([
    ["5 / 3", 1],
    ["-5 / 3", -1],
    ["5 % -3", 2],
    ["-5 % -3", -2],
    ["5.0 / 2", 2.5],
    ["4 * 5 / 5", 4],
    ["4 + 5 * 2", 14],
    ['"hi" + ", " + "hello"', "hi, hello"],
    ["[1, 2] + [2, 3]", [1, 2, 2, 3]],
    ["1 == 1.0", true],
    ['"a" < "b"', true],
    ['"a" == 1', false],
    ['false is not ""', true],
    ['"a" < 1', "undefined"],
    ['"a" == null', false],
    ["{} == null", false],
    ['[1, "a"] is [1, "a"]', true],
    ["[1, 2, 3] contains 2", true],
    ['[1, 2, 3] not contains "value"', true],
    ['{ "a": 1, "b": 2 } contains "a"', true],
    ['{ "a": 1, "b": 2 } contains 2', false],
    ['"test" contains "est"', true],
    ['"test" in "testing"', true],
    ['"best" in "testing"', false],
    ['"test" matches "^e"', false],
    ['"TEST" matches "(?i)test"', true],
    ['"ABC123" matches "[A-Z]+\\\\d+"', true],
    ['"test" not matches "e"', false],
    ['{}.foo else "default"', "default"],
    ['"set" else "default"', "set"],
    ["{}.x else null is null", true],
    ["[] is empty and [1] is not empty and {} is empty", true],
    ["4 is defined and undefined is not defined", true],
    ["9223372036854775807 + 1", "-9223372036854775808"],
  ])("%s gives %j", (expression, expected) => {
    expect(value(expression)).toEqual(expected);
  });

  it("an operation the specification calls an error stops the policy", () => {
    expect(() => value('1 + "a"')).toThrow(/int \+ string is not permitted/);
    expect(() => value("1 / 0")).toThrow(/division by zero/);
    expect(() => value("5 contains 1")).toThrow(/need a list, a map or a string/);
  });
});

describe("quantifiers, loops and functions", () => {
  it("all, any, filter and map, on lists and maps", () => {
    const { values } = globals(`
l = [1, 1, 2, 3, 5, 8]
m = { "a": "foo", "b": "bar" }
evens = filter l as v { v % 2 is 0 }
matched = filter m as _, v { v is "foo" }
mapped = map m as k, v { v }
first_keys = map m as k { k }
everyone = all l as v { v > 0 }
someone = any l as i, v { i == 5 and v == 8 }
nobody = any [] as v { true }
vacuous = all [] as v { false }
unknown = filter [{ "x": true }, {}] as v { v.x }
`);
    expect(values).toMatchObject({
      evens: [2, 8],
      matched: { a: "foo" },
      mapped: ["foo", "bar"],
      first_keys: ["a", "b"],
      everyone: true,
      someone: true,
      nobody: false,
      vacuous: true,
      unknown: "undefined",
    });
  });

  it("for with break and continue; functions see and change the scopes around them (Scope)", () => {
    const { values, printed } = globals(`
count = 0
for [1, 2, 3] as v { count += v }
for [1, 2, 3] as v {
  if v == 2 {
    continue
  }
  print(v)
  break
}
a = 1
f = func() {
  a = 12
  b = 1
  return undefined
}
f()
total = 0
for { "a": 12, "b": 32 } as k, v { total += v }
`);
    expect(values).toMatchObject({ count: 6, a: 12, total: 44 });
    expect(values).not.toHaveProperty("b");
    expect(printed).toEqual(["1"]);
  });

  it("case statements pick the first clause whose value is equal, else the else clause", () => {
    const { values } = globals(`
kind = func(x) {
  case x {
  when "a", "b":
    return "letter"
  when 1:
    return "one"
  else:
    return "other"
  }
}
results = [kind("b"), kind(1), kind(2.5)]
bare = func(x) {
  case {
  when x > 42:
    return true
  else:
    return false
  }
}
big = bare(50)
`);
    expect(values).toMatchObject({ results: ["letter", "one", "other"], big: true });
  });

  it("recursion ends in an error, not a crash", () => {
    expect(() => globals("f = func(n) { return f(n + 1) }\nx = f(1)\n")).toThrow(/nest deeper than/);
  });
});

describe("rules and parameters (Rule Expressions, Parameters, Program Execution)", () => {
  it("rules are lazy and memoized; a false when makes a rule true", () => {
    const { values, printed } = globals(`
x = 1
noisy = rule { print("evaluated") }
guarded = rule when x > 5 { false }
main = rule { noisy and noisy and guarded }
`);
    expect(values.main).toBe(true);
    expect(printed).toEqual(["evaluated"]);
  });

  it("parameters take the given value, else their default; a required one without a value errors", () => {
    const source = 'param limit default 10\nparam names default ["a"]\nmain = rule { limit > 5 }\n';
    expect(globals(source).values).toMatchObject({ limit: 10, names: ["a"], main: true });
    expect(globals(source, { limit: 3 }).values).toMatchObject({ limit: 3, main: false });
    expect(() => globals("param needed\nmain = rule { needed }\n")).toThrow(/param needed has no default/);
  });

  it("a function that ends without return is not run, as the documentation says every function must return one (review 53)", () => {
    expect(() => globals("f = func() { x = 1 }\ny = f()\n")).toThrow(NotSupported);
    expect(() => globals("f = func() { x = 1 }\ny = f()\n")).toThrow(/2:6 ended without a return statement/);
    expect(globals("f = func() { return undefined }\ny = f()\n").values.y).toBe("undefined");
  });

  it("error() halts the policy", () => {
    expect(() => globals('x = error("stop", 1)\n')).toThrow(PolicyErrorCalled);
  });
});

describe("built-in functions", () => {
  it.each([
    ['length("日本")', 6],
    ["length(undefined)", "undefined"],
    ["range(5)", [0, 1, 2, 3, 4]],
    ["range(1, 5, 2)", [1, 3]],
    ["range(0, -3, -1)", [0, -1, -2]],
    ['keys({ "a": 2, "b": 3 })', ["a", "b"]],
    ['values({ "a": 2, "b": 3 })', [2, 3]],
    ['int("0x1F")', 31],
    ["int(2.9)", 2],
    ["int(true)", 1],
    ['float("1.5")', 1.5],
    ["string(42)", "42"],
    ["string(1.5)", "1.500000"],
    ['bool("T")', true],
    ['bool("maybe")', "undefined"],
    ["bool(0)", false],
  ])("%s is %j", (expression, expected) => {
    expect(value(expression)).toEqual(expected);
  });

  it("append and delete change the collection in place, and print writes its values", () => {
    const { values, printed } = globals(`
l = [1, 2]
append(l, 3)
d = { "a": 2, "b": 3 }
delete(d, "a")
delete(d, "c")
ok = print("hello", "world", 42, [1, "x"], { "k": null })
`);
    expect(values).toMatchObject({ l: [1, 2, 3], d: { b: 3 }, ok: true });
    expect(printed).toEqual(['hello world 42 [1, "x"] {"k": null}']);
  });
});

describe("standard imports (their documented examples)", () => {
  it.each([
    ['strings.has_prefix("billing-id", "billing-")', true],
    ['strings.has_suffix("billing-name", "id")', false],
    ['strings.join(["foo", "bar", "baz"], ".")', "foo.bar.baz"],
    ['strings.join([["foo", "bar"], "baz"], ".")', "foo.bar.baz"],
    ['strings.join(["a", 1, 1.01, true], ",")', "a,1,1.01,true"],
    ['strings.replace("foofoofoobar", "foo", "bar", 2)', "barbarfoobar"],
    ['strings.replace("foobar", "foo", "bar")', "barbar"],
    ['strings.trim_prefix("billing-id", "billing-")', "id"],
    ['strings.trim_suffix("bill-id", "-foo")', "bill-id"],
    ['strings.trim("xxhixx", "x")', "hi"],
    ['strings.to_upper("FoO")', "FOO"],
    ['strings.split("foo,bar,baz", ",")', ["foo", "bar", "baz"]],
    ['strings.split(["foo", "bar"], ",")', ["foo", "bar"]],
    ['strings.has_prefix(undefined, "x")', "undefined"],
    ["types.type_of(42.123)", "float"],
    ["types.type_of(null)", "null"],
    ["types.type_of(undefined)", "undefined"],
    ["types.type_of({})", "map"],
  ])("%s is %j", (expression, expected) => {
    expect(value(expression)).toEqual(expected);
  });

  it("json, base64, units, decimal, version, time and sockaddr", () => {
    const { values } = globals(`
import "json"
import "base64"
import "units"
import "decimal"
import "version"
import "time"
import "sockaddr"
config = json.unmarshal("{ \\"foo\\": 42, \\"list\\": [1.5, true] }")
foo = config.foo
bar = config.bar
marshalled = json.marshal({ "b": 1, "a": [true, null] })
encoded = base64.encode("foo")
decoded = base64.decode("Zm9v")
mb = units.megabyte
exact = decimal.new("1.1").add(decimal.new("2.2")).string
compared = decimal.new(200).lte(decimal.new("1000"))
percent = decimal.new("50").divide(decimal.new(200)).multiply(100).float
newer = version.new("1.0.0-alpha.1+001").greater_than("0.12.0-alpha.1+001")
allowed = version.new("1.4.2").satisfies("~> 1.4, != 1.4.1")
loaded = time.load("2019-11-16T01:20:30Z")
weekday = loaded.weekday_name
later = loaded.add(time.hour * 1).hour
zone = time.load("2019-11-16T01:20:30-08:00").zone_string
now_hour = time.now.hour
inside = sockaddr.is_contained("192.168.0.0/24", "192.168.0.32")
outside = sockaddr.is_contained("192.168.0.0/24", "192.174.1.1")
v6 = sockaddr.is_ipv6("2001:0db8:85a3:0000:0000:8a2e:0370:7334")
`);
    expect(values).toMatchObject({
      foo: 42,
      bar: "undefined",
      marshalled: '{"a":[true,null],"b":1}',
      encoded: "Zm9v",
      decoded: "foo",
      mb: 1048576,
      exact: "3.3",
      compared: true,
      percent: 25,
      newer: true,
      allowed: true,
      weekday: "Saturday",
      later: 2,
      zone: "-08:00",
      now_hour: 1,
      inside: true,
      outside: false,
      v6: true,
    });
  });

  it("collection and collection/maps, as HashiCorp's newer libraries use them", () => {
    const { values } = globals(`
import "collection"
import "collection/maps" as maps
resources = [
  { "address": "a", "values": { "ingress": [{ "port": 22 }, { "port": 443 }] } },
  { "address": "b", "values": {} },
]
open = collection.reject(resources, func(res) { return maps.get(res, "values.ingress", []) is empty })
first = collection.find(resources, func(res) { return res.address is "b" }).address
ports = maps.get(resources[0], "values.ingress.*.port")
second = maps.get(resources[0], "values.ingress.1.port")
missing = maps.get(resources[1], "values.ingress", "none")
has = [maps.has(resources[0], "values.ingress"), maps.has(resources[1], "values.ingress")]
matched = length(collection.matches(resources, { "address": "a" }))
`);
    expect(values).toMatchObject({
      first: "b",
      ports: [22, 443],
      second: 443,
      missing: "none",
      has: [true, false],
      matched: 1,
    });
    expect((values.open as { address: string }[]).map((res) => res.address)).toEqual(["a"]);
  });

  it("a program may name a variable after a predeclared function, not after a constant", () => {
    expect(globals("values = [1, 2]\nx = length(values)\n").values).toMatchObject({ values: [1, 2], x: 2 });
    expect(() => globals("null = 1\n")).toThrow(/predeclared constant/);
  });

  it("a mocked import's data replaces the import", () => {
    expect(value("time.now.weekday_name", { time: { now: { weekday_name: "Friday" } } })).toBe("Friday");
  });

  it("what the evaluator does not know is NotSupported, never a value", () => {
    expect(() => value("strings.sprintf_unknown_function")).toThrow(NotSupported);
    expect(() => globals('import "http"\n')).toThrow(/import "http" is not run/);
    expect(() => globals('import "tfplan/v2" as tfplan\n')).toThrow(/has no mock in this case/);
    expect(() => value("decimal.new(2).sqrt()", {})).toThrow();
  });

  it("prints values as the specification shows them", () => {
    expect(show(fromPlain([1, 2, 3]))).toBe("[1, 2, 3]");
    expect(show(Undefined)).toBe("undefined");
    expect(show(1e21)).toBe("1e+21");
  });
});
