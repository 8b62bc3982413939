import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FileAccess } from "../../src/policy-code/file-access";
import { readPolicyFolder } from "../../src/policy-code/folder";
import { loadCode } from "../../src/resources/policy/properties";
import { prepareFolder } from "../../src/resources/policy-set/folder";

// The hostile-folder property: random trees of files, links (relative and absolute, chains, loops, links to
// folders) and `..` sources, beside decoys no policy may ever carry: a secret outside the repository, the Terraform
// CLI's credentials and Pulumi's inside $HOME (which is itself kept in git here, the strongest case), a Terraform CLI
// configuration named by TF_CLI_CONFIG_FILE and a stack's Pulumi.dev.yaml inside the repository. Every way the
// library reads a folder or a file (a PolicySet's upload with its outside sources, a PolicyFolder, a Policy's
// codeFile) either reads no decoy byte or refuses, and each refusal names the file of the tree that led there.

const marker = "DECOY-7f3a91";
let base: string;
let home: string;
let project: string;
const decoys: Record<string, string> = {};
const saved: Record<string, string | undefined> = {};

beforeAll(() => {
  base = mkdtempSync(join(tmpdir(), "file-access-"));
  home = join(base, "home");
  project = join(home, "project");
  mkdirSync(join(home, ".git"), { recursive: true });
  mkdirSync(project, { recursive: true });
  const decoy = (name: string, path: string) => {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, `${marker} ${name}\n`);
    decoys[name] = path;
  };
  decoy("outside", join(base, "outside", "secret.txt"));
  decoy("outside-folder", join(base, "outside", "folder", "inner.sentinel"));
  decoy("terraform-credentials", join(home, ".terraform.d", "credentials.tfrc.json"));
  decoy("pulumi-credentials", join(home, ".pulumi", "credentials.json"));
  decoy("terraform-cli-config", join(project, "terraform-cli.hcl"));
  decoy("stack-config", join(project, "Pulumi.dev.yaml"));
  decoy("git-config", join(home, ".git", "config"));
  writeFileSync(join(project, "shared.sentinel"), "main = rule { true }\n");
  mkdirSync(join(project, "shared-folder"));
  writeFileSync(join(project, "shared-folder", "lib.sentinel"), "main = rule { true }\n");
  for (const name of ["HOME", "PULUMI_HOME", "TF_CLI_CONFIG_FILE"]) saved[name] = process.env[name];
  process.env.HOME = home;
  delete process.env.PULUMI_HOME;
  process.env.TF_CLI_CONFIG_FILE = decoys["terraform-cli-config"];
});

afterAll(() => {
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  rmSync(base, { recursive: true, force: true });
});

/** Where a link of the tree may point: a decoy, a system file, an allowed file or folder, another link, nothing. */
type Target =
  | { decoy: string; absolute: boolean }
  | { system: string }
  | { allowed: "file" | "folder"; absolute: boolean }
  | { link: number }
  | { missing: true };

const target: fc.Arbitrary<Target> = fc.oneof(
  fc.record({
    decoy: fc.constantFrom(
      ...Object.keys({
        outside: 0,
        "outside-folder": 0,
        "terraform-credentials": 0,
        "pulumi-credentials": 0,
        "terraform-cli-config": 0,
        "stack-config": 0,
        "git-config": 0,
      }),
    ),
    absolute: fc.boolean(),
  }),
  fc.record({ system: fc.constantFrom("/proc/self/environ", "/dev/zero", "/sys/kernel/hostname", "/etc/hostname") }),
  fc.record({ allowed: fc.constantFrom("file" as const, "folder" as const), absolute: fc.boolean() }),
  fc.record({ link: fc.nat(4) }),
  fc.constant({ missing: true as const }),
);

const tree = fc.record({
  links: fc.array(fc.record({ target, inSubfolder: fc.boolean() }), { maxLength: 5 }),
  /** Sources of sentinel.hcl's policies: a plain file of the folder, a link of the tree, or a decoy through `..`. */
  sources: fc.array(
    fc.oneof(
      fc.constant({ own: true as const }),
      fc.record({ link: fc.nat(4) }),
      fc.record({ decoySource: fc.constantFrom("outside", "terraform-credentials", "stack-config", "git-config") }),
    ),
    { minLength: 1, maxLength: 3 },
  ),
});

type Tree = typeof tree extends fc.Arbitrary<infer T> ? T : never;

let caseNumber = 0;

/** Builds the case's folder; answers it and the names a refusal may use for what it built. */
function build(spec: Tree) {
  const folder = join(project, `case-${caseNumber++}`, "policies");
  mkdirSync(join(folder, "sub"), { recursive: true });
  writeFileSync(join(folder, "own.sentinel"), "main = rule { true }\n");
  const linkNames = spec.links.map((link, index) =>
    link.inSubfolder ? `sub/link-${index}.sentinel` : `link-${index}.sentinel`,
  );
  const names = [...linkNames];
  spec.links.forEach((link, index) => {
    const at = join(folder, linkNames[index] as string);
    const pointTo = (path: string, absolute: boolean) => (absolute ? path : relative(dirname(at), path));
    const { target: to } = link;
    let text: string;
    if ("decoy" in to) text = pointTo(decoys[to.decoy] as string, to.absolute);
    else if ("system" in to) text = to.system;
    else if ("allowed" in to) {
      text = pointTo(join(project, to.allowed === "file" ? "shared.sentinel" : "shared-folder"), to.absolute);
    } else if ("link" in to) {
      const other = linkNames[to.link % Math.max(1, linkNames.length)] ?? linkNames[0] ?? "missing";
      text = relative(dirname(at), join(folder, other));
    } else text = "nowhere.sentinel";
    symlinkSync(text, at);
  });
  const blocks = spec.sources.map((source, index) => {
    let path: string;
    if ("own" in source) path = "./own.sentinel";
    else if ("link" in source && linkNames.length > 0) path = `./${linkNames[source.link % linkNames.length]}`;
    else if ("decoySource" in source) path = relative(folder, decoys[source.decoySource] as string);
    else path = "./own.sentinel";
    names.push(path);
    return `policy "p${index}" {\n  source = "${path}"\n  enforcement_level = "advisory"\n}\n`;
  });
  writeFileSync(join(folder, "sentinel.hcl"), blocks.join(""));
  return { folder, names, linkNames };
}

describe("the file-access rule, for hostile folders", () => {
  it("never packs, reads or prints a decoy byte, and names the file of every refusal", async () => {
    let refused = 0;
    let packed = 0;
    const seen = (text: string) => expect(text, "a decoy's bytes").not.toContain(marker);
    const namesItsFile = (message: string, names: string[]) =>
      expect(
        names.some((name) => message.includes(name.replace(/^\.\//, ""))) || message.includes("own.sentinel"),
        `a refusal that names none of the tree's files: ${message}`,
      ).toBe(true);
    await fc.assert(
      fc.asyncProperty(tree, async (spec) => {
        const { folder, names, linkNames } = build(spec);
        // A PolicySet's upload: the folder as go-slug packs it, with sources outside it brought in.
        try {
          const prepared = await prepareFolder(folder, "sentinel");
          for (const bytes of prepared.files.values()) seen(Buffer.from(bytes).toString("latin1"));
          for (const problem of prepared.problems) {
            seen(problem);
            namesItsFile(problem, names);
            refused++;
          }
          if (prepared.problems.length === 0) packed++;
        } catch (error) {
          const message = (error as Error).message;
          seen(message);
          namesItsFile(message, names);
          refused++;
        }
        // A PolicyFolder: one Policy per block, each block's code read.
        try {
          const contents = await readPolicyFolder(folder);
          for (const policy of contents.policies) seen(loadCode({ codeFile: policy.codeFile }).toString("latin1"));
        } catch (error) {
          seen((error as Error).message);
        }
        // A Policy's codeFile: each link of the tree named as one.
        for (const name of linkNames) {
          const codeFile = join(folder, name);
          const checked = FileAccess.forFile(codeFile).check(codeFile, `codeFile ${name}`);
          if ("problem" in checked) {
            seen(checked.problem);
            expect(checked.problem).toContain(name);
          } else {
            seen(loadCode({ codeFile }).toString("latin1"));
          }
        }
      }),
      { numRuns: 120, seed: 20261127 },
    );
    // Both sides were reached: trees refused, and trees that packed.
    expect(refused).toBeGreaterThan(20);
    expect(packed).toBeGreaterThan(10);
  });
});
