// How the parser's mistakes read: a token as a message names it, and the keyword a name is likely a misspelling of.
// No I/O.
import type { Expression } from "./ast";
import type { Token } from "./lexer";

/** How a token reads in a message: `"}"`, `identifier foo`, `end of line`. */
export function describeToken(token: Token): string {
  switch (token.kind) {
    case "eof":
      return "end of file";
    case ";":
      return token.implicit ? "end of line" : '";"';
    case "ident":
      return `identifier ${token.text}`;
    case "string":
      return `string ${token.text.length > 24 ? `${token.text.slice(0, 20)}..."` : token.text}`;
    case "int":
    case "float":
      return `number ${token.text}`;
    default:
      return `"${token.text}"`;
  }
}

/** ` after rul (did you mean rule?)` where the expression is a name one letter off a keyword; else "". */
export function misspellingHint(expression: Expression): string {
  const meant = expression.type === "ident" ? misspelledKeyword(expression.name) : undefined;
  return meant && expression.type === "ident" ? ` after ${expression.name} (did you mean ${meant}?)` : "";
}

/** The keyword a name is one letter off (`rul`, `fucn`, `retrun`): a likely misspelling, for the message. */
function misspelledKeyword(name: string): string | undefined {
  const candidates = [
    "rule",
    "func",
    "return",
    "import",
    "param",
    "filter",
    "for",
    "else",
    "when",
    "case",
    "all",
    "any",
  ];
  return (
    candidates.find((keyword) => keyword !== name && editDistance(keyword, name) === 1) ??
    candidates.find((keyword) => keyword.length > 3 && sameLetters(keyword, name))
  );
}

function sameLetters(a: string, b: string): boolean {
  return a.length === b.length && a !== b && [...a].sort().join("") === [...b].sort().join("");
}

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    let previous = row[0] as number;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const current = row[j] as number;
      row[j] = Math.min((row[j] as number) + 1, (row[j - 1] as number) + 1, previous + (a[i - 1] === b[j - 1] ? 0 : 1));
      previous = current;
    }
  }
  return row[b.length] as number;
}
