// An evaluator of Sentinel programs, from the specification (Program Execution): a file runs top to bottom in its own
// scope; rules are evaluated when first used and remembered; undefined flows through operators as the specification
// says. Imports come from an `ImportSource` (a test case's mocks and modules, the standard imports). No I/O.
import type { Expression, Program, Statement } from "./ast";
import { builtinFunctions } from "./builtins";
import { NotSupported, PolicyErrorCalled, SentinelRuntimeError } from "./errors";
import type { Position } from "./lexer";
import { applyBinary, applyTest, applyUnary, truth } from "./operators";
import {
  type BuiltinFunction,
  equal,
  isMap,
  type Rule,
  Scope,
  type SentinelFunction,
  SentinelMap,
  typeName,
  Undefined,
  type Value,
} from "./values";

/** Where the values of a program's imports come from. */
export interface ImportSource {
  /** The import's value; throws NotSupported or SentinelRuntimeError where there is none. */
  resolve(name: string, at: Position, file: string): Value;
}

type Completion = undefined | "break" | "continue" | { returned: Value };

const maximumCallDepth = 512;
const constants = new Set(["true", "false", "null", "undefined"]);

export class Evaluator {
  /** What `print` wrote, line by line, in order. */
  readonly printed: string[] = [];
  private readonly universe: Scope;
  private depth = 0;

  constructor(
    private readonly imports: ImportSource,
    /** Values of the policy's parameters, by name; a parameter without one takes its default. */
    private readonly params: ReadonlyMap<string, Value> = new Map(),
    /** Values put in the global scope before the program runs (a test case's `global` blocks). */
    private readonly globals: ReadonlyMap<string, Value> = new Map(),
  ) {
    this.universe = new Scope();
    this.universe.variables.set("true", true);
    this.universe.variables.set("false", false);
    this.universe.variables.set("null", null);
    this.universe.variables.set("undefined", Undefined);
    for (const fn of builtinFunctions((line) => this.printed.push(line))) {
      this.universe.variables.set(fn.name, fn);
    }
  }

  /**
   * Runs a file: a policy (`usesParams`: its parameters take the given values), a module or a mock. Its global scope
   * afterwards holds what it defined.
   */
  run(program: Program, file: string, usesParams = true): Scope {
    const scope = new Scope(this.universe);
    for (const [name, value] of this.globals) scope.variables.set(name, value);
    for (const statement of program.statements) {
      if (statement.type === "param") {
        this.declareParam(statement, scope, file, usesParams);
        continue;
      }
      const completion = this.execute(statement, scope, file);
      if (completion !== undefined) {
        throw new SentinelRuntimeError("return, break or continue outside of a function", statement.at, file);
      }
    }
    return scope;
  }

  private declareParam(
    statement: Extract<Statement, { type: "param" }>,
    scope: Scope,
    file: string,
    usesParams: boolean,
  ): void {
    if (scope.variables.has(statement.name) || this.universe.variables.has(statement.name)) {
      throw new SentinelRuntimeError(
        `param ${statement.name} conflicts with an import or a predeclared name`,
        statement.at,
        file,
      );
    }
    const given = usesParams ? this.params.get(statement.name) : undefined;
    if (given !== undefined) {
      scope.variables.set(statement.name, given);
    } else if (statement.default) {
      scope.variables.set(statement.name, this.evaluate(statement.default, scope, file));
    } else {
      throw new SentinelRuntimeError(
        `param ${statement.name} has no default and no value was given`,
        statement.at,
        file,
      );
    }
  }

  /** The value of a rule, evaluated once. */
  ruleValue(rule: Rule): Value {
    if (rule.state === "done") return rule.value as Value;
    if (rule.state === "evaluating") throw new SentinelRuntimeError("a rule refers to itself", rule.body.at, rule.file);
    rule.state = "evaluating";
    try {
      let value: Value;
      if (rule.when) {
        const when = truth(this.evaluate(rule.when, rule.scope, rule.file));
        value = when === true ? this.evaluate(rule.body, rule.scope, rule.file) : when === false ? true : Undefined;
      } else {
        value = this.evaluate(rule.body, rule.scope, rule.file);
      }
      rule.value = value;
      rule.state = "done";
      return value;
    } finally {
      if (rule.state === "evaluating") rule.state = "new";
    }
  }

  private execute(statement: Statement, scope: Scope, file: string): Completion {
    switch (statement.type) {
      case "import": {
        const value = this.imports.resolve(statement.name, statement.at, file);
        scope.variables.set(statement.alias, value);
        return undefined;
      }
      case "param":
        throw new SentinelRuntimeError("param is allowed only at the top of the file", statement.at, file);
      case "assign":
        this.assign(statement, scope, file);
        return undefined;
      case "expression":
        this.evaluate(statement.expression, scope, file);
        return undefined;
      case "function":
        scope.assign(statement.name, this.functionOf(statement.func, scope, file));
        return undefined;
      case "if": {
        // Anything but true (false, undefined) takes the else branch (If Statements). No new block: `if` has none.
        if (this.evaluate(statement.condition, scope, file) === true)
          return this.executeAll(statement.then, scope, file);
        if (statement.else) return this.executeAll(statement.else, scope, file);
        return undefined;
      }
      case "case":
        return this.executeCase(statement, scope, file);
      case "for":
        return this.executeFor(statement, scope, file);
      case "break":
        return "break";
      case "continue":
        return "continue";
      case "return":
        return { returned: this.evaluate(statement.value, scope, file) };
    }
  }

  private executeAll(statements: Statement[], scope: Scope, file: string): Completion {
    for (const statement of statements) {
      const completion = this.execute(statement, scope, file);
      if (completion !== undefined) return completion;
    }
    return undefined;
  }

  private executeCase(statement: Extract<Statement, { type: "case" }>, scope: Scope, file: string): Completion {
    const subject = statement.subject ? this.evaluate(statement.subject, scope, file) : true;
    let otherwise: Statement[] | undefined;
    for (const clause of statement.clauses) {
      if (!clause.whens) {
        otherwise = clause.body;
        continue;
      }
      for (const when of clause.whens) {
        if (equal(subject, this.evaluate(when, scope, file)) === true) return this.executeAll(clause.body, scope, file);
      }
    }
    return otherwise ? this.executeAll(otherwise, scope, file) : undefined;
  }

  private executeFor(statement: Extract<Statement, { type: "for" }>, scope: Scope, file: string): Completion {
    const collection = this.evaluate(statement.collection, scope, file);
    for (const [first, second] of this.iterate(collection, statement.collection.at, file, "for")) {
      const inner = new Scope(scope);
      bindNames(inner, statement.names, first, second, Array.isArray(collection));
      const completion = this.executeAll(statement.body, inner, file);
      if (completion === "break") break;
      if (completion === "continue") continue;
      if (completion !== undefined) return completion;
    }
    return undefined;
  }

  /** A list's (index, value) or a map's (key, value) pairs. */
  private iterate(collection: Value, at: Position, file: string, what: string): Iterable<[Value, Value]> {
    if (Array.isArray(collection)) {
      return collection.map((value, index): [Value, Value] => [BigInt(index), value]);
    }
    if (isMap(collection)) return [...collection.pairs()];
    // Over undefined a for runs no iteration: the runtime does so (HashiCorp's own library iterates an undefined
    // filter result in a case it expects to pass: aws/require-private-acl-and-kms-for-s3-buckets/pass-no-op).
    if (collection === Undefined) return [];
    throw new SentinelRuntimeError(`${what} needs a list or a map, not ${typeName(collection)}`, at, file);
  }

  private assign(statement: Extract<Statement, { type: "assign" }>, scope: Scope, file: string): void {
    const { target, op } = statement;
    // The right-hand side first, then the target's operands (Assignments: RHS, LHS).
    let value = this.evaluate(statement.value, scope, file);
    if (target.type === "ident") {
      if (op !== "=") {
        const current = scope.lookup(target.name);
        if (current === undefined) {
          throw new SentinelRuntimeError(
            `${target.name} is not declared: ${op} needs a value to start from`,
            target.at,
            file,
          );
        }
        value = applyBinary(op[0] as "+", this.resolved(current), value, statement.at);
      }
      const holder = scope.holder(target.name);
      if (holder === this.universe) {
        // A predeclared function's name may be taken by a variable of the program (HashiCorp's libraries assign
        // `values`); the constants may not.
        if (constants.has(target.name)) {
          throw new SentinelRuntimeError(
            `${target.name} is a predeclared constant and cannot be assigned`,
            target.at,
            file,
          );
        }
        scope.variables.set(target.name, value);
        return;
      }
      scope.assign(target.name, value);
      return;
    }
    if (target.type !== "index") throw new SentinelRuntimeError("cannot assign to this expression", target.at, file);
    const container = this.evaluate(target.target, scope, file);
    const key = this.evaluate(target.index, scope, file);
    if (isMap(container)) {
      if (op !== "=") value = applyBinary(op[0] as "+", container.get(key) ?? Undefined, value, statement.at);
      if (!container.set(key, value)) {
        throw new SentinelRuntimeError(
          `a map's key must be a boolean, a number or a string, not ${typeName(key)}`,
          target.at,
          file,
        );
      }
      return;
    }
    if (Array.isArray(container)) {
      const index = typeof key === "bigint" ? Number(key < 0n ? BigInt(container.length) + key : key) : Number.NaN;
      if (!(index >= 0 && index < container.length)) {
        throw new SentinelRuntimeError(
          `index ${String(key)} is out of the list's range (${container.length} elements)`,
          target.at,
          file,
        );
      }
      if (op !== "=") value = applyBinary(op[0] as "+", container[index] as Value, value, statement.at);
      container[index] = value;
      return;
    }
    throw new SentinelRuntimeError(
      `only a list or a map takes an index assignment, not ${typeName(container)}`,
      target.at,
      file,
    );
  }

  /** A rule's value where a rule is used as a value. */
  private resolved(value: Value): Value {
    return typeof value === "object" &&
      value !== null &&
      !Array.isArray(value) &&
      !(value instanceof SentinelMap) &&
      value.kind === "rule"
      ? this.ruleValue(value)
      : value;
  }

  evaluate(expression: Expression, scope: Scope, file: string): Value {
    switch (expression.type) {
      case "int":
      case "float":
      case "string":
        return expression.value;
      case "ident": {
        const value = scope.lookup(expression.name);
        if (value === undefined) {
          throw new SentinelRuntimeError(`${expression.name} is not declared`, expression.at, file);
        }
        return this.resolved(value);
      }
      case "list":
        return expression.items.map((item) => this.evaluate(item, scope, file));
      case "map": {
        const map = new SentinelMap();
        for (const [keyExpression, valueExpression] of expression.entries) {
          const key = this.evaluate(keyExpression, scope, file);
          if (!map.set(key, this.evaluate(valueExpression, scope, file))) {
            throw new SentinelRuntimeError(
              `a map's key must be a boolean, a number or a string, not ${typeName(key)}`,
              keyExpression.at,
              file,
            );
          }
        }
        return map;
      }
      case "func":
        return this.functionOf(expression, scope, file);
      case "rule":
        return {
          kind: "rule",
          ...(expression.when ? { when: expression.when } : {}),
          body: expression.body,
          scope,
          file,
          state: "new",
        };
      case "selector":
        return this.select(this.evaluate(expression.target, scope, file), expression.name, expression.at, file);
      case "index":
        return this.index(
          this.evaluate(expression.target, scope, file),
          this.evaluate(expression.index, scope, file),
          expression.at,
          file,
        );
      case "slice":
        return this.slice(expression, scope, file);
      case "call": {
        const callee = this.evaluate(expression.callee, scope, file);
        const args = expression.args.map((arg) => this.evaluate(arg, scope, file));
        return this.call(callee, args, expression.at, file, expression.callee);
      }
      case "unary":
        return applyUnary(expression.op, this.evaluate(expression.operand, scope, file), expression.at);
      case "test":
        return applyTest(expression.op, this.evaluate(expression.operand, scope, file));
      case "binary":
        return this.binary(expression, scope, file);
      case "quantifier":
        return this.quantifier(expression, scope, file);
    }
  }

  private functionOf(expression: Extract<Expression, { type: "func" }>, scope: Scope, file: string): SentinelFunction {
    return { kind: "function", params: expression.params, body: expression.body, scope, file };
  }

  private binary(expression: Extract<Expression, { type: "binary" }>, scope: Scope, file: string): Value {
    const { op } = expression;
    if (op === "and" || op === "or" || op === "xor") {
      const left = truth(this.evaluate(expression.left, scope, file));
      // Short-circuits (Logical Operators, Undefined): `false and x` is false, `true or x` true, whatever x is.
      if (op === "and" && left === false) return false;
      if (op === "or" && left === true) return true;
      const right = truth(this.evaluate(expression.right, scope, file));
      if (op === "or") return left === Undefined ? (right === true ? true : Undefined) : right;
      if (left === Undefined || right === Undefined) return Undefined;
      return op === "and" ? right : left !== right;
    }
    if (op === "else") {
      const left = this.evaluate(expression.left, scope, file);
      return left === Undefined ? this.evaluate(expression.right, scope, file) : left;
    }
    const left = this.evaluate(expression.left, scope, file);
    const right = this.evaluate(expression.right, scope, file);
    try {
      return applyBinary(op, left, right, expression.at);
    } catch (error) {
      throw withFile(error, file);
    }
  }

  private quantifier(expression: Extract<Expression, { type: "quantifier" }>, scope: Scope, file: string): Value {
    const collection = this.evaluate(expression.collection, scope, file);
    if (collection === Undefined) return Undefined;
    if (!Array.isArray(collection) && !isMap(collection)) {
      if (collection === null) return Undefined;
      throw new SentinelRuntimeError(
        `${expression.op} needs a list or a map, not ${typeName(collection)}`,
        expression.collection.at,
        file,
      );
    }
    const isList = Array.isArray(collection);
    const body = (first: Value, second: Value): Value => {
      const inner = new Scope(scope);
      // One name: a list's value, a map's key (Quantifier Expressions).
      bindNames(inner, expression.names, first, second, isList);
      return this.evaluate(expression.body, inner, file);
    };
    const pairs = this.iterate(collection, expression.collection.at, file, expression.op);
    switch (expression.op) {
      case "all": {
        for (const [first, second] of pairs) {
          const value = truth(body(first, second));
          if (value !== true) return value;
        }
        return true;
      }
      case "any": {
        let sawUndefined = false;
        for (const [first, second] of pairs) {
          const value = truth(body(first, second));
          if (value === true) return true;
          if (value === Undefined) sawUndefined = true;
        }
        return sawUndefined ? Undefined : false;
      }
      case "filter": {
        if (isList) {
          const kept: Value[] = [];
          for (const [first, second] of pairs) {
            const value = truth(body(first, second));
            if (value === Undefined) return Undefined;
            if (value) kept.push(second);
          }
          return kept;
        }
        const kept = new SentinelMap();
        for (const [first, second] of pairs) {
          const value = truth(body(first, second));
          if (value === Undefined) return Undefined;
          if (value) kept.set(first, second);
        }
        return kept;
      }
      case "map": {
        const mapped: Value[] = [];
        for (const [first, second] of pairs) mapped.push(body(first, second));
        return mapped;
      }
    }
  }

  private select(target: Value, name: string, at: Position, file: string): Value {
    if (target === Undefined || target === null) return Undefined;
    if (isMap(target)) return target.get(name) ?? Undefined;
    if (typeof target === "object" && !Array.isArray(target) && target.kind === "object") {
      const value = target.get(name);
      if (value !== undefined) return this.resolved(value);
      if (target.strict) throw new NotSupported(`${target.describe} has no ${name} known to this evaluator`);
      return Undefined;
    }
    throw new SentinelRuntimeError(`.${name}: a selector needs a map or an import, not ${typeName(target)}`, at, file);
  }

  private index(target: Value, key: Value, at: Position, file: string): Value {
    if (target === Undefined || target === null) return Undefined;
    if (isMap(target)) return target.get(key) ?? Undefined;
    if (Array.isArray(target) || typeof target === "string") {
      if (key === Undefined) return Undefined;
      if (typeof key !== "bigint") {
        throw new SentinelRuntimeError(`a ${typeName(target)}'s index must be an int, not ${typeName(key)}`, at, file);
      }
      const bytes = typeof target === "string" ? Buffer.from(target) : undefined;
      const length = bytes ? bytes.length : (target as Value[]).length;
      const index = Number(key < 0n ? BigInt(length) + key : key);
      if (index < 0 || index >= length) return Undefined;
      return bytes ? bytes.subarray(index, index + 1).toString("latin1") : ((target as Value[])[index] as Value);
    }
    if (typeof target === "object" && !Array.isArray(target) && target.kind === "object" && typeof key === "string") {
      return this.select(target, key, at, file);
    }
    throw new SentinelRuntimeError(`an index needs a list, a map or a string, not ${typeName(target)}`, at, file);
  }

  private slice(expression: Extract<Expression, { type: "slice" }>, scope: Scope, file: string): Value {
    const target = this.evaluate(expression.target, scope, file);
    const low = expression.low ? this.evaluate(expression.low, scope, file) : 0n;
    if (target === Undefined || target === null) return Undefined;
    if (!Array.isArray(target) && typeof target !== "string") {
      throw new SentinelRuntimeError(`a slice needs a list or a string, not ${typeName(target)}`, expression.at, file);
    }
    const bytes = typeof target === "string" ? Buffer.from(target) : undefined;
    const length = bytes ? bytes.length : (target as Value[]).length;
    const high = expression.high ? this.evaluate(expression.high, scope, file) : BigInt(length);
    if (low === Undefined || high === Undefined) return Undefined;
    if (typeof low !== "bigint" || typeof high !== "bigint") {
      throw new SentinelRuntimeError("a slice's bounds must be ints", expression.at, file);
    }
    if (!(0n <= low && low <= high && high <= BigInt(length))) return Undefined;
    return bytes
      ? bytes.subarray(Number(low), Number(high)).toString("utf8")
      : (target as Value[]).slice(Number(low), Number(high));
  }

  /** Calls a function value: a Sentinel function, a built-in or an import's function. */
  call(callee: Value, args: Value[], at: Position, file = "", calleeExpression?: Expression): Value {
    if (typeof callee !== "object" || callee === null || Array.isArray(callee) || isMap(callee)) {
      const name = calleeExpression ? describeCallee(calleeExpression) : "the value";
      throw new SentinelRuntimeError(`${name} is ${typeName(callee)}, not a function: it cannot be called`, at, file);
    }
    if (callee.kind === "builtin") return this.callBuiltin(callee, args, at, file);
    if (callee.kind !== "function") {
      throw new SentinelRuntimeError(`a ${typeName(callee)} cannot be called`, at, file);
    }
    if (args.length !== callee.params.length) {
      throw new SentinelRuntimeError(
        `the function takes ${callee.params.length} argument${callee.params.length === 1 ? "" : "s"}, and ${args.length} were given`,
        at,
        file,
      );
    }
    if (++this.depth > maximumCallDepth) {
      this.depth = 0;
      throw new SentinelRuntimeError(`calls nest deeper than ${maximumCallDepth}: endless recursion?`, at, file);
    }
    try {
      const scope = new Scope(callee.scope);
      callee.params.forEach((name, position) => {
        scope.variables.set(name, args[position] as Value);
      });
      const completion = this.executeAll(callee.body, scope, callee.file);
      if (typeof completion === "object") return completion.returned;
      // "A function must terminate with a return statement" (Language: Functions); what the runtime gives when one
      // does not is not documented, so no value is guessed.
      throw new NotSupported(
        `a function called at ${file ? `${file}:` : ""}${at.line}:${at.column} ended without a return statement, which ` +
          "Sentinel's documentation says every function must end with; what the runtime does then is not known here",
      );
    } finally {
      this.depth = Math.max(0, this.depth - 1);
    }
  }

  private callBuiltin(callee: BuiltinFunction, args: Value[], at: Position, file: string): Value {
    try {
      return callee.call(args, at);
    } catch (error) {
      throw withFile(error, file);
    }
  }
}

function bindNames(scope: Scope, names: [string] | [string, string], first: Value, second: Value, isList = true) {
  if (names.length === 2) {
    scope.variables.set(names[0], first);
    scope.variables.set(names[1], second);
  } else {
    scope.variables.set(names[0], isList ? second : first);
  }
}

function describeCallee(expression: Expression): string {
  if (expression.type === "ident") return expression.name;
  if (expression.type === "selector") return `${describeCallee(expression.target)}.${expression.name}`;
  return "the value";
}

/** A runtime error raised below, with the file it happened in. */
function withFile(error: unknown, file: string): unknown {
  if (!(error instanceof SentinelRuntimeError) || error.file) return error;
  return new (error instanceof PolicyErrorCalled ? PolicyErrorCalled : SentinelRuntimeError)(
    error.message,
    error.at,
    file,
  );
}
