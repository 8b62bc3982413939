// A small evaluator of HCL expressions, for the values a policy check must know (a Terraform policy block's
// `enforcement_level`, its `operations`): literals, `input.<name>` and `local.<name>` references, the string
// functions `lower`, `upper`, `trimspace` and `coalesce` (with or without `core::`), `==`, `!=`, `!`, `&&`, `||`,
// conditionals, lists and templates. Anything else cannot be evaluated, and says what; the guard then counts the
// value as one it cannot compare. No I/O.

export type HclValue = string | number | boolean | null | HclValue[];

export type Evaluation = { value: HclValue } | { cannot: string };

/** What references resolve to: an input's value (or why it has none here), a local's expression as hcl2json gives it. */
export interface EvaluationScope {
  input(name: string): Evaluation;
  local(name: string): Evaluation;
}

/**
 * Evaluates an attribute as hcl2json gives it: a literal (string, number, boolean, list), or a string holding
 * `${...}` for an expression or a template.
 */
export function evaluateAttribute(value: unknown, scope: EvaluationScope): Evaluation {
  if (value === null || typeof value === "number" || typeof value === "boolean") return { value };
  if (Array.isArray(value)) {
    const items: HclValue[] = [];
    for (const item of value) {
      const evaluated = evaluateAttribute(item, scope);
      if ("cannot" in evaluated) return evaluated;
      items.push(evaluated.value);
    }
    return { value: items };
  }
  if (typeof value !== "string") return { cannot: JSON.stringify(value) };
  const whole = /^\$\{([\s\S]*)\}$/.exec(value);
  if (whole && balancedInterpolation(whole[1] as string)) return evaluateExpression(whole[1] as string, scope);
  return evaluateTemplate(value, scope);
}

/** Whether `${` + text + `}` is one interpolation, not `${a} and ${b}`. */
function balancedInterpolation(text: string): boolean {
  let depth = 0;
  let quoted = false;
  for (let index = 0; index < text.length; index++) {
    const char = text[index];
    if (quoted) {
      if (char === "\\") index++;
      else if (char === '"') quoted = false;
      continue;
    }
    if (char === '"') quoted = true;
    else if (char === "{") depth++;
    else if (char === "}" && --depth < 0) return false;
  }
  return depth === 0;
}

function evaluateTemplate(text: string, scope: EvaluationScope): Evaluation {
  let result = "";
  let index = 0;
  while (index < text.length) {
    if (text.startsWith("$${", index)) {
      result += "${";
      index += 3;
      continue;
    }
    if (text.startsWith("${", index)) {
      const end = interpolationEnd(text, index + 2);
      if (end < 0) return { cannot: text };
      const evaluated = evaluateExpression(text.slice(index + 2, end), scope);
      if ("cannot" in evaluated) return evaluated;
      if (typeof evaluated.value !== "string" && typeof evaluated.value !== "number") return { cannot: text };
      result += String(evaluated.value);
      index = end + 1;
      continue;
    }
    if (text.startsWith("%{", index)) return { cannot: text };
    result += text[index];
    index++;
  }
  return { value: result };
}

function interpolationEnd(text: string, from: number): number {
  let depth = 0;
  let quoted = false;
  for (let index = from; index < text.length; index++) {
    const char = text[index];
    if (quoted) {
      if (char === "\\") index++;
      else if (char === '"') quoted = false;
    } else if (char === '"') quoted = true;
    else if (char === "{") depth++;
    else if (char === "}") {
      if (depth === 0) return index;
      depth--;
    }
  }
  return -1;
}

type Token =
  | { type: "string"; value: string }
  | { type: "number"; value: number }
  | { type: "name"; value: string }
  | { type: "punctuation"; value: string };

function tokenize(text: string): Token[] | undefined {
  const tokens: Token[] = [];
  let index = 0;
  while (index < text.length) {
    const rest = text.slice(index);
    const space = /^\s+/.exec(rest);
    if (space) {
      index += space[0].length;
      continue;
    }
    if (rest[0] === '"') {
      let value = "";
      let at = 1;
      for (; at < rest.length && rest[at] !== '"'; at++) {
        if (rest[at] === "\\") {
          const escaped = rest[++at];
          value += escaped === "n" ? "\n" : escaped === "t" ? "\t" : (escaped ?? "");
        } else if (rest.startsWith("${", at))
          return undefined; // A template inside an expression.
        else value += rest[at];
      }
      if (at >= rest.length) return undefined;
      tokens.push({ type: "string", value });
      index += at + 1;
      continue;
    }
    const number = /^\d+(\.\d+)?/.exec(rest);
    if (number) {
      tokens.push({ type: "number", value: Number(number[0]) });
      index += number[0].length;
      continue;
    }
    const name = /^[A-Za-z_][\w-]*(::[A-Za-z_][\w-]*)*/.exec(rest);
    if (name) {
      tokens.push({ type: "name", value: name[0] });
      index += name[0].length;
      continue;
    }
    const punctuation = /^(==|!=|&&|\|\||[()?:,![\].])/.exec(rest);
    if (!punctuation) return undefined;
    tokens.push({ type: "punctuation", value: punctuation[0] });
    index += punctuation[0].length;
  }
  return tokens;
}

const functions: Record<string, (args: HclValue[]) => HclValue | undefined> = {
  lower: ([text]) => (typeof text === "string" ? text.toLowerCase() : undefined),
  upper: ([text]) => (typeof text === "string" ? text.toUpperCase() : undefined),
  trimspace: ([text]) => (typeof text === "string" ? text.trim() : undefined),
  coalesce: (values) => values.find((value) => value !== null && value !== ""),
};

class CannotEvaluate extends Error {}

/** Evaluates the text of an expression (what stands between `${` and `}`). */
export function evaluateExpression(text: string, scope: EvaluationScope): Evaluation {
  const tokens = tokenize(text);
  const cannot = { cannot: text.trim() };
  if (!tokens || tokens.length === 0) return cannot;
  let position = 0;
  const peek = () => tokens[position];
  const take = (value?: string): Token => {
    const token = tokens[position];
    if (!token || (value !== undefined && token.value !== value)) throw new CannotEvaluate();
    position++;
    return token;
  };
  const isPunctuation = (value: string) => {
    const token = peek();
    return token?.type === "punctuation" && token.value === value;
  };
  const resolved = (evaluation: Evaluation): HclValue => {
    if ("cannot" in evaluation) {
      cannot.cannot = evaluation.cannot;
      throw new CannotEvaluate();
    }
    return evaluation.value;
  };

  const expression = (): HclValue => {
    const condition = or();
    if (!isPunctuation("?")) return condition;
    take("?");
    const whenTrue = expression();
    take(":");
    const whenFalse = expression();
    if (typeof condition !== "boolean") throw new CannotEvaluate();
    return condition ? whenTrue : whenFalse;
  };
  const or = (): HclValue => {
    let left = and();
    while (isPunctuation("||")) {
      take();
      const right = and();
      if (typeof left !== "boolean" || typeof right !== "boolean") throw new CannotEvaluate();
      left = left || right;
    }
    return left;
  };
  const and = (): HclValue => {
    let left = equality();
    while (isPunctuation("&&")) {
      take();
      const right = equality();
      if (typeof left !== "boolean" || typeof right !== "boolean") throw new CannotEvaluate();
      left = left && right;
    }
    return left;
  };
  const equality = (): HclValue => {
    let left = unary();
    while (isPunctuation("==") || isPunctuation("!=")) {
      const operator = take().value;
      const right = unary();
      const same = JSON.stringify(left) === JSON.stringify(right);
      left = operator === "==" ? same : !same;
    }
    return left;
  };
  const unary = (): HclValue => {
    if (isPunctuation("!")) {
      take();
      const value = unary();
      if (typeof value !== "boolean") throw new CannotEvaluate();
      return !value;
    }
    return primary();
  };
  const primary = (): HclValue => {
    const token = take();
    if (token.type === "string" || token.type === "number") return token.value;
    if (token.type === "punctuation") {
      if (token.value === "(") {
        const value = expression();
        take(")");
        return value;
      }
      if (token.value === "[") {
        const items: HclValue[] = [];
        while (!isPunctuation("]")) {
          items.push(expression());
          if (!isPunctuation("]")) take(",");
        }
        take("]");
        return items;
      }
      throw new CannotEvaluate();
    }
    const name = token.value;
    if (name === "true" || name === "false") return name === "true";
    if (name === "null") return null;
    if (isPunctuation("(")) {
      take("(");
      const args: HclValue[] = [];
      while (!isPunctuation(")")) {
        args.push(expression());
        if (!isPunctuation(")")) take(",");
      }
      take(")");
      const fn = functions[name.replace(/^core::/, "")];
      const value = fn?.(args);
      if (value === undefined) throw new CannotEvaluate();
      return value;
    }
    if ((name === "input" || name === "local") && isPunctuation(".")) {
      take(".");
      const field = take();
      if (field.type !== "name") throw new CannotEvaluate();
      if (isPunctuation(".") || isPunctuation("[")) throw new CannotEvaluate();
      return resolved(name === "input" ? scope.input(field.value) : scope.local(field.value));
    }
    throw new CannotEvaluate();
  };

  try {
    const value = expression();
    if (position !== tokens.length) return { cannot: text.trim() };
    return { value };
  } catch (error) {
    if (error instanceof CannotEvaluate) return cannot;
    throw error;
  }
}
