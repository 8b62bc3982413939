// The operators of Sentinel on values (Arithmetic, Comparison, Set and Matches Operators): what each gives for each
// kind of operand, undefined where the specification says so, a runtime error where it says "error". The logical
// operators and `else` short-circuit, so the evaluator does them itself. No I/O.
import type { BinaryOperator } from "./ast";
import { NotSupported, SentinelRuntimeError } from "./errors";
import type { Position } from "./lexer";
import { Re2SyntaxError, re2ToJavaScript } from "./re2";
import {
  equal,
  int64,
  isMap,
  isNumber,
  SentinelMap,
  show,
  typeName,
  Undefined,
  type UndefinedValue,
  type Value,
} from "./values";

export function not(value: boolean | UndefinedValue): boolean | UndefinedValue {
  return value === Undefined ? Undefined : !value;
}

/** Every binary operator but `and`, `or`, `xor` and `else`. */
export function applyBinary(op: BinaryOperator, left: Value, right: Value, at: Position): Value {
  switch (op) {
    case "==":
    case "is":
      return equal(left, right);
    case "!=":
    case "is not":
      return not(equal(left, right));
    case "<":
    case "<=":
    case ">":
    case ">=":
      return order(op, left, right);
    case "contains":
      return contains(left, right, at);
    case "not contains":
      return not(contains(left, right, at));
    case "in":
      return contains(right, left, at);
    case "not in":
      return not(contains(right, left, at));
    case "matches":
      return matches(left, right, at);
    case "not matches":
      return not(matches(left, right, at));
    case "+":
    case "-":
    case "*":
    case "/":
    case "%":
      return arithmetic(op, left, right, at);
    default:
      throw new SentinelRuntimeError(`operator ${op} is not applied here`, at);
  }
}

function order(op: "<" | "<=" | ">" | ">=", left: Value, right: Value): boolean | UndefinedValue {
  let comparison: number;
  if (isNumber(left) && isNumber(right)) {
    if (typeof left === "bigint" && typeof right === "bigint") comparison = left < right ? -1 : left > right ? 1 : 0;
    else {
      const [a, b] = [Number(left), Number(right)];
      if (Number.isNaN(a) || Number.isNaN(b)) return false;
      comparison = a < b ? -1 : a > b ? 1 : 0;
    }
  } else if (typeof left === "string" && typeof right === "string") {
    const [a, b] = [Buffer.from(left), Buffer.from(right)];
    comparison = Buffer.compare(a, b);
  } else {
    return Undefined;
  }
  switch (op) {
    case "<":
      return comparison < 0;
    case "<=":
      return comparison <= 0;
    case ">":
      return comparison > 0;
    case ">=":
      return comparison >= 0;
  }
}

/** Whether the collection holds the value: an element of a list, a key of a map, a substring of a string. */
export function contains(collection: Value, item: Value, at: Position): boolean | UndefinedValue {
  if (collection === Undefined || item === Undefined) return Undefined;
  if (Array.isArray(collection)) return collection.some((element) => equal(element, item) === true);
  if (isMap(collection)) return collection.has(item);
  if (typeof collection === "string") {
    if (typeof item !== "string") return Undefined;
    return collection.includes(item);
  }
  throw new SentinelRuntimeError(
    `contains and in need a list, a map or a string as the collection, not ${typeName(collection)}`,
    at,
  );
}

const regexCache = new Map<string, RegExp>();

/**
 * An RE2 expression (the syntax `matches` takes) as a JavaScript one that matches the same strings. One RE2 refuses
 * is the policy's runtime error, as it is the runtime's; one not translated here is NotSupported (see ./re2.ts).
 */
export function regexOf(pattern: string, at?: Position): RegExp {
  const cached = regexCache.get(pattern);
  if (cached) return cached;
  let source: string;
  try {
    source = re2ToJavaScript(pattern);
  } catch (error) {
    if (!(error instanceof Re2SyntaxError)) throw error;
    throw new SentinelRuntimeError(
      `regular expression ${JSON.stringify(pattern)} is not RE2, the syntax of matches (the runtime's Go regexp ` +
        `refuses it): ${error.message}`,
      at,
    );
  }
  let regex: RegExp;
  try {
    regex = new RegExp(source, "u");
  } catch (error) {
    throw new NotSupported(
      `regular expression ${JSON.stringify(pattern)} cannot be translated here: ${(error as Error).message}`,
    );
  }
  if (regexCache.size > 10_000) regexCache.clear();
  regexCache.set(pattern, regex);
  return regex;
}

function matches(left: Value, right: Value, at: Position): boolean | UndefinedValue {
  if (left === Undefined || right === Undefined) return Undefined;
  if (typeof left !== "string" || typeof right !== "string") {
    throw new SentinelRuntimeError(`matches needs two strings, not ${typeName(left)} matches ${typeName(right)}`, at);
  }
  return regexOf(right, at).test(left);
}

function arithmetic(op: "+" | "-" | "*" | "/" | "%", left: Value, right: Value, at: Position): Value {
  if (left === Undefined || right === Undefined) return Undefined;
  if (typeof left === "bigint" && typeof right === "bigint") {
    switch (op) {
      case "+":
        return int64(left + right);
      case "-":
        return int64(left - right);
      case "*":
        return int64(left * right);
      case "/":
        if (right === 0n) throw new SentinelRuntimeError("integer division by zero", at);
        return int64(left / right);
      case "%":
        if (right === 0n) throw new SentinelRuntimeError("integer division by zero", at);
        return left % right;
    }
  }
  if (isNumber(left) && isNumber(right)) {
    const [a, b] = [Number(left), Number(right)];
    switch (op) {
      case "+":
        return a + b;
      case "-":
        return a - b;
      case "*":
        return a * b;
      case "/":
        return a / b;
      case "%":
        return a % b;
    }
  }
  if (op === "+" && typeof left === "string" && typeof right === "string") return left + right;
  if (op === "+" && Array.isArray(left) && Array.isArray(right)) return [...left, ...right];
  throw new SentinelRuntimeError(
    `${typeName(left)} ${op} ${typeName(right)} is not permitted (${show(left, true).slice(0, 40)} ${op} ${show(right, true).slice(0, 40)})`,
    at,
  );
}

/** `-x`, `+x`, `!x`, `not x`. A logical not of a non-boolean is undefined (Boolean Expressions). */
export function applyUnary(op: "-" | "+" | "!" | "not", operand: Value, at: Position): Value {
  if (operand === Undefined) return Undefined;
  if (op === "!" || op === "not") return typeof operand === "boolean" ? !operand : Undefined;
  if (typeof operand === "bigint") return op === "-" ? int64(-operand) : operand;
  if (typeof operand === "number") return op === "-" ? -operand : operand;
  throw new SentinelRuntimeError(`unary ${op} needs a number, not ${typeName(operand)}`, at);
}

/** `x is empty` and the like. */
export function applyTest(op: "is empty" | "is not empty" | "is defined" | "is not defined", value: Value): Value {
  if (op === "is defined") return value !== Undefined;
  if (op === "is not defined") return value === Undefined;
  let empty: boolean | UndefinedValue;
  if (Array.isArray(value) || typeof value === "string") empty = value.length === 0;
  else if (value instanceof SentinelMap) empty = value.size === 0;
  else empty = Undefined;
  return op === "is empty" ? empty : not(empty);
}

/** The truth of a boolean expression: anything but a boolean is undefined (Boolean Expressions). */
export function truth(value: Value): boolean | UndefinedValue {
  return typeof value === "boolean" ? value : Undefined;
}
