import type { PolicyKind } from "../contract/policies";
import { codeExtension, type ImportReport } from "./model";
import { FileNameAllocator } from "./names";
import type { UsablePolicy } from "./plan";

/** Where the folder layout puts its folders, relative to the output directory. */
export const policySetsDirectory = "policy-sets";

/**
 * An HCL quoted string. HCL takes JSON's escapes except `\b` and `\f`, and reads `${` and `%{` as template
 * sequences, which `$${` and `%%{` escape.
 */
export function hclString(value: string): string {
  const hclEscapes: Record<string, string> = { "\\b": "\\u0008", "\\f": "\\u000c", "${": "$${", "%{": "%%{" };
  // Escape pairs are matched whole, so the `b` of an escaped backslash followed by `b` is left alone.
  return JSON.stringify(value).replace(/\\[\s\S]|\$\{|%\{/g, (match) => hclEscapes[match] ?? match);
}

interface FolderGroup {
  kind: PolicyKind;
  policySetIds: string[];
  policies: UsablePolicy[];
}

/**
 * One folder per kind and set of policy sets, so that each folder is what a policy set of the service holds
 * (one kind only) and every policy in it shares the same `policySetIds` when the folder is declared.
 */
function groupPolicies(policies: readonly UsablePolicy[]): Map<string, FolderGroup> {
  const groups = new Map<string, FolderGroup>();
  for (const policy of policies) {
    const policySetIds = [...policy.policySetIds].sort();
    const folder = `${policySetIds.join("+") || "no-policy-set"}-${policy.kind}`;
    const group = groups.get(folder) ?? { kind: policy.kind, policySetIds, policies: [] };
    group.policies.push(policy);
    groups.set(folder, group);
  }
  return new Map([...groups].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function policyBlock(name: string, attributes: [string, string | null][]): string {
  const present = attributes.filter((entry): entry is [string, string] => entry[1] !== null);
  const width = Math.max(...present.map(([key]) => key.length));
  const lines = present.map(([key, value]) => `  ${key.padEnd(width)} = ${hclString(value)}`);
  return [`policy ${hclString(name)} {`, ...lines, "}"].join("\n");
}

/**
 * Whether the folder file can hold a policy's description so that PolicyFolder reads it back unchanged: policies.hcl
 * takes a `description`, sentinel.hcl does not; and text with `${` or `%{` would come back as an HCL template.
 */
function describableInFile(kind: PolicyKind, description: string): boolean {
  return kind === "opa" && !/\$\{|%\{/.test(description);
}

/**
 * The folder layout: `policy-sets/<folder>/sentinel.hcl` with `<name>.sentinel` files, or `policies.hcl` with
 * `<name>.rego` files, in the service's own policy-set folder format. Returns path → content.
 */
export function renderFolders(policies: readonly UsablePolicy[], report: ImportReport): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  for (const [folder, group] of groupPolicies(policies)) {
    const directory = `${policySetsDirectory}/${folder}`;
    const fileNames = new FileNameAllocator();
    const blocks: string[] = [];
    const descriptions: Record<string, string> = {};
    for (const policy of group.policies) {
      const file = fileNames.allocate(policy.name, codeExtension(policy.kind));
      if (file.change) {
        report.notes.push({ name: policy.name, note: `its code is in ${file.fileName}: ${file.change}` });
      }
      files.set(`${directory}/${file.fileName}`, policy.code);
      report.policies.push({
        name: policy.name,
        id: policy.id,
        kind: policy.kind,
        file: `${directory}/${file.fileName}`,
      });
      const inFile = policy.description !== null && describableInFile(group.kind, policy.description);
      if (policy.description !== null && !inFile) descriptions[policy.name] = policy.description;
      blocks.push(
        policyBlock(policy.name, [
          // OPA folders name no file: every .rego file of the folder is loaded, and the query picks the rule.
          ["source", group.kind === "sentinel" ? `./${file.fileName}` : null],
          ["description", inFile ? policy.description : null],
          ["query", group.kind === "opa" ? policy.query : null],
          ["enforcement_level", policy.enforcementLevel],
        ]),
      );
    }
    noteSharedQueries(group, report);
    report.folders.push({
      path: directory,
      kind: group.kind,
      policySetIds: group.policySetIds,
      policyCount: group.policies.length,
      descriptions,
    });
    const configuration = group.kind === "sentinel" ? "sentinel.hcl" : "policies.hcl";
    files.set(`${directory}/${configuration}`, Buffer.from(`${blocks.join("\n\n")}\n`));
  }
  return files;
}

/**
 * The service evaluates each API-managed OPA policy on its own code; a folder loads all its `.rego` files together,
 * so two policies with the same query would each see the other's rules there.
 */
function noteSharedQueries(group: FolderGroup, report: ImportReport): void {
  if (group.kind !== "opa") return;
  const byQuery = new Map<string, string[]>();
  for (const policy of group.policies) {
    if (policy.query !== null) byQuery.set(policy.query, [...(byQuery.get(policy.query) ?? []), policy.name]);
  }
  for (const [query, names] of byQuery) {
    if (names.length < 2) continue;
    for (const name of names) {
      report.notes.push({
        name,
        note:
          `shares the query ${query} with ${names.filter((other) => other !== name).join(", ")}; a folder loads every ` +
          ".rego file together, so each would see the others' rules: give each its own package before using the folder",
      });
    }
  }
}
