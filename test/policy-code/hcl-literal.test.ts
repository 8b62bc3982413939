import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseBlocks } from "../../src/policy-code/hcl";
import { literalBlocks } from "../../src/policy-code/hcl-literal";
import { sentinelCorpus } from "../sentinel-corpus";

// The literal reader stands in for HashiCorp's HCL parser on Sentinel test cases: both read the same files here and
// must give the same blocks, or the literal reader must step aside (undefined).

const labelCounts = { mock: 1, module: 1, param: 1, global: 1, import: 2, test: 0 };
const corpus = sentinelCorpus().folder;

function hclFilesUnder(directory: string): string[] {
  let entries: import("node:fs").Dirent[];
  try {
    entries = readdirSync(directory, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries.flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return hclFilesUnder(path);
    return entry.name.endsWith(".hcl") ? [path] : [];
  });
}

const written: Record<string, string> = {
  "every literal kind": `# a comment
mock "tfplan/v2" {
  module {
    source = "mock.sentinel" // another
  }
}

mock "time" {
  data = {
    now = { weekday_name = "Friday", hour = 13 }
    "quoted key": [1, -2.5, true, false, null, "a\\"b\\n"]
    list = [
      "x",
      "y",
    ]
  }
}

param "limit" {
  value = 12
}

global "flags" {
  value = { a = [], b = {} }
}

import "module" "helpers" {
  source = "../helpers.sentinel"
}

test { rules = { main = true } }
`,
  "a template": 'param "x" {\n  value = "$' + '{upper("a")}"\n}\n',
  "a function": 'param "x" {\n  value = file("a.json")\n}\n',
  "an operator": 'param "x" {\n  value = 1 + 2\n}\n',
  "a heredoc": 'param "x" {\n  value = <<EOT\ntext\nEOT\n}\n',
  "two attributes on one line": "test {\n  rules = { main = true } extra = 1\n}\n",
};

describe("the literal HCL reader gives what HashiCorp's parser gives, or steps aside", () => {
  it.each(Object.entries(written))("%s", async (_name, text) => {
    const literal = literalBlocks(text, labelCounts);
    if (literal === undefined) {
      expect(_name).not.toBe("every literal kind");
      return;
    }
    expect(literal).toEqual(await parseBlocks("case.hcl", text, labelCounts));
  });

  it("steps aside for templates, functions, operators and heredocs", () => {
    for (const name of ["a template", "a function", "an operator", "a heredoc", "two attributes on one line"]) {
      expect(literalBlocks(written[name] as string, labelCounts), name).toBeUndefined();
    }
  });

  it("agrees on every test case of the corpus's libraries and of this project's fixtures", async () => {
    const files = [...hclFilesUnder(corpus), ...hclFilesUnder(join(__dirname, "..", "fixtures"))];
    let read = 0;
    for (const file of files) {
      const text = readFileSync(file, "utf8");
      const literal = literalBlocks(text, labelCounts);
      if (literal === undefined) continue;
      read++;
      expect(literal, file).toEqual(await parseBlocks(file, text, labelCounts));
    }
    console.log(
      `${read} of ${files.length} .hcl files read by the literal reader, each as HashiCorp's parser reads it`,
    );
    expect(read).toBeGreaterThan(files.length / 2);
  }, 60_000);
});
