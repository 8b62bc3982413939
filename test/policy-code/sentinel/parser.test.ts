import { describe, expect, it } from "vitest";
import { sentinelSyntaxProblems } from "../../../src/policy-code/sentinel";
import { parseSentinel, SentinelSyntaxError } from "../../../src/policy-code/sentinel/parser";

// The parser against the examples of the Sentinel language specification (developer.hashicorp.com/sentinel/docs/
// language/spec): each valid example parses, each invalid one fails where it is wrong, saying what was expected.

function syntaxError(source: string): SentinelSyntaxError {
  try {
    parseSentinel(source);
  } catch (error) {
    if (error instanceof SentinelSyntaxError) return error;
    throw error;
  }
  throw new Error(`parsed: ${source}`);
}

/** `line:column: message` of the first mistake. */
const mistake = (source: string) => syntaxError(source).message;

describe("the specification's examples parse", () => {
  it.each([
    ["comments", "# Single line comment\n// Single line comment\n/* multi\nline\n    comment */\nx = 1\n"],
    ["identifiers, also in other scripts", "a = 1\n_a = 2\n_A = 3\nαβ = 4\n"],
    ["integer literals", "a = 42\nb = 0600\nc = 0xBadFace\nd = 170141183460469231731687303715884105727\n"],
    ["floating-point literals", "a = [0., 72.40, 072.40, 2.71828, 1.e+0, 6.67428e-11, 1E6, .25, .12345E+5]\n"],
    [
      "string literals",
      'a = [`abc`, `\\n\n\\n`, "\\n", "\\"", "Hello, world!\\n", "日本語", "\\u65e5本\\U00008a9e", "\\xff\\u00FF"]\n',
    ],
    ["implicit line joining", "x = a or\nb or # This is a comment\nc\n"],
    [
      "whitespace",
      "r = rule { a or b }\ns = rule {\n  a or b }\nt = rule {\n  a or\n  b\n}\nu = a or      b\nv = a or\n\tb\n",
    ],
    [
      "rules, with when",
      'a = rule { x is y }\nb = rule {\n\tx == "value" or\n\ty == "other"\n}\nc = rule when x is y { y > 42 }\n',
    ],
    [
      "primary expressions",
      'a = [x, 2, (s + ".txt"), f(3.1415, true), m["foo"], s[i : j + 1], obj.color, f.p[i].x()]\n',
    ],
    ["slices", "a = [1, 2, 3, 4, 5]\nb = a[1:4]\nc = a[2:]\nd = a[:3]\ne = a[:]\n"],
    ["selectors that are reserved words", "a = tfplan.filter\nb = x.map.default\nc = v.in\n"],
    ["function literals", "f = func(a, b) { return b }\ng = func() { return undefined }\n"],
    ["assignments", 'a = 1\nb[12] = 42\nc["key"] = "value"\na *= 12\nb[12] += 8\nx = "hi"\nx += " and good bye"\n'],
    [
      "if, else if, else",
      "f = func(x, y, z) {\nif x < y {\n\treturn x\n} else if x > z {\n\treturn z\n} else {\n\treturn y\n}\n}\n",
    ],
    [
      "case statements",
      "f = func(x, y, z) {\ncase x {\nwhen y, z:\n\treturn true\nelse:\n\treturn false\n}\ncase {\nwhen x > 42:\n\treturn true\nelse:\n\treturn false\n}\n}\n",
    ],
    [
      "for, break and continue",
      "for [1, 2, 3] as v { count += v }\nfor [1, 2, 3] as idx, v {\n\tif idx > 1 { count += v }\n}\nfor data as k, v { count += v }\nfor [1, 2, 3] as v {\n\tif v == 2 {\n\t\tcontinue\n\t}\n\tprint(v)\n\tbreak\n}\n",
    ],
    [
      "quantifiers",
      'a = all group.tasks as t { t.driver is "vmware" }\nb = any group.tasks as t { t.driver is "vmware" }\nc = filter group.tasks as t { t.driver is "vmware" }\nd = map m as k, v { v }\n',
    ],
    [
      "set, matches and else operators",
      'a = [1, 2, 3] not contains "value"\nb = "test" in "testing"\nc = "TEST" matches "(?i)test"\nd = "test" not matches "e"\ne = foo.bar else ""\nf = config["bad-key"] else null\n',
    ],
    [
      "emptiness and definedness",
      "a = [] is empty and [1] is not empty\nb = 4 is defined and undefined is not defined\n",
    ],
    [
      "imports and parameters",
      'import "time"\nimport "math" as m\n\nparam foo\nparam bar default 42\nparam baz default -1.5\nparam qux default ["a", {"b": true}]\nmain = rule { true }\n',
    ],
    ["a named function (newer Sentinel)", "func double(x) {\n  return x * 2\n}\nmain = rule { double(2) == 4 }\n"],
  ])("%s", (_name, source) => {
    expect(() => parseSentinel(source)).not.toThrow();
  });

  it("a whole policy: imports, params, functions, rules", () => {
    const program = parseSentinel(`import "tfplan/v2" as tfplan
import "strings"

param allowed default ["t2.micro"]

violations = filter tfplan.resource_changes as address, rc {
  rc.type is "aws_instance" and
    rc.change.after.instance_type not in allowed
}

main = rule when length(tfplan.resource_changes) > 0 {
  length(violations) is 0
}
`);
    expect(program.imports.map((entry) => [entry.name, entry.alias])).toEqual([
      ["tfplan/v2", "tfplan"],
      ["strings", "strings"],
    ]);
    expect(program.params.map((entry) => entry.name)).toEqual(["allowed"]);
    expect(program.statements).toHaveLength(5);
  });

  it("takes a statement ended by a written ;, as the grammar's StatementList does (review 53)", () => {
    expect(sentinelSyntaxProblems("x = 1; y = 2\nmain = rule { x < y }\n", "p.sentinel")).toEqual([]);
    expect(sentinelSyntaxProblems('import "strings";\nmain = rule { true }\n', "p.sentinel")).toEqual([]);
    expect(sentinelSyntaxProblems("f = func() { return 1; }\nmain = rule { f() is 1 }\n", "p.sentinel")).toEqual([]);
    expect(parseSentinel("x = 1; y = 2;\n").statements.map((statement) => statement.type)).toEqual([
      "assign",
      "assign",
    ]);
    // A written ; still ends a statement, as a line's end does: what neither may split stays an error.
    expect(sentinelSyntaxProblems("x = 1 +; 2\n", "p.sentinel")).toHaveLength(1);
    expect(sentinelSyntaxProblems("x = [1; 2]\n", "p.sentinel")).toHaveLength(1);
  });

  it("reads operators with the specification's precedence", () => {
    const program = parseSentinel("x = a or b and c is d else e + f * g\n");
    const statement = program.statements[0];
    expect(statement?.type).toBe("assign");
    const shape = (node: unknown): unknown => {
      const value = node as { type: string; op?: string; left?: unknown; right?: unknown; name?: string };
      return value.type === "binary" ? [shape(value.left), value.op, shape(value.right)] : value.name;
    };
    expect(shape((statement as { value: unknown }).value)).toEqual([
      "a",
      "or",
      ["b", "and", ["c", "is", ["d", "else", ["e", "+", ["f", "*", "g"]]]]],
    ]);
  });
});

describe("mistakes fail with their line, column and what was expected", () => {
  it.each([
    [
      "a rule left open",
      "main = rule {\n  true\n",
      '3:1: expected "}" to close the rule opened at 1:13 (a rule holds one expression), found end of file',
    ],
    [
      "a misspelled keyword",
      "main = rul {\n  true\n}\n",
      '1:12: expected the end of the statement (a new line or ";") after rul (did you mean rule?), found "{"',
    ],
    [
      "a function left open",
      "f = func(a) {\n  return a\n",
      '3:1: expected "}" to close the function\'s body opened at 1:13, found end of file',
    ],
    [
      "a missing comma in a list",
      'x = ["a" "b"]\n',
      `1:10: expected "," or "]" in the list (a list spread over lines needs a comma at each line's end), found string "b"`,
    ],
    [
      "no comma at a list's last line",
      "x = [\n  1,\n  2\n]\n",
      `3:4: expected "," or "]" in the list (a list spread over lines needs a comma at each line's end), found end of line`,
    ],
    ["a string left open", 'x = "abc\n', '1:5: string literal not terminated: expected " before the end of the line'],
    ["an unknown escape", 'x = "a\\qb"\n', "1:7: unknown escape sequence \\q"],
    ["a surrogate half", 'x = "\\uD800"\n', "is no Unicode code point"],
    ["a keyword as a name", "for = 1\n", '1:5: expected an expression, found "="'],
    [
      "a reserved word as a parameter",
      "f = func(rule) { return 1 }\n",
      '1:10: expected a parameter\'s name, found keyword "rule", which is reserved',
    ],
    [
      "an import after a statement",
      'x = 1\nimport "strings"\n',
      "2:1: import must come before every other statement of the file",
    ],
    ["a param after a statement", "x = 1\nparam y\n", "2:1: param must come at the top of the file"],
    ["a param default that is no literal", "param x default y\n", "1:17: a parameter's default must be a literal"],
    ["an assignment to a selector", "x.y = 1\n", "1:3: cannot assign to the selector .y"],
    ["an expression alone", "x == 1\n", "1:1: expected an assignment or a function call"],
    ["return outside a function", "return 1\n", "1:1: return is allowed only inside a function"],
    ["break outside a loop", "f = func() { break }\n", "1:14: break is allowed only inside a for loop"],
    ["else on the next line", "if x {\n  y = 1\n}\nelse {\n  y = 2\n}\n", "4:1: expected a statement"],
    [
      "a quantifier without as",
      "x = all list { true }\n",
      '1:14: expected "as" after the collection of the all, found "{"',
    ],
    [
      "not without in, contains or matches",
      "x = a not b\n",
      '1:11: expected "in", "contains" or "matches" after not, found identifier b',
    ],
    ["a repeated import", 'import "strings"\nimport "strings"\n', '2:1: import "strings" repeats the import at line 1'],
    ["a number running into a name", "x = 12abc\n", "1:5: invalid number literal"],
    ["an invalid octal literal", "x = 09\n", "1:5: invalid octal literal 09"],
    ["an unterminated comment", "x = 1 /* comment\n", "1:7: comment not terminated"],
    ["an empty rule", "main = rule { }\n", '1:15: expected the rule\'s expression, found "}"'],
    [
      "a case clause without when",
      "f = func() {\ncase x {\n  1:\n  return 1\n}\n}\n",
      '3:3: expected "when" or "else" to start a clause of the case',
    ],
  ])("%s", (_name, source, expected) => {
    expect(mistake(source)).toContain(expected);
  });

  it("says where the mistake is, not where the parse gave up: the line of the missing comma", () => {
    const source = 'import "strings"\n\nallowed = [\n  "t2.micro",\n  "t2.small"\n  "t2.medium",\n]\n';
    const error = syntaxError(source);
    expect([error.at.line, error.at.column]).toEqual([5, 13]);
  });
});
