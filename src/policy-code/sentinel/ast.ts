// The syntax tree of a Sentinel program, one node per production of the specification. No I/O.
import type { Position } from "./lexer";

export type BinaryOperator =
  | "or"
  | "xor"
  | "and"
  | "=="
  | "!="
  | "<"
  | "<="
  | ">"
  | ">="
  | "is"
  | "is not"
  | "matches"
  | "not matches"
  | "contains"
  | "not contains"
  | "in"
  | "not in"
  | "else"
  | "+"
  | "-"
  | "*"
  | "/"
  | "%";

/** `x is empty`, `x is not defined`: the tests newer Sentinel writes after `is`. */
export type TestOperator = "is empty" | "is not empty" | "is defined" | "is not defined";

export type QuantifierOperator = "all" | "any" | "filter" | "map";

export type Expression =
  | { type: "int"; value: bigint; at: Position }
  | { type: "float"; value: number; at: Position }
  | { type: "string"; value: string; at: Position }
  | { type: "ident"; name: string; at: Position }
  | { type: "list"; items: Expression[]; at: Position }
  | { type: "map"; entries: [Expression, Expression][]; at: Position }
  | { type: "func"; params: string[]; body: Statement[]; at: Position }
  | { type: "rule"; when?: Expression; body: Expression; at: Position }
  | { type: "selector"; target: Expression; name: string; at: Position }
  | { type: "index"; target: Expression; index: Expression; at: Position }
  | { type: "slice"; target: Expression; low?: Expression; high?: Expression; at: Position }
  | { type: "call"; callee: Expression; args: Expression[]; at: Position }
  | { type: "unary"; op: "-" | "+" | "!" | "not"; operand: Expression; at: Position }
  | { type: "binary"; op: BinaryOperator; left: Expression; right: Expression; at: Position }
  | { type: "test"; op: TestOperator; operand: Expression; at: Position }
  | {
      type: "quantifier";
      op: QuantifierOperator;
      collection: Expression;
      names: [string] | [string, string];
      body: Expression;
      at: Position;
    };

export type AssignOperator = "=" | "+=" | "-=" | "*=" | "/=" | "%=";

export interface CaseClause {
  /** The values of `when a, b:`; undefined for `else:`. */
  whens?: Expression[];
  body: Statement[];
  at: Position;
}

export type Statement =
  | { type: "import"; name: string; alias: string; at: Position }
  | { type: "param"; name: string; default?: Expression; at: Position }
  | { type: "assign"; target: Expression; op: AssignOperator; value: Expression; at: Position }
  | { type: "expression"; expression: Expression; at: Position }
  | { type: "if"; condition: Expression; then: Statement[]; else?: Statement[]; at: Position }
  | { type: "case"; subject?: Expression; clauses: CaseClause[]; at: Position }
  | { type: "for"; collection: Expression; names: [string] | [string, string]; body: Statement[]; at: Position }
  | { type: "break"; at: Position }
  | { type: "continue"; at: Position }
  | { type: "return"; value: Expression; at: Position }
  | { type: "function"; name: string; func: Extract<Expression, { type: "func" }>; at: Position };

/** A parsed file: a policy, a module or a mock. */
export interface Program {
  statements: Statement[];
  imports: { name: string; alias: string; at: Position }[];
  params: { name: string; default?: Expression; at: Position }[];
}
