import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type * as pulumi from "@pulumi/pulumi";
import { TfeApiError } from "../../client/errors";
import { maxNameLength } from "../../contract/limits";
import { type PolicySetKind, policyNamePattern, policySetKinds } from "../../contract/policies";
import { policySetArchiveSizeProblem } from "../../contract/policy-sets";
import { archiveSize, collectFolder, fileDigests, packFiles } from "../../policy-code/archive";
import { normalizedPoliciesPath } from "../../policy-code/folder-files";
import { checkoutIdentity, headCommit } from "../../policy-code/git";
import { Opa } from "../../policy-code/opa";
import {
  type FolderFiles,
  kindOfFolder,
  PolicySetFolderError,
  type PolicySetFolderSummary,
  readPolicySetFolder,
} from "../../policy-code/policy-set-folder";
import { dialectAdvice, policyToolVersionWords, queryProblems, regoVersionOfRuntime } from "../../policy-code/rego";
import { stampChecked } from "../operation";
import { judgeFolderTests } from "../policy-tests";
import { argumentFailures } from "../property-table";
import {
  type CheckFailure,
  checkIdList,
  checkOrganization,
  isUnknown,
  NameListings,
  type ProviderContext,
  takenNameHolder,
} from "../provider-context";
import {
  checkDirectoryKept,
  checkoutMismatch,
  checkParameters,
  checkVcs,
  idShapes,
  readsSameSource,
  setNameTakenMessage,
  vcsContentUnknown,
} from "./arguments";
import { type PreparedFolder, prepareFolder } from "./folder";
import { type PolicySetInputs, type PolicySetOutputs, policySetProperties, setEnforcement } from "./properties";
import { scopeOptions, shapeOf, type VcsRepoShape } from "./requests";
import { sayWhomSetBlocks } from "./stricter";
import { checkTfPolicyFolder, terraformPolicyArgumentFailures } from "./tfpolicy";

/** What checking the folder found: whether it could be read (a weakening can be judged only then), and what. */
interface FolderCheck {
  readable: boolean;
  /** A folder was read (a directory, or a checkout of the repository): its policies are what a change compares. */
  compared?: boolean;
  kind?: PolicySetKind;
  summary?: PolicySetFolderSummary;
}

/** The preview checks of a PolicySet: every argument, the whole folder, the scope's ids, every weakening. */
export class PolicySetChecker {
  /** Ids of workspaces and projects found this operation: each is read once however many sets name it. */
  private readonly foundScopeIds = new Map<string, Promise<boolean>>();
  /**
   * Archives packed at check, by content hash: `up` uploads exactly what its check hashed and sized, however the
   * folder changes meanwhile. The provider process lives for one operation, so nothing here outlives it.
   */
  readonly packedArchives = new Map<string, Buffer>();

  /** The names of each organization's sets, listed once however many sets are created or renamed. */
  private readonly names: NameListings;

  constructor(private readonly context: ProviderContext) {
    this.names = new NameListings((organization) => context.client.policySets.listAll(organization));
  }

  /** Every input rule and the whole folder, before any write; unknown values (preview) pass. */
  async check(olds: Record<string, unknown>, news: Record<string, unknown>): Promise<pulumi.dynamic.CheckResult> {
    const failures = argumentFailures(policySetProperties, news, "PolicySet");
    if (failures.length > 0) return { inputs: news, failures };
    const inputs: Record<string, unknown> = { ...news };
    checkOrganization(failures, news.organization);
    const name = news.name;
    if (
      !isUnknown(name) &&
      (typeof name !== "string" || !policyNamePattern.test(name) || name.length > maxNameLength)
    ) {
      failures.push({
        property: "name",
        reason: `name ${JSON.stringify(name)} may hold only letters, digits, '-' and '_' (at most ${maxNameLength}): e.g. "baseline"`,
      });
    }
    const kindKnown =
      news.kind === undefined || isUnknown(news.kind) || policySetKinds.includes(news.kind as PolicySetKind);
    if (!kindKnown) {
      failures.push({
        property: "kind",
        reason: `kind ${JSON.stringify(news.kind)} is not valid: use "sentinel", "opa" or "tfpolicy"`,
      });
    }
    inputs.description = news.description ?? null;
    inputs.global = news.global === true;
    inputs.adoptExisting = news.adoptExisting === true;
    inputs.allowWeakening = news.allowWeakening === true;
    if (news.allowStricter === true) inputs.allowStricter = true;
    inputs.policyToolVersion = news.policyToolVersion ?? "latest";
    for (const property of ["policyIds", ...scopeOptions] as const) {
      inputs[property] = checkIdList(failures, property, news[property], idShapes[property]);
    }
    if (
      news.directory !== undefined &&
      (isUnknown(news.policyIds) || (Array.isArray(news.policyIds) && news.policyIds.length > 0))
    ) {
      failures.push({
        property: "policyIds",
        reason:
          "a set holds either a folder (directory) or individual policies (policyIds), never both: declare two sets",
      });
    }
    if (inputs.global === true) {
      for (const property of ["workspaceIds", "projectIds"] as const) {
        if (Array.isArray(inputs[property]) && (inputs[property] as unknown[]).length > 0) {
          failures.push({
            property,
            reason: `${property} cannot go with global: true, which applies the set to every workspace: remove one (exclusions still apply)`,
          });
        }
      }
    }
    checkVcs(failures, news, inputs);
    checkDirectoryKept(failures, olds, news);
    const folder: FolderCheck = !kindKnown
      ? { readable: false }
      : news.vcsCheckout !== undefined && !isUnknown(news.vcsCheckout)
        ? await this.checkCheckout(failures, news, inputs)
        : await this.checkFolder(failures, olds, news, inputs);
    if (inputs.vcsRepo !== null && news.vcsCheckout === undefined) {
      inputs.policiesUnknown = isUnknown(inputs.vcsRepo)
        ? "the repository is not known until apply"
        : vcsContentUnknown(inputs.vcsRepo as VcsRepoShape, inputs.policiesPath as string | null);
    } else if (isUnknown(news.vcsCheckout)) {
      inputs.policiesUnknown = "vcsCheckout is not known until apply";
    }
    const kind = (news.kind ?? folder.kind ?? "sentinel") as PolicySetKind;
    inputs.kind = kind;
    inputs.agentEnabled = kind === "opa" || news.agentEnabled === true;
    if (kind === "opa" && news.agentEnabled === false) {
      failures.push({
        property: "agentEnabled",
        reason: "agentEnabled cannot be false for an OPA set: OPA always runs in the agent",
      });
    }
    if (kind === "sentinel" && !inputs.agentEnabled && news.overridable === true) {
      failures.push({
        property: "overridable",
        reason: "overridable applies to OPA sets and to Sentinel sets with agentEnabled: true: set agentEnabled too",
      });
    }
    if (kind === "tfpolicy") failures.push(...terraformPolicyArgumentFailures(news));
    inputs.overridable =
      kind === "tfpolicy" || (kind === "sentinel" && !inputs.agentEnabled) ? null : news.overridable === true;
    const notes: string[] = [];
    inputs.parameters = checkParameters(failures, notes, kind, news.parameters, folder.summary);
    for (const note of notes) await this.context.warn(news.__urn, note);
    await this.checkScopeIdsExist(failures, olds, inputs);
    await this.checkMemberRego(failures, olds, inputs);
    const holder = await takenNameHolder(failures, olds, inputs, this.names);
    if (holder && !inputs.adoptExisting) {
      failures.push({
        property: "name",
        reason: setNameTakenMessage(inputs as { name: string; organization: string }, holder.id),
      });
    } else if (holder && holder.kind !== kind) {
      failures.push({
        property: "kind",
        reason: `cannot adopt policy set "${String(inputs.name)}" (${holder.id}): its kind is ${holder.kind}, and this resource declares kind ${kind}`,
      });
    } else if (holder && failures.length === 0) {
      const held = await this.checkAdoption(failures, holder.id, inputs);
      // Adopting makes the set what the program declares: what that makes stricter is said as any change.
      if (held && failures.length === 0) {
        await sayWhomSetBlocks(this.context, holder.id, held, inputs as unknown as PolicySetInputs);
      }
    }
    // A create has no diff: a new set's blocking policies are said here, at check, with whom they would block.
    if (!holder && failures.length === 0 && Object.keys(olds).length === 0) {
      await sayWhomSetBlocks(this.context, undefined, undefined, inputs as unknown as PolicySetInputs);
    }
    return { inputs: stampChecked(inputs), failures };
  }

  /**
   * A set read from version control, with a local checkout of its repository: the policies path there is read as
   * the service reads the repository (whole, so `../` sources resolve), with every check a `directory` gets. What is
   * uploaded comes from commits, so nothing is hashed or packed.
   */
  private async checkCheckout(
    failures: CheckFailure[],
    news: Record<string, unknown>,
    inputs: Record<string, unknown>,
  ): Promise<FolderCheck> {
    clearFolderRecord(inputs);
    const checkout = String(news.vcsCheckout);
    const fail = (reason: string) =>
      failures.push({ property: "vcsCheckout", reason: `vcsCheckout ${checkout}: ${reason}` });
    if (inputs.vcsRepo === null) {
      fail("goes with vcsRepo: it is a local checkout of the repository a set reads from version control");
      return { readable: false };
    }
    const root = resolve(checkout);
    if (!statSync(root, { throwIfNoEntry: false })?.isDirectory()) {
      fail(`does not exist (resolved to ${root}, relative to the program's directory)`);
      return { readable: false };
    }
    const policiesPath = normalizedPoliciesPath(typeof inputs.policiesPath === "string" ? inputs.policiesPath : "");
    let files: FolderFiles;
    try {
      files = collectFolder(root).files;
    } catch (error) {
      fail((error as Error).message);
      return { readable: false };
    }
    const kind = (news.kind as PolicySetKind | undefined) ?? kindOfFolder(files, policiesPath) ?? "sentinel";
    const base = resolve(root, policiesPath);
    const underPath = new Map(
      [...files].flatMap(([path, bytes]) =>
        !policiesPath
          ? [[path, bytes]]
          : path.startsWith(`${policiesPath}/`)
            ? [[path.slice(policiesPath.length + 1), bytes]]
            : [],
      ),
    ) as FolderFiles;
    const toolVersion = String(news.policyToolVersion ?? "latest");
    inputs.checkedCommit = await headCommit(root);
    const read = await this.readFolder(
      fail,
      inputs,
      { files, kind, policiesPath, parameters: news.parameters, urn: news.__urn },
      { folder: base, files: underPath, toolVersion },
    );
    // What is compared must be what the service reads: a checkout of another repository, or of another branch (the
    // set's branch changed, the checkout kept), would let a lowered level through unseen.
    const mismatch = isUnknown(inputs.vcsRepo)
      ? undefined
      : checkoutMismatch(await checkoutIdentity(root), inputs.vcsRepo as VcsRepoShape);
    if (mismatch) inputs.policiesUnknown = `vcsCheckout ${checkout} is not shown to be what the set reads: ${mismatch}`;
    return read;
  }

  /**
   * Adopting a set compares the program with what the service holds: scope narrowed (a global set given
   * workspaces), `overridable` turned on, and the policies of its versions, which the service offers no download
   * of: a folder uploaded over them, or another repository read, cannot be compared. Memberships only grow on
   * adoption.
   */
  private async checkAdoption(
    failures: CheckFailure[],
    id: string,
    inputs: Record<string, unknown>,
  ): Promise<PolicySetOutputs | undefined> {
    const held = await this.context.client.policySets.read(id);
    const shape = shapeOf(held, String(inputs.policyToolVersion ?? "latest"));
    let policiesUnknown: string | null = null;
    let policies: Record<string, string> = {};
    if (shape.vcsRepo) {
      policiesUnknown = vcsContentUnknown(shape.vcsRepo, shape.policiesPath);
      const sameSource =
        inputs.vcsRepo !== null &&
        !isUnknown(inputs.vcsRepo) &&
        readsSameSource(
          inputs.vcsRepo as VcsRepoShape,
          inputs.policiesPath as string | null,
          shape.vcsRepo,
          shape.policiesPath,
        );
      // The checkout at the commit the set evaluates now holds exactly what the service enforces.
      if (sameSource && inputs.checkedCommit && held.currentVersionId) {
        const version = await this.context.client.policySets.readVersion(held.currentVersionId);
        if (version.commitSha === inputs.checkedCommit) {
          policiesUnknown = null;
          policies = (inputs.folderPolicies ?? {}) as Record<string, string>;
        }
      }
    } else if (held.versioned) {
      policiesUnknown =
        `its current version (${held.currentVersionId ?? "none ready"}) was made before this stack, and the ` +
        "service offers no download of a version's files";
    }
    const refusal = await this.context.judge({
      subject: `adopting policy set "${String(inputs.name)}" (${id})`,
      what: "policy set",
      before: setEnforcement({ ...shape, kind: held.kind, policyIds: [], folderPolicies: policies, policiesUnknown }),
      after: setEnforcement(inputs),
      allowedOnResource: inputs.allowWeakening === true,
      urn: inputs.__urn,
    });
    if (refusal) failures.push({ property: "", reason: refusal });
    // What the adoption starts from: the set as the service holds it, what its versions enforce where it is known.
    return {
      ...shape,
      organization: inputs.organization,
      kind: held.kind,
      folderPolicies: policies,
      policiesUnknown,
    } as unknown as PolicySetOutputs;
  }

  /**
   * Reads the folder as the service will, checks its Rego with `opa`, and packs it when its content changed (the
   * size the service counts is the archive's); sets `contentHash` and `folderPolicies`.
   */
  private async checkFolder(
    failures: CheckFailure[],
    olds: Record<string, unknown>,
    news: Record<string, unknown>,
    inputs: Record<string, unknown>,
  ): Promise<FolderCheck> {
    clearFolderRecord(inputs);
    const directory = news.directory;
    if (directory === undefined || isUnknown(directory)) {
      if (isUnknown(directory)) {
        inputs.contentHash = directory;
        inputs.policiesUnknown = "directory is not known until apply";
      }
      return { readable: directory === undefined };
    }
    const fail = (reason: string) =>
      failures.push({ property: "directory", reason: `directory ${String(directory)}: ${reason}` });
    if (typeof directory !== "string" || directory === "") {
      fail("must be the path of the policy set's folder");
      return { readable: false };
    }
    const path = resolve(directory);
    if (!statSync(path, { throwIfNoEntry: false })?.isDirectory()) {
      fail(`does not exist (resolved to ${path}, relative to the program's directory)`);
      return { readable: false };
    }
    let prepared: PreparedFolder;
    try {
      prepared = await prepareFolder(path, news.kind as PolicySetKind | undefined);
    } catch (error) {
      fail((error as Error).message);
      return { readable: false };
    }
    for (const problem of prepared.problems) fail(problem);
    if (prepared.problems.length > 0) return { readable: false };
    const { files, kind } = prepared;
    inputs.contentHash = prepared.contentHash;
    inputs.contentFiles = fileDigests(files);
    if (prepared.contentHash !== olds.contentHash) {
      // What a reviewer should see: the upload carries these files from outside the folder.
      const label = `policy set "${String(news.name)}": directory ${directory}`;
      for (const link of prepared.externalLinks) {
        await this.context.warn(
          news.__urn,
          `${label}: ${link.path} links out of the folder, to ${link.target}; its content is uploaded`,
        );
      }
      for (const brought of prepared.broughtIn) {
        await this.context.warn(
          news.__urn,
          `${label}: source ${brought.source} is outside the folder; ${brought.from} is uploaded as ${brought.path}`,
        );
      }
      const archive = packFiles(files);
      const tooLarge = policySetArchiveSizeProblem(archiveSize(files, archive));
      if (tooLarge) {
        fail(tooLarge);
        return { readable: false };
      }
      this.packedArchives.set(prepared.contentHash, archive);
    }
    const recorded = olds.folderPolicies;
    if (
      kind === "sentinel" &&
      prepared.contentHash === olds.contentHash &&
      olds.kind === kind &&
      typeof recorded === "object" &&
      recorded !== null &&
      Object.keys(recorded).length > 0
    ) {
      // The content an earlier up read and recorded: reading it again (its HCL parsed, every source resolved) finds
      // the same policies, so a no-change preview costs a hash of the folder. OPA sets are read every time: their
      // Rego check depends on the opa installed.
      inputs.folderPolicies = recorded;
      return { readable: true, compared: true, kind };
    }
    const toolVersion = String(news.policyToolVersion ?? "latest");
    return this.readFolder(
      fail,
      inputs,
      { files, kind, policiesPath: "", parameters: news.parameters, urn: news.__urn },
      { folder: path, files, toolVersion },
    );
  }

  /**
   * The set's folder read as the service reads it, and its Rego checked: its policies are then what a later change
   * is compared with; a folder that cannot be read says so and is compared with nothing.
   */
  private async readFolder(
    fail: (reason: string) => void,
    inputs: Record<string, unknown>,
    set: { files: FolderFiles; kind: PolicySetKind; policiesPath: string; parameters: unknown; urn: unknown },
    rego: { folder: string; files: FolderFiles; toolVersion: string },
  ): Promise<FolderCheck> {
    if (set.kind === "tfpolicy") {
      const read = await checkTfPolicyFolder(set.files, set.policiesPath, set.parameters, fail, (warning) =>
        this.context.warn(set.urn, warning),
      );
      if (!read) return { readable: false, kind: set.kind };
      inputs.folderPolicies = read.summary.policies;
      inputs.policyBlocks = read.blocks;
      return { readable: true, compared: true, kind: set.kind, summary: read.summary };
    }
    try {
      const summary = await readPolicySetFolder(set.files, set.kind, set.policiesPath, { parseSentinel: true });
      inputs.folderPolicies = summary.policies;
      if (set.kind === "opa") await this.checkRego(fail, rego.folder, rego.files, rego.toolVersion, summary.queries);
      let testsRequired: boolean;
      try {
        testsRequired = this.context.requirePolicyTests;
      } catch (error) {
        // A spelling the setting does not take is refused, and the tests are judged as if it asked for certainty.
        fail((error as Error).message);
        testsRequired = true;
      }
      const tests = await judgeFolderTests(rego.folder, regoVersionOfRuntime(rego.toolVersion), testsRequired);
      if (tests.refusal) fail(tests.refusal);
      const source = inputs.vcsCheckout
        ? `vcsCheckout ${String(inputs.vcsCheckout)}`
        : `directory ${String(inputs.directory)}`;
      if (tests.warning)
        await this.context.warn(set.urn, `policy set "${String(inputs.name)}": ${source}: ${tests.warning}`);
      return { readable: true, compared: true, kind: set.kind, summary };
    } catch (error) {
      if (!(error instanceof PolicySetFolderError)) throw error;
      for (const problem of error.problems) fail(problem);
      return { readable: false, kind: set.kind };
    }
  }

  /**
   * `opa check` of every Rego file of the folder together (so packages shared across files resolve) in the dialect
   * the set's runtime reads, then each policy block's query against the rules they define. A file only the other
   * dialect reads is named with both fixes.
   */
  private async checkRego(
    fail: (reason: string) => void,
    folder: string,
    files: FolderFiles,
    toolVersion: string,
    queries: { at: string; query: string }[],
  ) {
    const opa = await Opa.find();
    if (!opa) {
      this.context.missingChecker(fail, "Rego", "no opa binary on PATH");
      return;
    }
    const rego = [...files.keys()].filter((path) => path.endsWith(".rego") && !path.endsWith("_test.rego"));
    const dialect = regoVersionOfRuntime(toolVersion);
    const problems = await opa.check(rego, dialect, folder);
    for (const problem of problems) {
      const where = problem.location ? `${problem.location.file}:${problem.location.row}: ` : "";
      fail(
        `${where}${problem.code}: ${problem.message} (opa check, Rego ${dialect} for policyToolVersion ${toolVersion})`,
      );
    }
    const words = policyToolVersionWords(toolVersion);
    for (const advice of await dialectAdvice(opa, rego, problems, dialect, folder, words)) fail(advice);
    if (problems.length > 0) return;
    for (const problem of await queryProblems(opa, rego, dialect, folder, queries)) fail(problem);
  }

  /**
   * An OPA set of policies whose runtime reads Rego v1 (a pinned 1.x): the code of each member policy is checked in
   * that dialect when the runtime moves there or the policy joins, as the service would evaluate it. One download
   * per such policy; a policy whose code only the other dialect reads fails preview, naming it.
   */
  private async checkMemberRego(
    failures: CheckFailure[],
    olds: Record<string, unknown>,
    inputs: Record<string, unknown>,
  ) {
    if (failures.length > 0 || inputs.kind !== "opa" || !Array.isArray(inputs.policyIds)) return;
    const toolVersion = String(inputs.policyToolVersion);
    const dialect = regoVersionOfRuntime(toolVersion);
    const dialectBefore =
      olds.kind === "opa" ? regoVersionOfRuntime(String(olds.policyToolVersion ?? "latest")) : undefined;
    const held = dialectBefore === dialect && Array.isArray(olds.policyIds) ? (olds.policyIds as unknown[]) : [];
    const toCheck = inputs.policyIds.filter(
      (id): id is string => typeof id === "string" && !isUnknown(id) && !held.includes(id),
    );
    if (toCheck.length === 0 || dialect === "v0") return;
    const opa = await Opa.find();
    if (!opa) {
      this.context.missingChecker((reason) => failures.push({ property: "", reason }), "Rego", "no opa binary on PATH");
      return;
    }
    const client = this.context.client;
    for (const policyId of toCheck) {
      const [policy, code] = await Promise.all([
        client.policies.read(policyId).catch(() => undefined),
        client.policies.download(policyId).catch(() => undefined),
      ]);
      if (!policy || !code) continue; // A missing policy is reported by its own resource, or by the service.
      const directory = mkdtempSync(join(tmpdir(), "tfe-governance-member-rego-"));
      try {
        writeFileSync(join(directory, "policy.rego"), code);
        const problems = await opa.check(["policy.rego"], dialect, directory);
        if (problems.length === 0) continue;
        const first = problems[0] as { code: string; message: string; location?: { row: number } };
        failures.push({
          property: "",
          reason:
            `policyToolVersion ${toolVersion} reads Rego ${dialect}, and policy ${policyId} ("${policy.name}") does not ` +
            `read in it (line ${first.location?.row ?? "?"}: ${first.code}: ${first.message}): add import rego.v1 ` +
            "to its code (it then reads in both), or keep a 0.x runtime",
        });
      } finally {
        rmSync(directory, { recursive: true, force: true });
      }
    }
  }

  /**
   * Every workspace and project id the change adds to the scope exists and is visible to this token: one read
   * each, so a typo fails preview naming the id rather than a 422 half-way through `up`.
   */
  private async checkScopeIdsExist(
    failures: CheckFailure[],
    olds: Record<string, unknown>,
    inputs: Record<string, unknown>,
  ) {
    if (failures.length > 0) return;
    const reads: Promise<void>[] = [];
    for (const property of scopeOptions) {
      const ids = inputs[property];
      if (!Array.isArray(ids)) continue;
      const before = Array.isArray(olds[property]) ? (olds[property] as string[]) : [];
      const kind = property === "workspaceIds" || property === "excludedWorkspaceIds" ? "workspaces" : "projects";
      for (const id of ids) {
        if (isUnknown(id) || before.includes(id)) continue;
        reads.push(
          this.scopeIdExists(kind, id).then((exists) => {
            if (exists) return;
            failures.push({
              property,
              reason:
                `${property}: ${kind === "workspaces" ? "workspace" : "project"} ${id} does not exist in organization ` +
                `"${String(inputs.organization)}", or this token cannot see it: check the id (a name is not an id)`,
            });
          }),
        );
      }
    }
    await Promise.all(reads);
  }

  private scopeIdExists(kind: "workspaces" | "projects", id: string): Promise<boolean> {
    let found = this.foundScopeIds.get(id);
    if (!found) {
      found = this.context.client[kind].read(id).then(
        () => true,
        (error: unknown) => {
          if (error instanceof TfeApiError && error.status === 404) return false;
          throw error;
        },
      );
      this.foundScopeIds.set(id, found);
    }
    return found;
  }
}

/** What a folder check records, empty until a folder is read: a set of policies has none of it. */
function clearFolderRecord(inputs: Record<string, unknown>): void {
  inputs.contentHash = null;
  inputs.contentFiles = {};
  inputs.folderPolicies = {};
  inputs.policyBlocks = {};
  inputs.policiesUnknown = null;
  inputs.checkedCommit = null;
}
