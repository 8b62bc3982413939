import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, posix } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TfeClient } from "../../src/client";
import { unpackArchive } from "../../src/policy-code/archive";
import { readSlugFolder } from "../../src/policy-code/slug";
import type { RunningServer } from "../../src/server";
import { startSeededServer } from "../seeded-server";
import { conformanceBinary, goAvailable } from "./conformance-binary";

// What PolicySet packs, next to what HashiCorp's go-slug packs (as go-tfe's PolicySetVersions.Upload calls it) for
// the same folders: the same regular files with the same bytes, the same links kept. And archives go-slug made,
// read by the local server as the service reads them.

// A repository: links out of a folder into the rest of it are what both pack (file-access.ts keeps them inside it).
const work = mkdtempSync(join(tmpdir(), "go-slug-"));
mkdirSync(join(work, ".git"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

type Layout = Record<string, string | { link: string }>;

function folder(name: string, layout: Layout): string {
  const root = join(work, name);
  for (const [path, content] of Object.entries(layout)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    if (typeof content === "string") writeFileSync(join(root, path), content);
    else symlinkSync(content.link.replace("$WORK", work), join(root, path));
  }
  return root;
}

const outside = () =>
  folder("outside", {
    "common.sentinel": "common = true\n",
    "lib/functions.sentinel": "f = func() { return 1 }\n",
    "lib/README.md": "readme",
    "lib/.terraform/cache": "cache",
    terraformignore: "*.pem\nsecrets.auto.tfvars\n",
  });

/** Each case is a folder as teams lay them out, or a rule of go-slug's that is easy to get wrong. */
const cases: Record<string, Layout> = {
  "go-slug's own ignore file": {
    ".terraformignore": readFileSync(join(__dirname, "..", "policy-code", "slug.test.ts"), "utf8")
      .split("const goSlugIgnoreFile = `")[1]!
      .split("`;")[0]!,
    "included.txt": "i",
    "baz.txt": "b",
    "parent/foo/baz.txt": "b",
    "parent/foo/bar.tf": "b",
    "parent/bar/bar.tf": "b",
    "something/with-baz.txt": "w",
    "foo/ignored-doc.md": "d",
    "foo/kept.txt": "k",
    "bar/something-a.txt": "a",
    "bar/something-1.txt": "1",
    "some-module/terraform.d/x": "x",
    "terraform.d/foo": "f",
    "baz/boop.txt": "b",
    "boop.txt": "b",
  },
  "defaults without a .terraformignore": {
    "sentinel.hcl": "",
    ".terraform/plugins/p": "p",
    ".terraform/modules/m/main.tf": "m",
    "nested/.terraform/x": "x",
    ".git/HEAD": "ref",
    "node_modules/x/index.js": "x",
  },
  "defaults before the folder's own rules": {
    ".terraformignore": "*.md\n!.terraform/keep\n",
    "sentinel.hcl": "",
    ".terraform/keep": "k",
    ".terraform/drop": "d",
    "README.md": "r",
    "docs/guide.md": "g",
  },
  "an excluded folder with a file taken back": {
    ".terraformignore": "docs/\n!docs/keep.md\nnotes/draft.md\n/top.md\n",
    "docs/keep.md": "k",
    "docs/drop.md": "d",
    "deep/notes/draft.md": "n",
    "top.md": "t",
    "deep/top.md": "t",
  },
  "links inside the folder": {
    "modules/a.sentinel": "a",
    "data/x.json": "{}",
    "link-a.sentinel": { link: "modules/a.sentinel" },
    "chain.sentinel": { link: "link-a.sentinel" },
    "data-link": { link: "data" },
    "modules/up.sentinel": { link: "../link-a.sentinel" },
    "dangling.sentinel": { link: "missing.sentinel" },
  },
  ".terraformignore a link inside the folder": {
    ".terraformignore": { link: "config/terraformignore" },
    "config/terraformignore": "*.pem\nsecrets.auto.tfvars\n",
    "sentinel.hcl": "",
    "keys/deploy.pem": "-----BEGIN PRIVATE KEY-----",
    "secrets.auto.tfvars": 'token = "s3cr3t"',
  },
  ".terraformignore a link out of the folder, into the repository": {
    ".terraformignore": { link: "$WORK/outside/terraformignore" },
    "sentinel.hcl": "",
    "keys/deploy.pem": "-----BEGIN PRIVATE KEY-----",
    "secrets.auto.tfvars": 'token = "s3cr3t"',
  },
  "links out of the folder, files and folders": {
    ".terraformignore": "lib/README.md\nfunctions.sentinel\n",
    "sentinel.hcl": "",
    "common.sentinel": { link: "$WORK/outside/common.sentinel" },
    lib: { link: "$WORK/outside/lib" },
  },
};

interface SlugEntry {
  name: string;
  type: string;
  linkname?: string;
  sha256?: string;
}

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

describe.skipIf(!goAvailable && !process.env.CI)("go-slug and PolicySet pack the same folder the same way", () => {
  let binary: string;
  let server: RunningServer;
  let client: TfeClient;
  const token = "go-slug-token-0123456789";

  beforeAll(async () => {
    if (!goAvailable) throw new Error("the go-slug comparison needs Go 1.25+ on PATH (CI must run it)");
    binary = conformanceBinary().path;
    outside();
    server = await startSeededServer({ organization: "acme", token });
    client = new TfeClient({ address: server.url, token, rateLimit: false });
  }, 900_000);
  afterAll(async () => {
    await client?.close();
    await server?.close();
  });

  const goSlug = (root: string, archive?: string) =>
    JSON.parse(execFileSync(binary, ["slug", root, ...(archive ? [archive] : [])], { encoding: "utf8" })) as {
      entries?: SlugEntry[];
      error?: string;
    };

  for (const [name, layout] of Object.entries(cases)) {
    it(`${name}: the same files and links`, () => {
      const root = folder(name.replace(/\W+/g, "-"), layout);
      const { entries, error } = goSlug(root);
      expect(error).toBeUndefined();
      const theirs = {
        files: Object.fromEntries(
          (entries ?? []).filter((entry) => entry.type === "file").map((entry) => [entry.name, entry.sha256]),
        ),
        links: Object.fromEntries(
          (entries ?? [])
            .filter((entry) => entry.type === "symlink")
            .map((entry) => [entry.name, posix.normalize(posix.join(posix.dirname(entry.name), entry.linkname ?? ""))]),
        ),
      };
      const { packed } = readSlugFolder(root);
      const ours = {
        files: Object.fromEntries([...packed.files].map(([path, bytes]) => [path, sha256(bytes)])),
        links: Object.fromEntries(packed.links),
      };
      expect(ours).toEqual(theirs);
    });
  }

  it("a link into /proc: go-slug fails on it, and PolicySet refuses it before reading it", () => {
    const root = folder("proc-link", { "sentinel.hcl": "", "environ.sentinel": { link: "/proc/self/environ" } });
    expect(goSlug(root).error).toMatch(/environ/);
    expect(() => readSlugFolder(root)).toThrow(
      /environ\.sentinel \(a link to \/proc\/self\/environ\) leads to \/proc\//,
    );
  });

  it("the server reads an archive go-slug made (links kept, chains and linked folders) as the folder reads", async () => {
    const root = folder("served", {
      "sentinel.hcl":
        'policy "p" {\n  source = "./chain.sentinel"\n}\nimport "static" "data" {\n  source = "./data-link/x.json"\n  format = "json"\n}\n',
      "modules/p.sentinel": "main = rule { true }\n",
      // The link comes before its target in go-slug's walk order, and reaches it through another link.
      "chain.sentinel": { link: "link-p.sentinel" },
      "link-p.sentinel": { link: "modules/p.sentinel" },
      "data/x.json": "{}",
      "data-link": { link: "data" },
    });
    const archive = join(work, "served.tar.gz");
    expect(goSlug(root, archive).error).toBeUndefined();
    const unpacked = await unpackArchive(readFileSync(archive));
    expect(new Map([...unpacked].map(([path, bytes]) => [path, sha256(bytes)]))).toEqual(
      new Map([...readSlugFolder(root).files].map(([path, bytes]) => [path, sha256(bytes)])),
    );
    const set = await client.policySets.create("acme", { name: "served" });
    const version = await client.policySets.createVersion(set.id);
    await client.policySets.uploadVersion(version, readFileSync(archive));
    let status = "pending";
    for (let tries = 0; tries < 50 && !["ready", "errored"].includes(status); tries++) {
      await new Promise((done) => setTimeout(done, 100));
      const read = await client.policySets.readVersion(version.id);
      status = read.errorMessage ? `${read.status}: ${read.errorMessage}` : read.status;
    }
    expect(status).toBe("ready");
  });
});
