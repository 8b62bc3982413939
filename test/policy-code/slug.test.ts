import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { excludes, ignoreRules, readSlugFolder, resolveLinks } from "../../src/policy-code/slug";

// go-slug's rules, case by case. The table of the first test is go-slug's own (internal/ignorefiles, its
// TestTerraformIgnore over testdata/archive-dir); test/conformance/go-slug.test.ts runs go-slug itself on folders.

// The work folder is a repository: links may lead anywhere inside it, never out of it (file-access.ts).
const work = mkdtempSync(join(tmpdir(), "slug-"));
mkdirSync(join(work, ".git"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const goSlugIgnoreFile = `# comments are ignored
 # extra spaces are irrelevant
# ignore a file
   baz.txt
# below is an empty line

# ignore a directory
terraform.d/
# negate ignoring a directory at the root
!/terraform.d/
# ignore a file at a subpath
**/foo/bar.tf
# ignore files with specific endings
foo/*.md
# character groups
bar/something-[a-z].txt
# ignore a file
boop.txt
# but not one at the current directory
!/boop.txt
`;

function folder(files: Record<string, string>): string {
  const root = mkdtempSync(join(work, "folder-"));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

describe("go-slug's .terraformignore rules", () => {
  it("match go-slug's own table", () => {
    const rules = ignoreRules(goSlugIgnoreFile);
    const table: [string, boolean][] = [
      [".terraform/", true],
      ["included.txt", false],
      [".terraform/foo/bar", true],
      [".terraform/foo/bar/more/directories/so/many", true],
      [".terraform/foo/ignored-subdirectory/", true],
      ["baz.txt", true],
      ["parent/foo/baz.txt", true],
      ["parent/foo/bar.tf", true],
      ["parent/bar/bar.tf", false],
      ["something/with-baz.txt", false],
      ["something/baz.x", false],
      ["foo/ignored-doc.md", true],
      ["bar/something-a.txt", true],
      ["some-module/terraform.d/x", true],
      ["terraform.d/", false],
      ["terraform.d/foo", false],
      ["terraform.d", false],
      ["baz/boop.txt", true],
      ["boop.txt", false],
    ];
    expect(table.map(([path]) => [path, excludes(rules, path).excluded])).toEqual(table);
  });

  it("apply the defaults first, whatever the folder's own file says", () => {
    for (const text of [undefined, "", "*.md\n"]) {
      const rules = ignoreRules(text);
      expect(excludes(rules, ".terraform/plugins/x").excluded).toBe(true);
      expect(excludes(rules, ".terraform/modules/m/main.tf").excluded).toBe(false);
      expect(excludes(rules, "nested/.terraform/x").excluded).toBe(true);
      expect(excludes(rules, ".git/HEAD").excluded).toBe(true);
    }
    // Only a later rule of the folder's own takes a default back.
    expect(excludes(ignoreRules("!.terraform/keep\n"), ".terraform/keep").excluded).toBe(false);
  });

  it("put ** before a pattern that holds a slash, unlike gitignore: notes/draft.md matches at any depth", () => {
    const rules = ignoreRules("notes/draft.md\n/top.md\n");
    expect(excludes(rules, "notes/draft.md").excluded).toBe(true);
    expect(excludes(rules, "deep/notes/draft.md").excluded).toBe(true);
    expect(excludes(rules, "top.md").excluded).toBe(true);
    expect(excludes(rules, "deep/top.md").excluded).toBe(false);
  });

  it("leave node_modules in, as go-slug does (it is no default of go-slug's)", () => {
    const root = folder({ "sentinel.hcl": "", "node_modules/x/index.js": "x", ".terraform/t": "t", ".git/HEAD": "h" });
    expect([...readSlugFolder(root).files.keys()].sort()).toEqual(["node_modules/x/index.js", "sentinel.hcl"]);
  });

  it("walk into an excluded folder when a later ! rule takes part of it back", () => {
    const root = folder({
      ".terraformignore": "docs/\n!docs/keep.md\n",
      "docs/keep.md": "k",
      "docs/drop.md": "d",
      "sentinel.hcl": "",
    });
    expect([...readSlugFolder(root).files.keys()].sort()).toEqual([".terraformignore", "docs/keep.md", "sentinel.hcl"]);
  });
});

describe("links", () => {
  it("keeps links inside the folder as links, and reads each as its target: files, folders, chains", () => {
    const root = folder({ "modules/a.sentinel": "a", "data/x.json": "{}" });
    symlinkSync("modules/a.sentinel", join(root, "link-a.sentinel"));
    symlinkSync("link-a.sentinel", join(root, "chain.sentinel"));
    symlinkSync("data", join(root, "data-link"));
    const { files, packed } = readSlugFolder(root);
    expect([...packed.links].sort()).toEqual([
      ["chain.sentinel", "link-a.sentinel"],
      ["data-link", "data"],
      ["link-a.sentinel", "modules/a.sentinel"],
    ]);
    expect(Buffer.from(files.get("chain.sentinel") ?? []).toString()).toBe("a");
    expect(Buffer.from(files.get("data-link/x.json") ?? []).toString()).toBe("{}");
  });

  it("follows a link out of the folder, names it, and matches rules under a linked folder relative to it", () => {
    const outside = folder({ "common.sentinel": "c", "lib/f.sentinel": "f", "lib/skip.md": "s" });
    const root = folder({ ".terraformignore": "lib/skip.md\n", "sentinel.hcl": "" });
    symlinkSync(join(outside, "common.sentinel"), join(root, "common.sentinel"));
    symlinkSync(join(outside, "lib"), join(root, "lib"));
    const { files, externalLinks } = readSlugFolder(root);
    expect(externalLinks.map(({ path }) => path).sort()).toEqual(["common.sentinel", "lib"]);
    // go-slug matches "lib/skip.md" against "skip.md" there: the file is packed.
    expect([...files.keys()].sort()).toEqual([
      ".terraformignore",
      "common.sentinel",
      "lib/f.sentinel",
      "lib/skip.md",
      "sentinel.hcl",
    ]);
  });

  it("reads a .terraformignore that is a link, inside the folder or out of it, and leaves out what it names", () => {
    const rules = "*.pem\nsecrets.auto.tfvars\n";
    const shared = folder({ terraformignore: rules });
    const layout = {
      "sentinel.hcl": "",
      "keys/deploy.pem": "-----BEGIN PRIVATE KEY-----",
      "secrets.auto.tfvars": 'token = "s3cr3t"',
      "config/terraformignore": rules,
    };
    const inside = folder(layout);
    symlinkSync("config/terraformignore", join(inside, ".terraformignore"));
    const outside = folder(layout);
    symlinkSync(join(shared, "terraformignore"), join(outside, ".terraformignore"));
    for (const root of [inside, outside]) {
      const { files } = readSlugFolder(root);
      expect([...files.keys()].sort()).toEqual([".terraformignore", "config/terraformignore", "sentinel.hcl"]);
    }
  });

  it("refuses a .terraformignore link it cannot read, rather than pack what the file leaves out", () => {
    const dangling = folder({ "sentinel.hcl": "", "key.pem": "k" });
    symlinkSync("missing-ignore", join(dangling, ".terraformignore"));
    expect(() => readSlugFolder(dangling)).toThrow(
      /\.terraformignore \(a link to missing-ignore\) does not exist .*: fix the path, or add the file/,
    );
    const elsewhere = mkdtempSync(join(tmpdir(), "slug-elsewhere-"));
    try {
      writeFileSync(join(elsewhere, "ignore"), "*.pem\n");
      const out = folder({ "sentinel.hcl": "", "key.pem": "k" });
      symlinkSync(join(elsewhere, "ignore"), join(out, ".terraformignore"));
      expect(() => readSlugFolder(out)).toThrow(
        /\.terraformignore \(a link to .*\) leads to .*, outside the repository/,
      );
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });

  it("refuses a link into /proc, naming it, and never reads it", () => {
    const root = folder({ "sentinel.hcl": "" });
    symlinkSync("/proc/self/environ", join(root, "environ.sentinel"));
    expect(() => readSlugFolder(root)).toThrow(
      /environ\.sentinel \(a link to \/proc\/self\/environ\) leads to \/proc\/.*environ.*which the kernel serves/,
    );
  });

  it("refuses a link to a device, naming it", () => {
    const root = folder({ "sentinel.hcl": "" });
    symlinkSync("/dev/zero", join(root, "zero.sentinel"));
    expect(() => readSlugFolder(root)).toThrow(/zero\.sentinel \(a link to \/dev\/zero\) leads to \/dev\/zero/);
  });

  it("refuses a link that leads out of the repository, naming the link and where it leads, and reads nothing there", () => {
    const elsewhere = mkdtempSync(join(tmpdir(), "slug-elsewhere-"));
    try {
      writeFileSync(join(elsewhere, "secret.txt"), "decoy-secret");
      const root = folder({ "sentinel.hcl": "" });
      symlinkSync(join(elsewhere, "secret.txt"), join(root, "shared.sentinel"));
      expect(() => readSlugFolder(root)).toThrow(
        new RegExp(
          `shared\\.sentinel \\(a link to ${elsewhere}/secret\\.txt\\) leads to .*secret\\.txt.*, outside the repository`,
        ),
      );
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });

  it("resolves links whatever the order they arrive in, and stops at a folder linked into itself", () => {
    const bytes = Buffer.from("x");
    const files = new Map([["real/f", bytes]]);
    const view = resolveLinks(
      files,
      new Map([
        ["c", "b"],
        ["b", "a"],
        ["a", "real"],
        ["real/up", "real"],
      ]),
    );
    expect([...view.keys()].sort()).toEqual(["a/f", "b/f", "c/f", "real/f"]);
  });
});
