import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type RunningServer, startServer } from "../../src/server";
import type { EnforcedPolicy } from "../../src/server/enforcement";
import { GitRepository } from "../vcs-repository";
import type { Declared } from "./engine-driver";

// The oracle's program: what it declares, and the arguments each resource gets. Shared by the oracle (which drives
// the providers as the engine does) and test/e2e/engine-driver.test.ts (which runs the same steps under the real
// engine), so that both run the same program.

export const organization = "acme";
export const oauthTokenId = "ot-oracleLibrary00001";
export const workspaces = ["ws-oracleA000000001", "ws-oracleB000000001", "ws-oracleC000000001"];
export const sentinelLevels = ["advisory", "soft-mandatory", "hard-mandatory"] as const;
export const opaLevels = ["advisory", "mandatory"] as const;
export const tfLevels = ["advisory", "mandatory_overridable", "mandatory"] as const;

/** A folder's content: its kind and each label's level, or the label left out. */
export interface FolderModel {
  kind: "sentinel" | "opa";
  levels: Record<"x" | "y", string | null>;
}

/**
 * The labels a folder's two policy blocks carry, drawn per sequence from a hostile alphabet: labels are data, and a
 * label that is an object's special key (`__proto__`) or a method's name must be compared like any other.
 */
export type BlockLabels = Record<"x" | "y", string>;
export const hostileLabels = ["x", "y", "__proto__", "constructor", "toString", "hasOwnProperty", "a.b", "ü-étiquette"];

/**
 * Where the folder set reads its policies: an uploaded folder; version control with a checkout whose remote names the
 * repository, with one whose remote names no identifier (a local path: not shown to be what the set reads), or
 * with none.
 */
export const folderSources = ["directory", "vcs-checkout", "vcs-foreign-checkout", "vcs-plain"] as const;
/** The set's policies path in the repository: "elsewhere" holds a folder with no policies. */
export const policiesPaths = ["set", "elsewhere"] as const;

export interface Program {
  labels: BlockLabels;
  policy: { name: "p1" | "p1-renamed"; level: string; inSet: boolean; code: 0 | 1 };
  setOfPolicies: { global: boolean; workspaces: string[]; excluded: string[] };
  folderSet: {
    source: (typeof folderSources)[number];
    path: (typeof policiesPaths)[number];
    content: FolderModel;
    workspaces: string[];
  };
  /** `sensitive`: the parameter its level reads is a secret, whose value the service never shows back. */
  terraformPolicy: { level: string; enforceTwice: boolean; filter: boolean; sensitive: boolean };
  approve: boolean;
}

export const initialProgram: Program = {
  labels: { x: "x", y: "y" },
  policy: { name: "p1", level: "hard-mandatory", inSet: true, code: 0 },
  setOfPolicies: { global: false, workspaces: [workspaces[0] as string], excluded: [] },
  folderSet: {
    source: "directory",
    path: "set",
    content: { kind: "sentinel", levels: { x: "hard-mandatory", y: "soft-mandatory" } },
    workspaces: [workspaces[1] as string],
  },
  terraformPolicy: { level: "mandatory", enforceTwice: false, filter: false, sensitive: false },
  approve: false,
};

/**
 * Where the program's files are: a set's folder, the Terraform policy folder, the library (the repository the
 * service reads), and the team's checkouts of it. Without `checkouts`, the library is its own checkout: what the
 * program writes is in the repository at once (the engine driver's test, which runs no push).
 */
export interface ProgramPaths {
  folder: string;
  tfFolder: string;
  library: GitRepository;
  checkouts?: Checkouts;
}

/** Two clones of the library: one whose remote names it, one whose remote is a local path (no identifier). */
export interface Checkouts {
  named: GitRepository;
  foreign: GitRepository;
}

/** Clones of `library` to preview from, and the library made to take their pushes to its checked-out branch. */
export function cloneCheckouts(library: GitRepository, into: string): Checkouts {
  library.git(["config", "receive.denyCurrentBranch", "updateInstead"]);
  const clone = (name: string, remote: string) => {
    const checkout = GitRepository.clone(library.path, join(into, name));
    checkout.git(["remote", "set-url", "origin", remote]);
    return checkout;
  };
  return {
    named: clone("named", "https://github.com/acme/policy-library.git"),
    foreign: clone("foreign", library.path),
  };
}

/**
 * Writes the folder set's content into `repository` as the program has it (at its policies path, with "elsewhere"
 * holding no policies) and commits it, on top of what the library holds: a checkout is brought to the library's
 * branch first, so that its push is always a fast-forward and a refused change left in it is dropped.
 */
export function writeLibrary(repository: GitRepository, program: Program, library?: GitRepository): void {
  if (library && library !== repository) {
    repository.git(["fetch", "--quiet", library.path, "main"]);
    repository.git(["reset", "--quiet", "--hard", "FETCH_HEAD"]);
  }
  const { content, path } = program.folderSet;
  writeFolder(
    repository.path,
    path === "set" ? content : { kind: content.kind, levels: { x: null, y: null } },
    program.labels,
    "set",
  );
  writeFolder(
    repository.path,
    path === "elsewhere" ? content : { kind: content.kind, levels: { x: null, y: null } },
    program.labels,
    "elsewhere",
  );
  if (repository.git(["status", "--porcelain"]).trim() !== "") repository.commit({}, "Program's content");
}

/** The checkout the program previews from, where its source has one. */
export function checkoutOf(program: Program, paths: ProgramPaths): GitRepository | undefined {
  const source = program.folderSet.source;
  if (source === "directory" || (source === "vcs-plain" && paths.checkouts)) return undefined;
  if (!paths.checkouts) return paths.library;
  return source === "vcs-foreign-checkout" ? paths.checkouts.foreign : paths.checkouts.named;
}

/** Writes a policy-set folder holding `content`: each block a file (x or y), labelled as `labels` says, at its level. */
export function writeFolder(folder: string, content: FolderModel, labels: BlockLabels, prefix = "") {
  const root = join(folder, prefix);
  rmSync(root, { recursive: true, force: true });
  mkdirSync(root, { recursive: true });
  const blocks = (["x", "y"] as const).filter((block) => content.levels[block] !== null);
  if (content.kind === "sentinel") {
    const written = blocks.map(
      (label) =>
        `policy "${JSON.stringify(labels[label]).slice(1, -1)}" {\n  source = "./${label}.sentinel"\n  enforcement_level = "${content.levels[label]}"\n}\n`,
    );
    writeFileSync(join(root, "sentinel.hcl"), written.join("\n") || "# no policies\n");
    for (const label of blocks) writeFileSync(join(root, `${label}.sentinel`), "main = rule { true }\n");
  } else {
    const written = blocks.map(
      (label) =>
        `policy "${JSON.stringify(labels[label]).slice(1, -1)}" {\n  query = "data.terraform.${label}.deny"\n  enforcement_level = "${content.levels[label]}"\n}\n`,
    );
    writeFileSync(join(root, "policies.hcl"), written.join("\n") || "# no policies\n");
    for (const label of blocks) {
      writeFileSync(join(root, `${label}.rego`), `package terraform.${label}\n\ndeny[msg] { false; msg := "" }\n`);
    }
  }
}

export function writeTerraformPolicy(folder: string, shape: Program["terraformPolicy"]) {
  const enforce = '  enforce {\n    condition = core::try(attrs.tags.Owner, "") != ""\n  }\n';
  writeFileSync(
    join(folder, "tags.policy.hcl"),
    'input "level" {\n  type    = string\n  default = "mandatory"\n}\n\n' +
      'resource_policy "aws_s3_bucket" "tags" {\n  enforcement_level = input.level\n' +
      (shape.filter ? '  filter = attrs.bucket != "logs"\n' : "") +
      enforce +
      (shape.enforceTwice ? enforce : "") +
      "}\n",
  );
}

/**
 * Each resource's arguments for `program`, with its files written: the folder, the Terraform policy file, and the
 * library's content committed where the set reads version control. The policy's sets are named by id by the caller.
 */
export function programArguments(program: Program, paths: ProgramPaths) {
  writeFolder(paths.folder, program.folderSet.content, program.labels);
  writeTerraformPolicy(paths.tfFolder, program.terraformPolicy);
  const approve = program.approve;
  const checkout = checkoutOf(program, paths);
  const folderSource =
    program.folderSet.source === "directory"
      ? { directory: paths.folder }
      : {
          vcsRepo: { identifier: "acme/policy-library", branch: "main", oauthTokenId },
          policiesPath: program.folderSet.path,
          ...(program.folderSet.source !== "vcs-plain" && checkout ? { vcsCheckout: checkout.path } : {}),
        };
  // The checkout holds the program's content; without checkouts of its own, the library is it (and what the
  // service reads when the set moves to it).
  if (checkout) writeLibrary(checkout, program, paths.library);
  return {
    setOfPolicies: {
      organization,
      name: "set-of-policies",
      global: program.setOfPolicies.global,
      workspaceIds: program.setOfPolicies.global ? [] : program.setOfPolicies.workspaces,
      excludedWorkspaceIds: program.setOfPolicies.excluded,
      allowWeakening: approve,
    },
    policyInSet: program.policy.inSet,
    policy: {
      organization,
      name: program.policy.name,
      code: `main = rule { ${program.policy.code === 0 ? "true" : "1 == 1"} }\n`,
      enforcementLevel: program.policy.level,
      allowWeakening: approve,
    },
    folderSet: {
      organization,
      name: "folder-set",
      kind: program.folderSet.content.kind,
      ...folderSource,
      workspaceIds: program.folderSet.workspaces,
      allowWeakening: approve,
    },
    terraformPolicy: {
      organization,
      name: "terraform-policy",
      kind: "tfpolicy",
      directory: paths.tfFolder,
      global: true,
      parameters: { level: program.terraformPolicy.level },
      allowWeakening: approve,
    },
    terraformPolicySensitive: program.terraformPolicy.sensitive,
  };
}

/** The program's resources, in the order the engine registers them, as the engine driver takes them. */
export function declaredResources(args: ReturnType<typeof programArguments>): Declared[] {
  return [
    { name: "set-of-policies", type: "PolicySet", args: () => args.setOfPolicies },
    {
      name: "policy",
      type: "Policy",
      args: (idOf) => ({ ...args.policy, policySetIds: args.policyInSet ? [idOf("set-of-policies")] : [] }),
    },
    { name: "folder-set", type: "PolicySet", args: () => args.folderSet },
    {
      name: "terraform-policy",
      type: "PolicySet",
      // What the PolicySet class makes of a plain parameter in a program: a value that is no secret.
      args: () => ({
        ...args.terraformPolicy,
        parameters: {
          level: { value: args.terraformPolicy.parameters.level, sensitive: args.terraformPolicySensitive },
        },
      }),
    },
  ];
}

/**
 * What the service enforces (the local server's GET /_local/enforcement), by target and policy: a policy of a set of
 * policies by the resource that owns it (its id changes when a rename replaces it), a versioned set's block by the
 * set's resource and the block's label; `names` gives each id's resource.
 */
export async function enforcedByResource(
  serverUrl: string,
  names: ReadonlyMap<string, string>,
): Promise<Map<string, number>> {
  const answer = await fetch(`${serverUrl}/_local/enforcement?organization=${organization}`);
  if (!answer.ok) throw new Error(`GET /_local/enforcement answered ${answer.status}: ${await answer.text()}`);
  const { enforced } = (await answer.json()) as { enforced: EnforcedPolicy[] };
  const facts = new Map<string, number>();
  for (const entry of enforced) {
    const owner = entry.policyId
      ? `policy ${names.get(entry.policyId) ?? entry.policyId}`
      : `${names.get(entry.setId) ?? entry.setId} ${entry.label}`;
    const key = `${entry.target}: ${owner}`;
    facts.set(key, Math.max(facts.get(key) ?? 0, entry.strength));
  }
  return facts;
}

/** The oracle's world: a server seeded with its workspaces and a library repository it reads from version control. */
export async function oracleServer(token: string): Promise<{ server: RunningServer; library: GitRepository }> {
  const library = GitRepository.create({ "README.md": "The oracle's library.\n" });
  const server = await startServer({
    seed: {
      organizations: [{ name: organization, plus: true }],
      tokens: [{ token, organizations: [organization] }],
      workspaces: workspaces.map((id) => ({ id, organization, name: id })),
      vcsRepositories: [{ identifier: "acme/policy-library", path: library.path }],
      oauthTokens: [{ id: oauthTokenId, organization }],
    },
  });
  return { server, library };
}
