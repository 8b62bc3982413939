import { reasonWithoutNotice } from "../contract/module-versions";
import { policyNamePattern } from "../contract/policies";
import { regoVersionOfRuntime } from "../policy-code/rego";
import { libraryVersion } from "../process/package-version";
import { namesCredential } from "../resources/policy-set/arguments";
import type { DeclaredDeprecation, DeclaredPolicy, DeclaredPolicySet, ProgramDeclared } from "./declarations";
import { policySetsDirectory, renderFolders } from "./folder";
import {
  codeExtension,
  type GeneratedProject,
  type ImportedDeprecation,
  type ImportedPolicy,
  type ImportedPolicySet,
  type ImportReport,
  type ImportSource,
  type Language,
  type Layout,
  type LibraryDependency,
  type UsablePolicy,
} from "./model";
import { camelCase, DistinctNames, FileNameAllocator, folderNameOf, IdentifierAllocator } from "./names";
import { renderProgramProject } from "./program";
import { renderPythonProject } from "./program-python";
import { renderYamlProject } from "./program-yaml";
import { renderReadme } from "./readme";

/**
 * The project for `source`, as files in memory: nothing here touches the disk or the network, so a second run
 * against an unchanged organization yields the same bytes, and the caller can compare before writing.
 */
export function planProject(
  source: ImportSource,
  layout: Layout,
  library: LibraryDependency,
  language: Language = "typescript",
): GeneratedProject {
  const report: ImportReport = {
    layout,
    language,
    policies: [],
    policySets: [],
    deprecations: [],
    folders: [],
    skipped: [...source.excluded],
    notes: [],
  };
  const usable = usablePolicies(source.policies, report);
  const files = new Map<string, Buffer>();
  // One scope: the program declares policies, sets and deprecations side by side.
  const identifiers = new IdentifierAllocator();
  // Sets that hold policies own those memberships (one owner per relationship): in the program layout the set
  // lists its policies, in the folder layout each folder's policies name their sets.
  const setNames = new Map(source.policySets.map((policySet) => [policySet.id, policySet.name]));
  const policySets = declarePolicySets(source.policySets, identifiers, report, layout);
  const setIdentifierOf = new Map(policySets.map((policySet) => [policySet.id, policySet.identifier]));
  let declared: ProgramDeclared;
  // An OPA policy's Rego is read by the runtime of its sets: v1 only where every one of them pins OPA 1.x.
  const runtimeOf = new Map(source.policySets.map((policySet) => [policySet.id, policySet.policyToolVersion]));
  const regoVersionOf = (setIds: readonly string[]) =>
    setIds.length > 0 && setIds.every((id) => regoVersionOfRuntime(runtimeOf.get(id) ?? "latest") === "v1")
      ? ("v1" as const)
      : undefined;
  if (layout === "program") {
    const ownedBySets = new Set(policySets.filter((set) => !set.versioned && !set.vcs).map((set) => set.id));
    const policies = declarePolicies(
      usable.map((policy) => ({
        ...policy,
        policySetIds: policy.policySetIds.filter((id) => !ownedBySets.has(id)),
        ...(policy.kind === "opa" && regoVersionOf(policy.policySetIds) ? { regoVersion: "v1" as const } : {}),
      })),
      identifiers,
      report,
    );
    for (const policy of policies) files.set(policy.codeFile, policy.code);
    const constantOf = new Map(policies.map((policy) => [policy.id, policy.identifier]));
    for (const policySet of policySets) {
      if (policySet.versioned || policySet.vcs) continue;
      policySet.members = policySet.policyIds.flatMap((id) => constantOf.get(id) ?? []);
      const outside = policySet.policyIds.filter((id) => !constantOf.has(id));
      if (outside.length > 0) {
        report.notes.push({
          name: `policy set ${policySet.name}`,
          note:
            `holds ${outside.join(", ")}, which the project does not declare: the set keeps them, and no run of this ` +
            "project takes them out (a membership it does not declare is not its own)",
        });
      }
    }
    declared = { policies, policySets };
  } else {
    for (const [path, content] of renderFolders(usable, report, setNames)) files.set(path, content);
    declared = {
      policySets,
      folders: report.folders.map((folder) => ({
        resourceName: folder.path.slice(folder.path.lastIndexOf("/") + 1),
        directory: folder.path,
        policySetIds: folder.policySetIds,
        ...(folder.kind === "opa" && regoVersionOf(folder.policySetIds) ? { regoVersion: "v1" as const } : {}),
        setIdentifiers: Object.fromEntries(
          folder.policySetIds.flatMap((id) =>
            setIdentifierOf.has(id) ? [[id, setIdentifierOf.get(id) as string]] : [],
          ),
        ),
        descriptions: folder.descriptions,
      })),
    };
  }
  const deprecations = declareDeprecations(source.deprecations, identifiers, report);
  const project =
    language === "yaml"
      ? renderYamlProject(source, declared, deprecations)
      : language === "python"
        ? renderPythonProject(source, declared, deprecations, libraryVersion)
        : renderProgramProject(source, declared, deprecations, library);
  for (const [path, text] of project) files.set(path, Buffer.from(text));
  files.set("README.md", Buffer.from(renderReadme(source, report, library)));
  return { files, report };
}

/**
 * Names in a fixed order, ignoring letter case, so that of `require-tags` and `Require-Tags` the lowercase one
 * (sorted last by code point) comes first and keeps the plain identifier and file name.
 */
function byName<T extends { name: string }>(a: T, b: T): number {
  const [lowerA, lowerB] = [a.name.toLowerCase(), b.name.toLowerCase()];
  if (lowerA !== lowerB) return lowerA < lowerB ? -1 : 1;
  return a.name < b.name ? 1 : a.name > b.name ? -1 : 0;
}

/** Why the project cannot hold `policy`, and what to do; undefined when it can. */
function reasonToLeaveOut(policy: ImportedPolicy): string | undefined {
  if (!policyNamePattern.test(policy.name)) {
    return (
      "its name holds characters other than letters, digits, '-' and '_', which the Policy resource refuses: " +
      "create it again under such a name, then run the import again"
    );
  }
  if (policy.code === null) {
    return (
      "the service holds no code for it, and a Policy needs code: upload its code (or delete the policy), " +
      "then run the import again"
    );
  }
  return undefined;
}

function usablePolicies(policies: readonly ImportedPolicy[], report: ImportReport): UsablePolicy[] {
  const usable: UsablePolicy[] = [];
  for (const policy of [...policies].sort(byName)) {
    const reason = reasonToLeaveOut(policy);
    if (reason !== undefined) {
      report.skipped.push({ name: policy.name, reason });
      continue;
    }
    if (policy.enforcementLevel === null) {
      report.notes.push({
        name: policy.name,
        note:
          "the service reports no enforcement level; the project leaves it out, so the Policy's default applies " +
          "and the first up sets it",
      });
    }
    // Policies without code were left out just above.
    usable.push({ ...policy, code: policy.code! });
  }
  return usable;
}

function declarePolicies(
  policies: readonly (UsablePolicy & { regoVersion?: "v1" })[],
  identifiers: IdentifierAllocator,
  report: ImportReport,
): DeclaredPolicy[] {
  const fileNames = new FileNameAllocator();
  return policies.map((policy) => {
    const { identifier, change } = identifiers.allocate(camelCase([policy.name]), "policy");
    if (change) report.notes.push({ name: policy.name, note: `its constant is ${identifier}: ${change}` });
    const file = fileNames.allocate(policy.name, codeExtension(policy.kind));
    if (file.change) report.notes.push({ name: policy.name, note: `its code is in ${file.fileName}: ${file.change}` });
    const codeFile = `policies/${file.fileName}`;
    report.policies.push({ name: policy.name, id: policy.id, kind: policy.kind, file: codeFile });
    return { ...policy, identifier, codeFile };
  });
}

/** Each set as the program declares it: a constant, where its content comes from, a config key per secret. */
function declarePolicySets(
  policySets: readonly ImportedPolicySet[],
  identifiers: IdentifierAllocator,
  report: ImportReport,
  layout: Layout,
): DeclaredPolicySet[] {
  // One config key per secret across every set: `prod-eu` + `token` and `prod` + `eu-token` would both be
  // prod-eu-token, and one secret would then go to two sets. Letters, digits, `-` and `_` only: a dot in a key
  // is read by Pulumi YAML as a path, and its config would never be found.
  const configKeys = new DistinctNames();
  const configKeyOf = (setName: string, parameter: string) => {
    const base = `${setName}-${parameter}`.replace(/[^A-Za-z0-9_-]+/g, "-");
    const key = configKeys.take(base);
    if (key !== base) {
      report.notes.push({
        name: setName,
        note: `parameter ${parameter}'s secret is config key ${key}: another set's parameter has the key ${base}`,
      });
    }
    return key;
  };
  // One folder per uploaded set, distinct where two names read as one (`a b`, `a-b`) on any file system.
  const folders = new DistinctNames();
  const folderOf = (setName: string) => folders.take(folderNameOf(setName));
  return policySets.map((policySet) => {
    const { identifier } = identifiers.allocate(camelCase([policySet.name, "set"]), "set");
    const holds = policySet.vcs ? "version control" : policySet.versioned ? "folder" : "policies";
    const directory = holds === "folder" ? `${policySetsDirectory}/${folderOf(policySet.name)}` : undefined;
    // A credential-named parameter the service holds in plain text becomes secret config too, as PolicySet's own
    // rule requires: its value is never written into the project.
    const secretConfig = policySet.parameters
      .filter((parameter) => parameter.sensitive || namesCredential(parameter.key))
      .map((parameter) => ({
        key: configKeyOf(policySet.name, parameter.key),
        parameter: parameter.key,
        ...(parameter.sensitive ? {} : { plainOnService: true as const }),
      }));
    report.policySets.push({
      name: policySet.name,
      id: policySet.id,
      kind: policySet.kind,
      holds: layout === "folder" && holds === "policies" ? "policies (of its folders)" : holds,
      secretConfig,
      ...(directory !== undefined ? { directory } : {}),
    });
    return { ...policySet, identifier, members: [], secretConfig, ...(directory !== undefined ? { directory } : {}) };
  });
}

function declareDeprecations(
  deprecations: readonly ImportedDeprecation[],
  identifiers: IdentifierAllocator,
  report: ImportReport,
): DeclaredDeprecation[] {
  return deprecations.map((deprecation) => {
    const { moduleName, moduleProvider, version } = deprecation;
    const resourceName = `${moduleName}-${moduleProvider}-${version}`;
    const candidate = `${camelCase([moduleName, moduleProvider])}V${version.replace(/[^A-Za-z0-9]/g, "_")}`;
    const { identifier } = identifiers.allocate(candidate, "module");
    // Left in, the notice would be sent back and appended again at the next change of the reason or link.
    const stripped = reasonWithoutNotice(deprecation.reason);
    report.deprecations.push({
      resourceName,
      moduleVersion: `${deprecation.organization}/${moduleName}/${moduleProvider}/${version}`,
    });
    return {
      ...deprecation,
      resourceName,
      identifier,
      reason: stripped.trim() === "" ? deprecation.reason : stripped,
      link: deprecation.link === "" ? null : deprecation.link,
    };
  });
}
