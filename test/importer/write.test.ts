import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { manifestFile, OutsideOutputError, writeProject } from "../../src/importer/write";

// The output folder's manifest is committed with the project: whoever edits it must not be able to make an import
// delete or write a file outside --out.

let root: string;
let out: string;
const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "import-write-"));
  out = join(root, "project", "governance");
  mkdirSync(out, { recursive: true });
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const files = new Map([["index.ts", Buffer.from("// program\n")]]);

describe("an import's writes stay inside --out", () => {
  it("refuses a manifest naming a file outside, and removes nothing there", async () => {
    const victim = join(root, "project", "keep.txt");
    writeFileSync(victim, "mine\n");
    for (const path of ["../keep.txt", join(root, "project", "keep.txt"), "a/../../keep.txt", "..\\keep.txt"]) {
      writeFileSync(join(out, manifestFile), JSON.stringify({ files: { [path]: sha256("mine\n") } }));
      await expect(writeProject(out, files, { force: true }), path).rejects.toThrow(OutsideOutputError);
      expect(readFileSync(victim, "utf8")).toBe("mine\n");
    }
  });

  it("refuses a path that leads out through a link inside the folder", async () => {
    const elsewhere = join(root, "elsewhere");
    mkdirSync(elsewhere);
    writeFileSync(join(elsewhere, "secret.txt"), "mine\n");
    symlinkSync(elsewhere, join(out, "policies"));
    writeFileSync(join(out, manifestFile), JSON.stringify({ files: { "policies/secret.txt": sha256("mine\n") } }));
    await expect(writeProject(out, files, { force: true })).rejects.toThrow(/leads through a link/);
    expect(readFileSync(join(elsewhere, "secret.txt"), "utf8")).toBe("mine\n");
    writeFileSync(join(out, manifestFile), JSON.stringify({ files: {} }));
    const through = new Map([["policies/new.sentinel", Buffer.from("main = rule { true }\n")]]);
    await expect(writeProject(out, through, { force: true })).rejects.toThrow(OutsideOutputError);
  });

  it("refuses a manifest of another shape, naming it", async () => {
    writeFileSync(join(out, manifestFile), JSON.stringify({ files: ["../x"] }));
    await expect(writeProject(out, files, { force: false })).rejects.toThrow(/is not a manifest an import wrote/);
  });

  it("still writes into an output folder that does not exist yet, and removes its own stale files", async () => {
    const fresh = join(root, "new", "deep");
    await writeProject(fresh, new Map([...files, ["policies/a.sentinel", Buffer.from("a\n")]]), { force: false });
    const outcome = await writeProject(fresh, files, { force: false });
    expect(outcome.removed).toEqual(["policies/a.sentinel"]);
  });
});
