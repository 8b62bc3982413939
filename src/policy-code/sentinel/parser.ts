// A parser of Sentinel written from the language specification (developer.hashicorp.com/sentinel/docs/language/spec):
// statements, expressions with the specification's precedence, imports and parameters at the top. Each mistake is
// reported where it is, with what was expected there. No I/O.
import type {
  AssignOperator,
  BinaryOperator,
  CaseClause,
  Expression,
  Program,
  QuantifierOperator,
  Statement,
  TestOperator,
} from "./ast";
import { type Position, SentinelSyntaxError, type Token, type TokenKind, tokenize } from "./lexer";
import { describeToken, misspellingHint } from "./mistakes";

export { SentinelSyntaxError } from "./lexer";
export { describeToken } from "./mistakes";

/** Parses a whole file. Throws {@link SentinelSyntaxError} at the first mistake. */
export function parseSentinel(source: string): Program {
  return new Parser(tokenize(source)).program();
}

const assignOperators = new Set(["=", "+=", "-=", "*=", "/=", "%="]);
const quantifiers = new Set(["all", "any", "filter", "map"]);

/** Binary operators by precedence (Operator Precedence): higher binds tighter. */
const precedence: Record<string, number> = {
  or: 1,
  xor: 1,
  and: 2,
  "==": 3,
  "!=": 3,
  "<": 3,
  "<=": 3,
  ">": 3,
  ">=": 3,
  is: 3,
  matches: 3,
  contains: 3,
  in: 3,
  not: 3,
  else: 4,
  "+": 5,
  "-": 5,
  "*": 6,
  "/": 6,
  "%": 6,
};

interface Context {
  /** Inside a function's body: `return` is allowed. */
  inFunction: boolean;
  /** Inside a `for` (of the same function): `break` and `continue` are allowed. */
  inLoop: boolean;
}

class Parser {
  private position = 0;

  constructor(private readonly tokens: Token[]) {}

  private get token(): Token {
    return this.tokens[this.position] as Token;
  }

  private peek(offset = 1): Token {
    return this.tokens[Math.min(this.position + offset, this.tokens.length - 1)] as Token;
  }

  private next(): Token {
    const token = this.token;
    if (token.kind !== "eof") this.position++;
    return token;
  }

  /** A method, not `this.token.kind`, so that TypeScript does not narrow the token across `next()`. */
  private kindIs(kind: TokenKind): boolean {
    return this.token.kind === kind;
  }

  private is(text: string): boolean {
    const token = this.token;
    return (token.kind === "punct" || token.kind === "keyword") && token.text === text;
  }

  private fail(expected: string, token = this.token): never {
    throw new SentinelSyntaxError(token.at, `expected ${expected}, found ${describeToken(token)}`);
  }

  private expect(text: string, why = ""): Token {
    if (!this.is(text)) this.fail(`"${text}"${why}`);
    return this.next();
  }

  private identifier(what: string): string {
    if (this.token.kind !== "ident") {
      if (this.kindIs("keyword")) {
        throw new SentinelSyntaxError(
          this.token.at,
          `expected ${what}, found keyword "${this.token.text}", which is reserved and cannot name anything`,
        );
      }
      this.fail(what);
    }
    return this.next().text;
  }

  /** A `;` (written, or a line's end) is optional before a closing token. */
  private skipSemicolon(): void {
    if (this.kindIs(";")) this.next();
  }

  program(): Program {
    const statements: Statement[] = [];
    const imports: Program["imports"] = [];
    const params: Program["params"] = [];
    const context: Context = { inFunction: false, inLoop: false };
    let phase: "imports" | "params" | "body" = "imports";
    while (this.token.kind !== "eof") {
      if (this.kindIs(";")) {
        this.next();
        continue;
      }
      if (this.is("import")) {
        if (phase !== "imports") {
          throw new SentinelSyntaxError(this.token.at, "import must come before every other statement of the file");
        }
        const statement = this.importDeclaration(imports);
        statements.push(statement);
        imports.push(statement);
      } else if (this.is("param")) {
        if (phase === "body") {
          throw new SentinelSyntaxError(
            this.token.at,
            "param must come at the top of the file, after the imports and before every other statement",
          );
        }
        phase = "params";
        const statement = this.paramDeclaration();
        statements.push(statement);
        params.push(statement);
      } else {
        phase = "body";
        statements.push(this.statement(context));
      }
      this.endOfStatement();
    }
    return { statements, imports, params };
  }

  /** After a statement: a `;` or a line's end, or the `}` (end of file) that closes the enclosing block. */
  private endOfStatement(closers: string[] = ["}"]): void {
    if (this.kindIs(";")) {
      this.next();
      return;
    }
    if (this.kindIs("eof") || closers.some((closer) => this.is(closer))) return;
    const previous = this.peek(-1);
    const hint =
      previous.kind === "ident" ? misspellingHint({ type: "ident", name: previous.text, at: previous.at }) : "";
    this.fail(`the end of the statement (a new line or ";")${hint}`);
  }

  private importDeclaration(seen: Program["imports"]): Extract<Statement, { type: "import" }> & { alias: string } {
    const at = this.next().at;
    if (this.token.kind !== "string") this.fail('the import\'s name as a string, e.g. import "strings"');
    const name = this.next().value as string;
    let alias = name;
    if (this.is("as")) {
      this.next();
      alias = this.identifier("a name after as");
    }
    for (const earlier of seen) {
      if (earlier.name === name || earlier.alias === alias) {
        throw new SentinelSyntaxError(
          at,
          `import "${name}"${alias !== name ? ` as ${alias}` : ""} repeats the import at line ${earlier.at.line}: each import and each name may appear once`,
        );
      }
    }
    return { type: "import", name, alias, at };
  }

  private paramDeclaration(): Extract<Statement, { type: "param" }> {
    const at = this.next().at;
    const name = this.identifier("the parameter's name");
    if (!this.is("default")) return { type: "param", name, at };
    this.next();
    const value = this.expression();
    checkParamDefault(value);
    return { type: "param", name, default: value, at };
  }

  private block(context: Context, what: string): Statement[] {
    const open = this.expect("{", ` to open ${what}`);
    const statements: Statement[] = [];
    for (;;) {
      if (this.kindIs(";")) {
        this.next();
        continue;
      }
      if (this.is("}")) break;
      if (this.kindIs("eof")) this.fail(`"}" to close ${what} opened at ${open.at.line}:${open.at.column}`);
      statements.push(this.statement(context));
      this.endOfStatement();
    }
    this.next();
    return statements;
  }

  private statement(context: Context): Statement {
    const token = this.token;
    const start = token.at;
    if (token.kind === "keyword") {
      switch (token.text) {
        case "if":
          return this.ifStatement(context);
        case "case":
          return this.caseStatement(context);
        case "for": {
          this.next();
          const collection = this.expression();
          const names = this.asNames("for");
          const body = this.block({ ...context, inLoop: true }, "the for loop's body");
          return { type: "for", collection, names, body, at: token.at };
        }
        case "break":
        case "continue":
          if (!context.inLoop) {
            throw new SentinelSyntaxError(token.at, `${token.text} is allowed only inside a for loop`);
          }
          this.next();
          return { type: token.text, at: token.at };
        case "return": {
          if (!context.inFunction) throw new SentinelSyntaxError(token.at, "return is allowed only inside a function");
          this.next();
          return { type: "return", value: this.expression(), at: token.at };
        }
        case "func":
          if (this.peek().kind === "ident") {
            this.next();
            const name = this.next().text;
            const func = this.functionRest(token.at);
            return { type: "function", name, func, at: token.at };
          }
          break;
        case "import":
          throw new SentinelSyntaxError(token.at, "import is allowed only at the top of the file");
        case "param":
          throw new SentinelSyntaxError(token.at, "param is allowed only at the top of the file, after the imports");
        case "else":
          this.fail("a statement (else follows the } of an if on the same line)");
      }
    }
    const expression = this.expression();
    if (this.kindIs("punct") && assignOperators.has(this.token.text)) {
      const op = this.next().text as AssignOperator;
      if (expression.type !== "ident" && expression.type !== "index") {
        throw new SentinelSyntaxError(
          expression.at,
          expression.type === "selector"
            ? `cannot assign to the selector .${expression.name}: write the key as an index, e.g. x["${expression.name}"] = ...`
            : "expected a name or an index expression before the assignment",
        );
      }
      const value = this.expression();
      return { type: "assign", target: expression, op, value, at: expression.at };
    }
    if (expression.type !== "call") {
      throw new SentinelSyntaxError(
        this.kindIs("eof") || this.kindIs(";") || this.is("}") ? start : this.token.at,
        this.kindIs("eof") || this.kindIs(";") || this.is("}")
          ? "expected an assignment or a function call: an expression alone is no statement"
          : `expected "=" or the end of the statement${misspellingHint(expression)}, found ${describeToken(this.token)}`,
      );
    }
    return { type: "expression", expression, at: expression.at };
  }

  private ifStatement(context: Context): Statement {
    const at = this.next().at;
    const condition = this.expression();
    const then = this.block(context, "the if's body");
    if (!this.is("else")) return { type: "if", condition, then, at };
    this.next();
    const otherwise = this.is("if") ? [this.ifStatement(context)] : this.block(context, "the else's body");
    return { type: "if", condition, then, else: otherwise, at };
  }

  private caseStatement(context: Context): Statement {
    const at = this.next().at;
    const subject = this.is("{") ? undefined : this.expression();
    const open = this.expect("{", " to open the case's clauses");
    const clauses: CaseClause[] = [];
    let sawElse = false;
    for (;;) {
      if (this.kindIs(";")) {
        this.next();
        continue;
      }
      if (this.is("}")) break;
      const clauseAt = this.token.at;
      let whens: Expression[] | undefined;
      if (this.is("when")) {
        this.next();
        whens = [this.expression()];
        while (this.is(",")) {
          this.next();
          whens.push(this.expression());
        }
      } else if (this.is("else")) {
        if (sawElse) throw new SentinelSyntaxError(clauseAt, "a case may have one else clause only");
        sawElse = true;
        this.next();
      } else if (this.kindIs("eof")) {
        this.fail(`"}" to close the case opened at ${open.at.line}:${open.at.column}`);
      } else {
        this.fail('"when" or "else" to start a clause of the case');
      }
      this.expect(":", " after the clause's values");
      const body: Statement[] = [];
      for (;;) {
        if (this.kindIs(";")) {
          this.next();
          continue;
        }
        if (this.is("when") || this.is("else") || this.is("}") || this.kindIs("eof")) break;
        body.push(this.statement(context));
        this.endOfStatement(["}", "when", "else"]);
      }
      clauses.push({ ...(whens ? { whens } : {}), body, at: clauseAt });
    }
    this.next();
    return { type: "case", ...(subject ? { subject } : {}), clauses, at };
  }

  /** `as v` or `as k, v` of a for or a quantifier. */
  private asNames(what: string): [string] | [string, string] {
    this.expect("as", ` after the collection of the ${what}`);
    const first = this.identifier(`a name after as`);
    if (!this.is(",")) return [first];
    this.next();
    return [first, this.identifier("a second name after the comma")];
  }

  expression(minimum = 1): Expression {
    let left = this.unary();
    for (;;) {
      const token = this.token;
      if (token.kind !== "punct" && token.kind !== "keyword") return left;
      const level = precedence[token.text];
      if (level === undefined || level < minimum) return left;
      if (token.text === "is" && (this.peek().kind === "ident" || this.peek(2).kind === "ident")) {
        const test = this.emptinessOrDefinedness();
        if (test) {
          left = { type: "test", op: test, operand: left, at: token.at };
          continue;
        }
      }
      const op = this.binaryOperator();
      const right = this.expression(level + 1);
      left = { type: "binary", op, left, right, at: token.at };
    }
  }

  /** `is empty`, `is not defined` and the like; undefined (nothing consumed) for any other `is`. */
  private emptinessOrDefinedness(): TestOperator | undefined {
    const negated = this.peek().kind === "keyword" && this.peek().text === "not";
    const word = this.peek(negated ? 2 : 1);
    if (word.kind !== "ident" || (word.text !== "empty" && word.text !== "defined")) return undefined;
    const after = this.peek(negated ? 3 : 2);
    // `x is defined_value.y` or `x is empty(...)` compare with a value named so.
    if (after.kind === "punct" && (after.text === "." || after.text === "(" || after.text === "[")) return undefined;
    this.position += negated ? 3 : 2;
    return `is ${negated ? "not " : ""}${word.text}` as TestOperator;
  }

  private binaryOperator(): BinaryOperator {
    const token = this.next();
    if (token.text === "is" && this.is("not")) {
      this.next();
      return "is not";
    }
    if (token.text === "not") {
      if (this.is("in") || this.is("contains") || this.is("matches")) {
        return `not ${this.next().text}` as BinaryOperator;
      }
      this.fail('"in", "contains" or "matches" after not');
    }
    return token.text as BinaryOperator;
  }

  private unary(): Expression {
    const token = this.token;
    if (
      (token.kind === "punct" && ["-", "+", "!"].includes(token.text)) ||
      (token.kind === "keyword" && token.text === "not")
    ) {
      this.next();
      const operand = this.unary();
      return { type: "unary", op: token.text as "-" | "+" | "!" | "not", operand, at: token.at };
    }
    return this.primary();
  }

  private primary(): Expression {
    let expression = this.operand();
    for (;;) {
      const token = this.token;
      if (token.kind !== "punct") return expression;
      if (token.text === ".") {
        this.next();
        const name = this.token;
        // Selectors may be reserved words and operator words (Selectors), as in `x.map` or `tfplan.filter`.
        if (name.kind !== "ident" && name.kind !== "keyword") this.fail("a name after the dot");
        this.next();
        expression = { type: "selector", target: expression, name: name.text, at: name.at };
      } else if (token.text === "[") {
        expression = this.indexOrSlice(expression);
      } else if (token.text === "(") {
        this.next();
        const args: Expression[] = [];
        while (!this.is(")")) {
          args.push(this.expression());
          if (this.is(",")) this.next();
          else if (!this.is(")")) this.fail(`"," or ")" in the call's arguments`);
        }
        this.next();
        expression = { type: "call", callee: expression, args, at: token.at };
      } else {
        return expression;
      }
    }
  }

  private indexOrSlice(target: Expression): Expression {
    const open = this.next();
    const low = this.is(":") ? undefined : this.expression();
    if (this.is("]")) {
      this.next();
      if (!low) this.fail("an index or a slice between the brackets", open);
      return { type: "index", target, index: low, at: open.at };
    }
    this.expect(":", ' or "]" after the index');
    const high = this.is("]") ? undefined : this.expression();
    this.expect("]", " to close the slice");
    return {
      type: "slice",
      target,
      ...(low ? { low } : {}),
      ...(high ? { high } : {}),
      at: open.at,
    };
  }

  private operand(): Expression {
    const token = this.token;
    switch (token.kind) {
      case "int":
        this.next();
        return { type: "int", value: token.value as bigint, at: token.at };
      case "float":
        this.next();
        return { type: "float", value: token.value as number, at: token.at };
      case "string":
        this.next();
        return { type: "string", value: token.value as string, at: token.at };
      case "ident":
        this.next();
        return { type: "ident", name: token.text, at: token.at };
      case "punct":
        if (token.text === "(") {
          this.next();
          const inner = this.expression();
          this.expect(")", ` to close the "(" at ${token.at.line}:${token.at.column}`);
          return inner;
        }
        if (token.text === "[") return this.listLiteral();
        if (token.text === "{") return this.mapLiteral();
        break;
      case "keyword":
        if (token.text === "func") {
          this.next();
          return this.functionRest(token.at);
        }
        if (token.text === "rule") return this.ruleLiteral();
        if (quantifiers.has(token.text)) return this.quantifier();
        break;
    }
    this.fail("an expression");
  }

  private listLiteral(): Expression {
    const open = this.next();
    const items: Expression[] = [];
    while (!this.is("]")) {
      if (this.kindIs("eof")) this.fail(`"]" to close the list opened at ${open.at.line}:${open.at.column}`);
      items.push(this.expression());
      if (this.is(",")) this.next();
      else if (!this.is("]"))
        this.fail('"," or "]" in the list (a list spread over lines needs a comma at each line\'s end)');
    }
    this.next();
    return { type: "list", items, at: open.at };
  }

  private mapLiteral(): Expression {
    const open = this.next();
    const entries: [Expression, Expression][] = [];
    while (!this.is("}")) {
      if (this.kindIs("eof")) this.fail(`"}" to close the map opened at ${open.at.line}:${open.at.column}`);
      const key = this.expression();
      this.expect(":", " between the key and its value");
      entries.push([key, this.expression()]);
      if (this.is(",")) this.next();
      else if (!this.is("}"))
        this.fail('"," or "}" in the map (a map spread over lines needs a comma at each line\'s end)');
    }
    this.next();
    return { type: "map", entries, at: open.at };
  }

  private functionRest(at: Position): Extract<Expression, { type: "func" }> {
    this.expect("(", " to open the function's parameters");
    const params: string[] = [];
    while (!this.is(")")) {
      const name = this.identifier("a parameter's name");
      if (params.includes(name)) throw new SentinelSyntaxError(this.peek(-1).at, `parameter ${name} is named twice`);
      params.push(name);
      if (this.is(",")) this.next();
      else if (!this.is(")")) this.fail('"," or ")" in the function\'s parameters');
    }
    this.next();
    const body = this.block({ inFunction: true, inLoop: false }, "the function's body");
    return { type: "func", params, body, at };
  }

  private ruleLiteral(): Expression {
    const at = this.next().at;
    let when: Expression | undefined;
    if (this.is("when")) {
      this.next();
      when = this.expression();
    }
    const open = this.expect("{", " to open the rule's body");
    this.skipSemicolon();
    if (this.is("}")) this.fail("the rule's expression");
    const body = this.expression();
    this.skipSemicolon();
    if (!this.is("}")) {
      this.fail(`"}" to close the rule opened at ${open.at.line}:${open.at.column} (a rule holds one expression)`);
    }
    this.next();
    return { type: "rule", ...(when ? { when } : {}), body, at };
  }

  private quantifier(): Expression {
    const token = this.next();
    const op = token.text as QuantifierOperator;
    const collection = this.expression();
    const names = this.asNames(op);
    const open = this.expect("{", ` to open the ${op}'s body`);
    this.skipSemicolon();
    if (this.is("}")) this.fail(`the ${op}'s expression`);
    const body = this.expression();
    this.skipSemicolon();
    if (!this.is("}")) {
      this.fail(`"}" to close the ${op} opened at ${open.at.line}:${open.at.column} (its body holds one expression)`);
    }
    this.next();
    return { type: "quantifier", op, collection, names, body, at: token.at };
  }
}

/**
 * A parameter's default is a literal (Parameters): a string, a number (with a sign), true or false, or a list or map
 * of those. Also null, which real libraries write and the runtime takes.
 */
function checkParamDefault(value: Expression): void {
  switch (value.type) {
    case "int":
    case "float":
    case "string":
      return;
    case "ident":
      if (["true", "false", "null"].includes(value.name)) return;
      break;
    case "unary":
      if ((value.op === "-" || value.op === "+") && (value.operand.type === "int" || value.operand.type === "float")) {
        return;
      }
      break;
    case "list":
      for (const item of value.items) checkParamDefault(item);
      return;
    case "map":
      for (const [key, item] of value.entries) {
        checkParamDefault(key);
        checkParamDefault(item);
      }
      return;
  }
  throw new SentinelSyntaxError(
    value.at,
    "a parameter's default must be a literal: a string, a number, true, false, or a list or map of those",
  );
}
