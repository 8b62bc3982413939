// The lexical elements of the Sentinel language, as its specification defines them (Lexical Elements): comments,
// identifiers, keywords, operators and delimiters, integer, floating-point and string literals, and the semicolons
// a line's end inserts. No I/O.

/** A place in the source: 1-based line and column (columns count UTF-16 code units, as editors mostly do). */
export interface Position {
  line: number;
  column: number;
}

export type TokenKind = "ident" | "keyword" | "int" | "float" | "string" | "punct" | ";" | "eof";

export interface Token {
  kind: TokenKind;
  /** The token's text: a keyword or operator as written, an identifier's name, a literal's source text. */
  text: string;
  /** A string literal's value; an integer's or float's value. */
  value: string | bigint | number | undefined;
  at: Position;
  /** A `;` the end of a line inserted (not written). */
  implicit: boolean;
}

/** Every token of one shape, which keeps the parser's property reads fast. */
function token(kind: TokenKind, text: string, at: Position, value?: string | bigint | number, implicit = false): Token {
  return { kind, text, value, at, implicit };
}

/** A mistake in the source, where it is: the parser's and the lexer's errors alike. */
export class SentinelSyntaxError extends Error {
  constructor(
    readonly at: Position,
    readonly detail: string,
  ) {
    super(`${at.line}:${at.column}: ${detail}`);
    this.name = "SentinelSyntaxError";
  }
}

/** Reserved: never an identifier (a selector may still be one: `x.map`). `map` and `filter` are quantifiers. */
export const keywords = new Set([
  "all",
  "any",
  "as",
  "break",
  "case",
  "continue",
  "default",
  "else",
  "filter",
  "for",
  "func",
  "if",
  "import",
  "map",
  "param",
  "return",
  "rule",
  "when",
  // Operators spelled as words.
  "and",
  "contains",
  "in",
  "is",
  "matches",
  "not",
  "or",
  "xor",
]);

const punctuation = [
  "+=",
  "-=",
  "*=",
  "/=",
  "%=",
  "==",
  "!=",
  "<=",
  ">=",
  "+",
  "-",
  "*",
  "/",
  "%",
  "<",
  ">",
  "=",
  "!",
  "(",
  ")",
  "[",
  "]",
  "{",
  "}",
  ",",
  ".",
  ":",
  ";",
];

const asciiIdentifier = /[A-Za-z0-9_]*/y;
const twoCharacterPunctuation = new Set(punctuation.filter((text) => text.length === 2));
const oneCharacterPunctuation = new Set(punctuation.filter((text) => text.length === 1));

/** The tokens after which a line's end inserts a semicolon (Semicolons). */
function endsStatement(token: Token | undefined): boolean {
  if (!token) return false;
  switch (token.kind) {
    case "ident":
    case "int":
    case "float":
    case "string":
      return true;
    case "keyword":
      return token.text === "break" || token.text === "continue" || token.text === "return";
    case "punct":
      return token.text === ")" || token.text === "]" || token.text === "}";
    default:
      return false;
  }
}

const isDigit = (char: string) => char >= "0" && char <= "9";
// ASCII first: the Unicode classes are for the rare identifier in another script.
const isLetter = (char: string) =>
  (char >= "a" && char <= "z") ||
  (char >= "A" && char <= "Z") ||
  char === "_" ||
  (char > "\x7f" && /\p{L}/u.test(char));
const isIdentifierPart = (char: string) => isLetter(char) || isDigit(char) || (char > "\x7f" && /\p{Nd}/u.test(char));

/** The source's tokens, semicolons inserted, ending with `eof`. Throws {@link SentinelSyntaxError}. */
export function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let index = 0;
  let line = 1;
  let lineStart = 0;
  const here = (): Position => ({ line, column: index - lineStart + 1 });
  const newline = (at: Position) => {
    if (endsStatement(tokens[tokens.length - 1])) tokens.push(token(";", "\n", at, undefined, true));
  };
  while (index < source.length) {
    const char = source[index] as string;
    if (char === "\n") {
      newline(here());
      index++;
      line++;
      lineStart = index;
      continue;
    }
    if (char === " " || char === "\t" || char === "\r" || char === "\uFEFF") {
      index++;
      continue;
    }
    if (char === "#" || (char === "/" && source[index + 1] === "/")) {
      while (index < source.length && source[index] !== "\n") index++;
      continue;
    }
    if (char === "/" && source[index + 1] === "*") {
      const start = here();
      const end = source.indexOf("*/", index + 2);
      if (end < 0)
        throw new SentinelSyntaxError(start, "comment not terminated: expected */ before the end of the file");
      let crossed = false;
      for (let at = index; at < end; at++) {
        if (source[at] === "\n") {
          if (!crossed) newline({ line, column: at - lineStart + 1 });
          crossed = true;
          line++;
          lineStart = at + 1;
        }
      }
      index = end + 2;
      continue;
    }
    const at = here();
    if (isLetter(char)) {
      let end = (matchAt(asciiIdentifier, source, index) as RegExpExecArray)[0].length + index;
      while (end < source.length && isIdentifierPart(source[end] as string)) end++;
      const text = source.slice(index, end);
      // After a dot a reserved word is a selector (`x.map`, `v.default`): a name, also for a line's end.
      const afterDot = tokens[tokens.length - 1]?.text === "." && tokens[tokens.length - 1]?.kind === "punct";
      tokens.push(token(keywords.has(text) && !afterDot ? "keyword" : "ident", text, at));
      index = end;
      continue;
    }
    if (isDigit(char) || (char === "." && isDigit(source[index + 1] ?? ""))) {
      index = readNumber(source, index, at, tokens);
      continue;
    }
    if (char === '"') {
      const { end, value } = readString(source, index, at);
      tokens.push(token("string", source.slice(index, end), at, value));
      index = end;
      continue;
    }
    if (char === "`") {
      const end = source.indexOf("`", index + 1);
      if (end < 0)
        throw new SentinelSyntaxError(at, "raw string not terminated: expected ` before the end of the file");
      const text = source.slice(index, end + 1);
      for (let position = index; position < end; position++) {
        if (source[position] === "\n") {
          line++;
          lineStart = position + 1;
        }
      }
      tokens.push(token("string", text, at, text.slice(1, -1).replace(/\r/g, "")));
      index = end + 1;
      continue;
    }
    const two = source.slice(index, index + 2);
    const operator = twoCharacterPunctuation.has(two) ? two : oneCharacterPunctuation.has(char) ? char : undefined;
    if (!operator) {
      throw new SentinelSyntaxError(at, `unexpected character ${JSON.stringify(char)}: no token of Sentinel starts so`);
    }
    // A written ";" ends a statement as a line's end does (Semicolons): the parser sees one kind for both.
    tokens.push(token(operator === ";" ? ";" : "punct", operator, at));
    index += operator.length;
  }
  newline(here());
  tokens.push(token("eof", "", here()));
  return tokens;
}

const hexLiteral = /0[xX]([0-9A-Fa-f]*)/y;
const floatLiteral = /\d+\.\d*(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+|\.\d+(?:[eE][+-]?\d+)?/y;
const digitsLiteral = /\d+/y;

/** Matches `pattern` (sticky) at `index`, without copying the rest of the source. */
function matchAt(pattern: RegExp, source: string, index: number): RegExpExecArray | null {
  pattern.lastIndex = index;
  return pattern.exec(source);
}

function readNumber(source: string, start: number, at: Position, tokens: Token[]): number {
  const hex = matchAt(hexLiteral, source, start);
  if (hex) {
    if (!hex[1]) throw new SentinelSyntaxError(at, "hexadecimal literal has no digits: write e.g. 0x1F");
    tokens.push(token("int", hex[0], at, BigInt.asIntN(64, BigInt(hex[0]))));
    return checkNumberEnd(source, start + hex[0].length, at);
  }
  const float = matchAt(floatLiteral, source, start);
  if (float) {
    tokens.push(token("float", float[0], at, Number(float[0])));
    return checkNumberEnd(source, start + float[0].length, at);
  }
  const digits = (matchAt(digitsLiteral, source, start) as RegExpExecArray)[0];
  let value: bigint;
  if (digits.length > 1 && digits.startsWith("0")) {
    if (/[89]/.test(digits))
      throw new SentinelSyntaxError(at, `invalid octal literal ${digits}: digits 8 and 9 are no octal digits`);
    value = BigInt(`0o${digits.slice(1)}`);
  } else {
    value = BigInt(digits);
  }
  tokens.push(token("int", digits, at, BigInt.asIntN(64, value)));
  return checkNumberEnd(source, start + digits.length, at);
}

/** `12abc` is no number followed by a name: Go's scanner, which Sentinel's follows, reads it as one bad literal. */
function checkNumberEnd(source: string, end: number, at: Position): number {
  const next = source[end];
  if (next !== undefined && (isLetter(next) || isDigit(next))) {
    throw new SentinelSyntaxError(
      at,
      `invalid number literal: ${JSON.stringify(next)} cannot follow a number's digits`,
    );
  }
  return end;
}

const simpleEscapes: Record<string, string> = {
  a: "\u0007",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  v: "\v",
  "\\": "\\",
  '"': '"',
};

/** A double-quoted literal from `start`: where it ends and its value. Escapes as String Literals defines them. */
const plainStringBody = /[^"\\\n]*/y;

function readString(source: string, start: number, at: Position): { end: number; value: string } {
  // Most literals hold no escape: one slice.
  const plain = matchAt(plainStringBody, source, start + 1) as RegExpExecArray;
  const after = start + 1 + plain[0].length;
  if (source[after] === '"') return { end: after + 1, value: plain[0] };
  let value = "";
  let bytes: number[] = [];
  const flushBytes = () => {
    if (bytes.length > 0) value += Buffer.from(bytes).toString("utf8");
    bytes = [];
  };
  let index = start + 1;
  for (;;) {
    const char = source[index];
    if (char === undefined || char === "\n") {
      throw new SentinelSyntaxError(at, 'string literal not terminated: expected " before the end of the line');
    }
    if (char === '"') break;
    if (char !== "\\") {
      flushBytes();
      value += char;
      index++;
      continue;
    }
    const escaped = source[index + 1] ?? "";
    const escapeAt: Position = { line: at.line, column: at.column + (index - start) };
    const hexDigits = (count: number) => {
      const digits = source.slice(index + 2, index + 2 + count);
      if (digits.length !== count || !/^[0-9A-Fa-f]+$/.test(digits)) {
        throw new SentinelSyntaxError(
          escapeAt,
          `invalid escape \\${escaped}${digits}: expected ${count} hexadecimal digits`,
        );
      }
      return Number.parseInt(digits, 16);
    };
    if (escaped in simpleEscapes) {
      flushBytes();
      value += simpleEscapes[escaped];
      index += 2;
    } else if (escaped === "x") {
      bytes.push(hexDigits(2));
      index += 4;
    } else if (escaped === "u" || escaped === "U") {
      const count = escaped === "u" ? 4 : 8;
      const code = hexDigits(count);
      if (code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) {
        throw new SentinelSyntaxError(
          escapeAt,
          `invalid escape: \\${escaped}${source.slice(index + 2, index + 2 + count)} is no Unicode code point`,
        );
      }
      flushBytes();
      value += String.fromCodePoint(code);
      index += 2 + count;
    } else if (/[0-7]/.test(escaped)) {
      const digits = source.slice(index + 1, index + 4);
      if (!/^[0-7]{3}$/.test(digits) || Number.parseInt(digits, 8) > 255) {
        throw new SentinelSyntaxError(
          escapeAt,
          `invalid escape \\${digits}: expected three octal digits (at most \\377)`,
        );
      }
      bytes.push(Number.parseInt(digits, 8));
      index += 4;
    } else {
      throw new SentinelSyntaxError(
        escapeAt,
        `unknown escape sequence \\${escaped}: use \\\\ for a backslash (escapes: \\a \\b \\f \\n \\r \\t \\v \\\\ \\" \\x \\u \\U \\ooo)`,
      );
    }
  }
  flushBytes();
  return { end: index + 1, value };
}
