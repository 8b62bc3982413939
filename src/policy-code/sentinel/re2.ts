// RE2, the syntax of Sentinel's `matches` (the runtime is Go: its regexp package), read here and written as a
// JavaScript expression that matches the same strings. What Go's parser refuses is refused here too, with what RE2
// lacks (look-around, back-references): the runtime errors on such a pattern, so no case may pass on it. What is RE2
// but cannot be written faithfully in JavaScript is NotSupported: the case is not run, never guessed. No I/O.
//
// The output always has the `u` flag (code points, as Go reads UTF-8, and strict syntax) and never `i`, `m` or `s`:
// each flag of RE2 is applied where it holds, because RE2 flags can change mid-group: `.` is written `[^\n]` (RE2's
// dot leaves out only \n, JavaScript's also \r, \u2028 and \u2029), `^`/`$` as anchors at text or line ends, and
// case-insensitive atoms inside `(?i:...)`. Greediness (`(?U)`) does not change whether a string matches.
import { NotSupported } from "./errors";

/** A pattern Go's regexp refuses: `matches` is a runtime error. */
export class Re2SyntaxError extends Error {}

interface Flags {
  i: boolean;
  m: boolean;
  s: boolean;
}

type Range = [number, number];

const maxCodePoint = 0x10ffff;
const digits: Range[] = [[0x30, 0x39]];
const wordCharacters: Range[] = [
  [0x30, 0x39],
  [0x41, 0x5a],
  [0x5f, 0x5f],
  [0x61, 0x7a],
];
/** Perl's classes as RE2 has them: ASCII only, and \s without \v. */
const perlClasses: Record<string, Range[]> = {
  d: digits,
  s: [
    [0x09, 0x0a],
    [0x0c, 0x0d],
    [0x20, 0x20],
  ],
  w: wordCharacters,
};
const posixClasses: Record<string, Range[]> = {
  alnum: [
    [0x30, 0x39],
    [0x41, 0x5a],
    [0x61, 0x7a],
  ],
  alpha: [
    [0x41, 0x5a],
    [0x61, 0x7a],
  ],
  ascii: [[0x00, 0x7f]],
  blank: [
    [0x09, 0x09],
    [0x20, 0x20],
  ],
  cntrl: [
    [0x00, 0x1f],
    [0x7f, 0x7f],
  ],
  digit: digits,
  graph: [[0x21, 0x7e]],
  lower: [[0x61, 0x7a]],
  print: [[0x20, 0x7e]],
  punct: [
    [0x21, 0x2f],
    [0x3a, 0x40],
    [0x5b, 0x60],
    [0x7b, 0x7e],
  ],
  space: [
    [0x09, 0x0d],
    [0x20, 0x20],
  ],
  upper: [[0x41, 0x5a]],
  word: wordCharacters,
  xdigit: [
    [0x30, 0x39],
    [0x41, 0x46],
    [0x61, 0x66],
  ],
};
const simpleEscapes: Record<string, number> = { a: 0x07, f: 0x0c, t: 0x09, n: 0x0a, r: 0x0d, v: 0x0b };
const generalCategories = new Set(
  "C Cc Cf Co Cs L Ll Lm Lo Lt Lu M Mc Me Mn N Nd Nl No P Pc Pd Pe Pf Pi Po Ps S Sc Sk Sm So Z Zl Zp Zs".split(" "),
);

const codePoint = (value: number) => `\\u{${value.toString(16)}}`;
const rangeText = ([low, high]: Range) => (low === high ? codePoint(low) : `${codePoint(low)}-${codePoint(high)}`);

/** Every code point the ranges (sorted, apart) leave out. */
function complement(ranges: Range[]): Range[] {
  const result: Range[] = [];
  let next = 0;
  for (const [low, high] of ranges) {
    if (low > next) result.push([next, low - 1]);
    next = high + 1;
  }
  if (next <= maxCodePoint) result.push([next, maxCodePoint]);
  return result;
}

const isAlphanumeric = (char: string) => /^[A-Za-z0-9]$/.test(char);
const isOctal = (char: string | undefined) => char !== undefined && char >= "0" && char <= "7";

/** The JavaScript source (for the `u` flag) that matches what the RE2 `pattern` matches. */
export function re2ToJavaScript(pattern: string): string {
  return new Translator(pattern).translate();
}

class Translator {
  private index = 0;
  private flags: Flags = { i: false, m: false, s: false };
  private readonly groups: { flags: Flags }[] = [];
  private readonly names = new Set<string>();
  private out = "";
  /** What the last piece written is, for the repetition operators' checks. */
  private last: "nothing" | "atom" | "repeat" = "nothing";

  constructor(private readonly pattern: string) {}

  translate(): string {
    const { pattern } = this;
    while (this.index < pattern.length) {
      const char = this.char();
      switch (char) {
        case "(":
          this.openGroup();
          break;
        case ")":
          this.closeGroup();
          break;
        case "|":
          this.index++;
          this.out += "|";
          this.last = "nothing";
          break;
        case "^":
          this.index++;
          this.atom(this.flags.m ? "(?<![^\\n])" : "^", false);
          break;
        case "$":
          this.index++;
          this.atom(this.flags.m ? "(?![^\\n])" : "$", false);
          break;
        case ".":
          this.index++;
          this.atom(this.flags.s ? `[${rangeText([0, maxCodePoint])}]` : "[^\\n]", false);
          break;
        case "[":
          this.atom(this.characterClass(), true);
          break;
        case "*":
        case "+":
        case "?":
          this.index++;
          this.repeat(char);
          break;
        case "{": {
          const repeat = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(this.index));
          if (!repeat) {
            this.index++;
            this.atom(codePoint(0x7b), true);
            break;
          }
          this.index += repeat[0].length;
          const min = Number(repeat[1]);
          const max = repeat[2] === undefined ? min : repeat[3] === "" ? undefined : Number(repeat[3]);
          if (min > 1000 || (max !== undefined && (max > 1000 || max < min))) {
            throw new Re2SyntaxError(`invalid repeat count ${repeat[0]} (RE2 takes at most 1000, and min <= max)`);
          }
          this.repeat(repeat[0]);
          break;
        }
        case "\\":
          this.escape();
          break;
        default:
          this.index += char.length;
          this.atom(this.literal(char), true);
      }
    }
    if (this.groups.length > 0) throw new Re2SyntaxError("missing closing )");
    return this.out;
  }

  /** The code point at the index, whole. */
  private char(): string {
    return String.fromCodePoint(this.pattern.codePointAt(this.index) as number);
  }

  private atom(text: string, folds: boolean): void {
    // Anchors are never folded: RE2's \b and line ends know no case.
    this.out += folds && this.flags.i ? `(?i:${text})` : `(?:${text})`;
    this.last = "atom";
  }

  private literal(char: string): string {
    const value = char.codePointAt(0) as number;
    return value < 0x80 && !isAlphanumeric(char) ? codePoint(value) : char;
  }

  private repeat(operator: string): void {
    if (this.last === "nothing") throw new Re2SyntaxError(`missing argument to repetition operator: \`${operator}\``);
    if (this.last === "repeat") throw new Re2SyntaxError(`invalid nested repetition operator: \`${operator}\``);
    // A lazy operator (x*?, or x* under (?U)) matches the same strings: only which part is matched differs.
    if (this.pattern[this.index] === "?") this.index++;
    this.out += operator;
    this.last = "repeat";
  }

  private openGroup(): void {
    const rest = this.pattern.slice(this.index);
    const saved = { ...this.flags };
    const lookAround = /^\(\?<?[=!]/.exec(rest)?.[0];
    if (lookAround?.startsWith("(?<")) {
      throw new Re2SyntaxError(
        `RE2 has no look-behind (${lookAround}): match what comes before as part of the pattern`,
      );
    }
    if (lookAround) {
      throw new Re2SyntaxError(
        `RE2 has no look-ahead (${lookAround}): test the string with a second matches, or with not matches`,
      );
    }
    const named = /^\(\?P?<([^>]*)>/.exec(rest);
    if (named) {
      const name = named[1] as string;
      if (!/^[A-Za-z0-9_]+$/.test(name)) throw new Re2SyntaxError(`invalid named capture: \`${named[0]}\``);
      if (this.names.has(name)) throw new Re2SyntaxError(`duplicate capture group name: \`${named[0]}\``);
      this.names.add(name);
    }
    if (named || !rest.startsWith("(?")) {
      // Names are not written: matches needs none, and Go's names are not all JavaScript's.
      this.index += named ? named[0].length : 1;
      this.pushGroup(saved, "(");
      return;
    }
    const flagged = /^\(\?([imsU]*)(?:-([imsU]*))?([:)])/.exec(rest);
    const noFlag = flagged?.[1] === "" && flagged[2] === undefined && flagged[3] === ")";
    if (!flagged || flagged[2] === "" || noFlag) {
      const shown = /^\(\?.?/.exec(rest)?.[0] ?? "(?";
      throw new Re2SyntaxError(`invalid or unsupported Perl syntax: \`${shown}\``);
    }
    this.index += flagged[0].length;
    for (const flag of flagged[1] as string) if (flag !== "U") this.flags[flag as keyof Flags] = true;
    for (const flag of flagged[2] ?? "") if (flag !== "U") this.flags[flag as keyof Flags] = false;
    // (?flags) sets them until the enclosing group ends: nothing is written, the atoms after carry them.
    if (flagged[3] === ":") this.pushGroup(saved, "(?:");
  }

  /** Opens a group; `saved`, the flags outside it, come back when it closes. */
  private pushGroup(saved: Flags, text: string): void {
    this.groups.push({ flags: saved });
    this.out += text;
    this.last = "nothing";
  }

  private closeGroup(): void {
    const group = this.groups.pop();
    if (!group) throw new Re2SyntaxError("unexpected ): no group is open");
    this.index++;
    this.flags = group.flags;
    this.out += ")";
    this.last = "atom";
  }

  /** An escape outside a class: an anchor, a class, a quoted run, or one character. */
  private escape(): void {
    const next = this.pattern[this.index + 1];
    switch (next) {
      case "A":
        this.index += 2;
        this.atom("^", false);
        return;
      case "z":
        this.index += 2;
        this.atom("$", false);
        return;
      case "b":
      case "B":
        this.index += 2;
        this.atom(`\\${next}`, false);
        return;
      case "C":
        throw new NotSupported(`regular expression ${JSON.stringify(this.pattern)}: \\C (any byte) is not translated`);
      case "Q": {
        const end = this.pattern.indexOf("\\E", this.index + 2);
        const quoted = this.pattern.slice(this.index + 2, end < 0 ? undefined : end);
        this.index = end < 0 ? this.pattern.length : end + 2;
        for (const char of quoted) this.atom(this.literal(char), true);
        return;
      }
    }
    const ranges = this.classEscape();
    if (ranges !== undefined) {
      this.atom(`[${ranges}]`, true);
      return;
    }
    this.atom(codePoint(this.characterEscape()), true);
  }

  /** \d \s \w (and their negations), \pN, \p{Name}, \PN, \P{^Name}: the class's contents, or undefined. */
  private classEscape(): string | undefined {
    const next = this.pattern[this.index + 1];
    if (next === undefined) return undefined;
    const perl = perlClasses[next.toLowerCase()];
    if (perl) {
      this.index += 2;
      return (next === next.toLowerCase() ? perl : complement(perl)).map(rangeText).join("");
    }
    if (next !== "p" && next !== "P") return undefined;
    const unicode = /^\\[pP](?:\{(\^?)([A-Za-z_]+)\}|([A-Za-z]))/.exec(this.pattern.slice(this.index));
    if (!unicode) throw new Re2SyntaxError(`invalid character class range: \`${this.pattern.slice(this.index)}\``);
    this.index += unicode[0].length;
    const name = (unicode[2] ?? unicode[3]) as string;
    const negated = (next === "P") !== (unicode[1] === "^");
    if (name === "Any") return negated ? "" : rangeText([0, maxCodePoint]);
    const property = generalCategories.has(name) ? name : `Script=${name}`;
    try {
      new RegExp(`\\p{${property}}`, "u");
    } catch {
      throw new NotSupported(
        `regular expression ${JSON.stringify(this.pattern)}: the Unicode class ${name} is not known here`,
      );
    }
    return `\\${negated ? "P" : "p"}{${property}}`;
  }

  /** One character's escape (`\n`, `\x41`, `\x{1F600}`, `\101`, `\.`), as its code point. */
  private characterEscape(): number {
    const start = this.index;
    const next = this.pattern[start + 1];
    if (next === undefined) throw new Re2SyntaxError("trailing backslash at end of expression");
    this.index += 2;
    if (next in simpleEscapes) return simpleEscapes[next] as number;
    if (next >= "1" && next <= "9" && !isOctal(this.pattern[this.index])) {
      throw new Re2SyntaxError(
        `RE2 has no back-references (\\${next}): it matches without remembering what a group matched`,
      );
    }
    if (isOctal(next)) {
      let value = Number(next);
      for (let count = 1; count < 3 && isOctal(this.pattern[this.index]); count++) {
        value = value * 8 + Number(this.pattern[this.index++]);
      }
      return value;
    }
    if (next === "x") {
      const hex = /^\{([0-9A-Fa-f]+)\}|^[0-9A-Fa-f]{2}/.exec(this.pattern.slice(this.index));
      const value = hex ? Number.parseInt(hex[1] ?? hex[0], 16) : Number.NaN;
      if (!hex || value > maxCodePoint) {
        throw new Re2SyntaxError(`invalid escape sequence: \`${this.pattern.slice(start, start + 4)}\``);
      }
      this.index += hex[0].length;
      return value;
    }
    if (next.charCodeAt(0) < 0x80 && !isAlphanumeric(next)) return next.charCodeAt(0);
    throw new Re2SyntaxError(`invalid escape sequence: \`\\${next}\``);
  }

  /** `[...]`, `[^...]`: RE2's class as JavaScript's, each member written as code points. */
  private characterClass(): string {
    const start = this.index;
    this.index++;
    let negated = false;
    if (this.pattern[this.index] === "^") {
      negated = true;
      this.index++;
    }
    const members: string[] = [];
    let first = true;
    for (;;) {
      if (this.index >= this.pattern.length) {
        throw new Re2SyntaxError(`missing closing ]: \`${this.pattern.slice(start)}\``);
      }
      if (this.pattern[this.index] === "]" && !first) break;
      first = false;
      // As Go: from [: to the first :] is a class's name, which must be one of POSIX's.
      const posix = /^\[:(\^?)(.*?):\]/s.exec(this.pattern.slice(this.index));
      if (posix) {
        const ranges = Object.hasOwn(posixClasses, posix[2] as string) ? posixClasses[posix[2] as string] : undefined;
        if (!ranges) throw new Re2SyntaxError(`invalid character class range: \`${posix[0]}\``);
        this.index += posix[0].length;
        members.push((posix[1] ? complement(ranges) : ranges).map(rangeText).join(""));
        continue;
      }
      if (this.pattern[this.index] === "\\") {
        const ranges = this.classEscape();
        if (ranges !== undefined) {
          members.push(ranges);
          continue;
        }
      }
      const low = this.classCharacter();
      let high = low;
      if (
        this.pattern[this.index] === "-" &&
        this.pattern[this.index + 1] !== "]" &&
        this.index + 1 < this.pattern.length
      ) {
        this.index++;
        high = this.classCharacter();
        if (high < low) {
          throw new Re2SyntaxError(`invalid character class range: \`${this.pattern.slice(start, this.index)}\``);
        }
      }
      members.push(rangeText([low, high]));
    }
    this.index++;
    return `[${negated ? "^" : ""}${members.join("")}]`;
  }

  private classCharacter(): number {
    if (this.pattern[this.index] === "\\") return this.characterEscape();
    const char = this.char();
    this.index += char.length;
    return char.codePointAt(0) as number;
  }
}
