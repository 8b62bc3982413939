import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { type PolicySetKind, policySetKinds } from "../contract/policies";
import { folderLevels } from "../policy-code/folder-levels";
import { kindOfFolder, PolicySetFolderError } from "../policy-code/policy-set-folder";
import { type Enforcement, weakenings } from "../resources/guard";
import { prepareFolder } from "../resources/policy-set/folder";
import { checkFolderUsage } from "./check-folder-usage";

// `tfe-governance check-folder`: the guard of a PolicySet, for a policy-set folder before it merges. A set read from
// version control takes every push at once, so a preview of the stack that declares it comes too late: the library
// repository's own CI compares the folder of the change with the folder of its base (a checkout of the target
// branch), with the same comparison PolicySet makes at preview.

export async function checkFolderMain(
  args: string[],
  io: { out: NodeJS.WritableStream; log: (line: string) => void },
): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      against: { type: "string" },
      kind: { type: "string" },
      parameter: { type: "string", multiple: true },
      "allow-weakening": { type: "boolean" },
      help: { type: "boolean" },
    },
    strict: true,
  });
  if (values.help) {
    io.out.write(`${checkFolderUsage}\n`);
    return 0;
  }
  const [folder] = positionals;
  if (!folder || !values.against || positionals.length > 1) {
    io.log("check-folder takes one folder and --against <folder>: tfe-governance check-folder --help");
    return 2;
  }
  if (values.kind !== undefined && !policySetKinds.includes(values.kind as PolicySetKind)) {
    io.log(`--kind ${values.kind} is not a kind of policy set: use ${policySetKinds.join(", ")}`);
    return 2;
  }
  const parameters: Record<string, string> = {};
  for (const entry of values.parameter ?? []) {
    const at = entry.indexOf("=");
    if (at < 1) {
      io.log(`--parameter ${entry}: write it as key=value`);
      return 2;
    }
    parameters[entry.slice(0, at)] = entry.slice(at + 1);
  }
  const read = async (path: string): Promise<Enforcement | string> => {
    try {
      const prepared = await prepareFolder(resolve(path), values.kind as PolicySetKind | undefined);
      if (prepared.problems.length > 0) return `${path}: ${prepared.problems.join("; ")}`;
      const kind = (values.kind as PolicySetKind | undefined) ?? kindOfFolder(prepared.files) ?? "sentinel";
      const { policies, blocks } = await folderLevels(prepared.files, kind, { parameters });
      return {
        kind,
        policies,
        blocks: Object.fromEntries(
          blocks.map((block) => [
            block.address,
            { enforce: block.enforce, operations: block.operations, filter: block.filter },
          ]),
        ),
      };
    } catch (error) {
      const problems = error instanceof PolicySetFolderError ? error.problems : [(error as Error).message];
      return `${path} cannot be read: ${problems.join("; ")}`;
    }
  };
  const [after, before] = [await read(folder), await read(values.against)];
  if (typeof after === "string" || typeof before === "string") {
    for (const problem of [after, before]) if (typeof problem === "string") io.log(problem);
    return 2;
  }
  const findings = weakenings(before, after, "policy set");
  if (findings.length === 0) {
    io.out.write(
      `${folder} enforces at least what ${values.against} does: ${Object.keys(after.policies).length} policies\n`,
    );
    return 0;
  }
  for (const finding of findings) {
    io.out.write(`${finding.uncomparable ? "cannot be compared" : "weakens"}: ${finding.text}\n`);
  }
  if (values["allow-weakening"]) return 0;
  io.log(
    `${folder} weakens governance against ${values.against} (${findings.length} above): if that is intended, ` +
      "run again with --allow-weakening, and the stack's preview will ask for its own approval too",
  );
  return 1;
}
