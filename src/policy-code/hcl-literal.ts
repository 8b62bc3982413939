// A reader of HCL files that hold only literal data (blocks, attributes, strings, numbers, booleans, null, lists and
// objects), giving what ./hcl.ts's parseBlocks gives from HashiCorp's own parser: Sentinel test cases are such files,
// and a run of 200 of them spent most of its time starting HashiCorp's parser (WebAssembly) for each. Anything
// beyond literals (an expression, a template, a heredoc, a function) answers undefined, and the caller uses
// parseBlocks. test/policy-code/hcl-literal.test.ts runs both on the same files and compares. No I/O.
import type { HclBlock } from "./hcl";

/** Literal data, as hcl2json gives it. */
type Literal = string | number | boolean | null | Literal[] | { [key: string]: Literal };

class NotLiteral extends Error {}

/**
 * The file's top-level blocks in file order (as parseBlocks returns them, `labelCounts` saying how many labels each
 * block type takes), or undefined where the file holds more than literal data or is no valid HCL.
 */
export function literalBlocks(text: string, labelCounts: Record<string, number>): HclBlock[] | undefined {
  try {
    return new LiteralReader(text).file(labelCounts);
  } catch (error) {
    if (error instanceof NotLiteral) return undefined;
    throw error;
  }
}

class LiteralReader {
  private index = 0;

  constructor(private readonly text: string) {}

  private fail(): never {
    throw new NotLiteral();
  }

  /** Skips spaces and comments; with `newlines`, line ends too. */
  private skip(newlines: boolean): void {
    const text = this.text;
    for (;;) {
      const char = text[this.index];
      if (char === " " || char === "\t" || char === "\r" || (newlines && char === "\n")) this.index++;
      else if (char === "#" || (char === "/" && text[this.index + 1] === "/")) {
        while (this.index < text.length && text[this.index] !== "\n") this.index++;
      } else if (char === "/" && text[this.index + 1] === "*") {
        const end = text.indexOf("*/", this.index + 2);
        if (end < 0) this.fail();
        // A comment across lines is a line end (as in HCL), which only bodies care about: keep to simple ones.
        if (!newlines && text.slice(this.index, end).includes("\n")) this.fail();
        this.index = end + 2;
      } else return;
    }
  }

  private identifier(): string {
    const match = /[A-Za-z_][A-Za-z0-9_-]*/y;
    match.lastIndex = this.index;
    const found = match.exec(this.text);
    if (!found) this.fail();
    this.index += found[0].length;
    return found[0];
  }

  private string(): string {
    const text = this.text;
    let value = "";
    this.index++;
    for (;;) {
      const char = text[this.index];
      if (char === undefined || char === "\n") this.fail();
      if (char === '"') break;
      if ((char === "$" || char === "%") && text[this.index + 1] === "{") this.fail(); // a template
      if (char === "\\") {
        const escaped = text[this.index + 1];
        const simple: Record<string, string> = { n: "\n", t: "\t", r: "\r", '"': '"', "\\": "\\" };
        if (escaped !== undefined && escaped in simple) {
          value += simple[escaped];
          this.index += 2;
          continue;
        }
        this.fail();
      }
      value += char;
      this.index++;
    }
    this.index++;
    return value;
  }

  file(labelCounts: Record<string, number>): HclBlock[] {
    const blocks: HclBlock[] = [];
    for (;;) {
      this.skip(true);
      if (this.index >= this.text.length) return blocks;
      const type = this.identifier();
      this.skip(false);
      if (this.text[this.index] === "=") {
        this.index++;
        blocks.push({ type, labels: [], body: { value: this.expression() } });
        this.endOfLine();
        continue;
      }
      const labels = this.labels();
      if (Object.hasOwn(labelCounts, type) && labels.length !== labelCounts[type]) this.fail();
      blocks.push({ type, labels, body: this.body() });
    }
  }

  private labels(): string[] {
    const labels: string[] = [];
    for (;;) {
      this.skip(false);
      const char = this.text[this.index];
      if (char === "{") return labels;
      labels.push(char === '"' ? this.string() : this.identifier());
    }
  }

  /** `{ attributes and blocks }`, as hcl2json writes it: blocks as lists of bodies, nested by label. */
  private body(): Record<string, unknown> {
    this.index++; // "{"
    const body: Record<string, unknown> = {};
    for (;;) {
      this.skip(true);
      if (this.text[this.index] === "}") {
        this.index++;
        this.endOfLine();
        return body;
      }
      const name = this.identifier();
      this.skip(false);
      if (this.text[this.index] === "=") {
        this.index++;
        if (Object.hasOwn(body, name)) this.fail();
        body[name] = this.expression();
        this.endOfLine();
        continue;
      }
      const labels = this.labels();
      const inner = this.body();
      let holder = body as Record<string, unknown>;
      let key = name;
      for (const label of labels) {
        if (holder[key] === undefined) holder[key] = {};
        const next = holder[key];
        if (Array.isArray(next) || typeof next !== "object" || next === null) this.fail();
        holder = next as Record<string, unknown>;
        key = label;
      }
      if (holder[key] === undefined) holder[key] = [];
      const list = holder[key];
      if (!Array.isArray(list)) this.fail();
      list.push(inner);
    }
  }

  private endOfLine(): void {
    this.skip(false);
    const char = this.text[this.index];
    if (char === "\n") this.index++;
    else if (char !== undefined && char !== "}") this.fail();
  }

  private expression(): Literal {
    this.skip(false);
    const text = this.text;
    const char = text[this.index];
    if (char === '"') return this.string();
    if (char === "[") {
      this.index++;
      const items: Literal[] = [];
      for (;;) {
        this.skip(true);
        if (text[this.index] === "]") {
          this.index++;
          return items;
        }
        items.push(this.expression());
        this.skip(true);
        if (text[this.index] === ",") this.index++;
        else if (text[this.index] !== "]") this.fail();
      }
    }
    if (char === "{") {
      this.index++;
      const object: { [key: string]: Literal } = {};
      for (;;) {
        this.skip(true);
        if (text[this.index] === "}") {
          this.index++;
          return object;
        }
        const key = text[this.index] === '"' ? this.string() : this.identifier();
        this.skip(false);
        if (text[this.index] !== "=" && text[this.index] !== ":") this.fail();
        this.index++;
        if (Object.hasOwn(object, key)) this.fail();
        object[key] = this.expression();
        this.skip(false);
        if (text[this.index] === ",") this.index++;
        else if (
          text[this.index] !== "\n" &&
          text[this.index] !== "}" &&
          text[this.index] !== "#" &&
          text[this.index] !== "/"
        ) {
          this.fail();
        }
      }
    }
    const number = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?(?![A-Za-z0-9_.])/y;
    number.lastIndex = this.index;
    const found = number.exec(text);
    if (found) {
      this.index += found[0].length;
      const value = Number(found[0]);
      // Beyond what a double holds exactly, leave the digits to HashiCorp's parser.
      if (!Number.isSafeInteger(value) && Number.isInteger(value)) this.fail();
      return value;
    }
    const word = this.identifier();
    if (word === "true") return true;
    if (word === "false") return false;
    if (word === "null") return null;
    return this.fail(); // a reference or a function: an expression
  }
}
