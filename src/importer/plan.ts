import { reasonWithoutNotice } from "../contract/module-versions";
import { policyNamePattern } from "../contract/policies";
import { renderFolders } from "./folder";
import {
  codeExtension,
  type GeneratedProject,
  type ImportedDeprecation,
  type ImportedPolicy,
  type ImportReport,
  type ImportSource,
  type Layout,
  type LibraryDependency,
  type UsablePolicy,
} from "./model";
import { camelCase, FileNameAllocator, IdentifierAllocator } from "./names";
import { type DeclaredDeprecation, type DeclaredPolicy, renderProgramProject } from "./program";
import { renderReadme } from "./readme";

/**
 * The project for `source`, as files in memory: nothing here touches the disk or the network, so a second run
 * against an unchanged organization yields the same bytes, and the caller can compare before writing.
 */
export function planProject(source: ImportSource, layout: Layout, library: LibraryDependency): GeneratedProject {
  const report: ImportReport = { layout, policies: [], deprecations: [], folders: [], skipped: [], notes: [] };
  const usable = usablePolicies(source.policies, report);
  const files = new Map<string, Buffer>();
  // One scope: the program declares policies and deprecations side by side.
  const identifiers = new IdentifierAllocator();
  let declared: Parameters<typeof renderProgramProject>[1];
  if (layout === "program") {
    const policies = declarePolicies(usable, identifiers, report);
    for (const policy of policies) files.set(policy.codeFile, policy.code);
    declared = { policies };
  } else {
    for (const [path, content] of renderFolders(usable, report)) files.set(path, content);
    declared = {
      folders: report.folders.map((folder) => ({
        resourceName: folder.path.slice(folder.path.lastIndexOf("/") + 1),
        directory: folder.path,
        policySetIds: folder.policySetIds,
        descriptions: folder.descriptions,
      })),
    };
  }
  const deprecations = declareDeprecations(source.deprecations, identifiers, report);
  for (const [path, text] of renderProgramProject(source, declared, deprecations, library))
    files.set(path, Buffer.from(text));
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
  policies: readonly UsablePolicy[],
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
