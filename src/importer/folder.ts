import type { PolicyKind } from "../contract/policies";
import { codeExtension, type ImportReport, type UsablePolicy } from "./model";
import { FileNameAllocator, folderNameOf } from "./names";

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

/** The package an OPA policy's code declares, or undefined where none is found. */
function regoPackage(code: Buffer): string | undefined {
  return /^\s*package\s+([\w.]+)/m.exec(code.toString("utf8"))?.[1];
}

/**
 * One folder per kind and set of policy sets, so that each folder is what a policy set of the service holds
 * (one kind only) and every policy in it shares the same `policySetIds` when the folder is declared. A folder loads
 * all its `.rego` files together, while the service evaluates each API-managed OPA policy on its own code: two
 * policies of one package (the same query, or rules of one name) would see each other's rules, or clash, so the
 * second goes to a folder of its own (`-2`, `-3`...).
 */
function groupPolicies(
  policies: readonly UsablePolicy[],
  report: ImportReport,
  setNames: ReadonlyMap<string, string>,
): Map<string, FolderGroup> {
  const groups = new Map<string, FolderGroup & { packages: Map<string, string> }>();
  for (const policy of policies) {
    const policySetIds = [...policy.policySetIds].sort();
    // Named after the sets (a set holds one kind), by id where the import did not read the set.
    const names = policySetIds.map((id) => folderNameOf(setNames.get(id) ?? id)).sort();
    const base = names.length > 0 ? names.join("+") : `no-policy-set-${policy.kind}`;
    const regoPackageName = policy.kind === "opa" ? regoPackage(policy.code) : undefined;
    let folder = base;
    for (let suffix = 2; regoPackageName && groups.get(folder)?.packages.has(regoPackageName); suffix++) {
      folder = `${base}-${suffix}`;
    }
    if (folder !== base && regoPackageName) {
      const sharer = groups.get(base)?.packages.get(regoPackageName);
      report.notes.push({
        name: policy.name,
        note:
          `shares the Rego package ${regoPackageName} with ${sharer}; a folder loads every .rego file together, so ` +
          `it has a folder of its own (${folder})`,
      });
    }
    const group = groups.get(folder) ?? {
      kind: policy.kind,
      policySetIds,
      policies: [] as UsablePolicy[],
      packages: new Map<string, string>(),
    };
    group.policies.push(policy);
    if (regoPackageName) group.packages.set(regoPackageName, policy.name);
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
 * takes a `description`, sentinel.hcl does not; text with `${` or `%{` would come back as an HCL template, and white
 * space around it (a trailing newline) trimmed, so that adopting would write a PATCH.
 */
function describableInFile(kind: PolicyKind, description: string): boolean {
  return kind === "opa" && !/\$\{|%\{/.test(description) && description === description.trim();
}

/**
 * The folder layout: `policy-sets/<folder>/sentinel.hcl` with `<name>.sentinel` files, or `policies.hcl` with
 * `<name>.rego` files, in the service's own policy-set folder format. Returns path → content.
 */
export function renderFolders(
  policies: readonly UsablePolicy[],
  report: ImportReport,
  setNames: ReadonlyMap<string, string> = new Map(),
): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  for (const [folder, group] of groupPolicies(policies, report, setNames)) {
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
