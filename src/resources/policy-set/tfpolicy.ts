import { isObject } from "../../policy-code/hcl";
import type { FolderFiles, PolicySetFolderSummary } from "../../policy-code/policy-set-folder";
import { readTfPolicyFolder, type TfPolicyBlock } from "../../policy-code/tfpolicy";
import type { PolicyBlockShape } from "../guard";
import { type CheckFailure, isUnknown } from "../provider-context";

/**
 * A Terraform policy set's folder read at preview with every check of its schema, its levels resolved from the
 * set's parameters (a value not known yet resolves nothing). Problems fail the check; warnings are said.
 */
export async function checkTfPolicyFolder(
  files: FolderFiles,
  policiesPath: string,
  parameters: unknown,
  fail: (problem: string) => void,
  warn: (warning: string) => Promise<void>,
): Promise<{ summary: PolicySetFolderSummary; blocks: Record<string, PolicyBlockShape> } | undefined> {
  const given = parameterValues(parameters);
  const secretParameters = new Set(
    isObject(parameters) && !isUnknown(parameters)
      ? Object.entries(parameters)
          .filter(([, entry]) => isObject(entry) && entry.sensitive === true)
          .map(([key]) => key)
      : [],
  );
  const folder = await readTfPolicyFolder(files, { parameters: given, policiesPath, secretParameters });
  for (const problem of folder.problems) fail(problem);
  for (const warning of folder.warnings) await warn(warning);
  for (const [name, declarations] of folder.inputs) {
    const entry = isObject(parameters) ? parameters[name] : undefined;
    const sensitiveInput = declarations.find((declaration) => declaration.sensitive);
    if (sensitiveInput && isObject(entry) && !isUnknown(entry) && entry.sensitive === false) {
      fail(
        `input "${name}" is sensitive (${sensitiveInput.file}), and parameters.${name} is no secret: pass it as ` +
          "pulumi.secret(...) or config.requireSecret(...), so it is sent as sensitive and never stored in plain text",
      );
    }
  }
  if (folder.problems.length > 0) return undefined;
  return {
    summary: {
      policies: Object.fromEntries(folder.blocks.map((block) => [block.address, block.level])),
      params: [...folder.inputs.keys()],
      queries: [],
    },
    blocks: Object.fromEntries(folder.blocks.map((block) => [block.address, shapeOf(block)])),
  };
}

function shapeOf(block: TfPolicyBlock): PolicyBlockShape {
  return {
    enforce: block.enforce,
    operations: block.operations,
    filter: block.filter,
    levelInputs: block.levelInputs,
    readsDigest: block.readsDigest,
  };
}

/** The parameters' values by key, as the reader resolves levels from them; undefined where not known yet. */
function parameterValues(parameters: unknown): Record<string, string | undefined> {
  if (!isObject(parameters) || isUnknown(parameters)) return {};
  return Object.fromEntries(
    Object.entries(parameters).map(([key, entry]) => {
      const value = isObject(entry) ? entry.value : undefined;
      return [key, typeof value === "string" && !isUnknown(value) ? value : undefined];
    }),
  );
}

/**
 * The arguments a Terraform policy set cannot take: it holds no individual policies (the Policies API has none of
 * kind tfpolicy), and the runtime settings are Sentinel's and OPA's (each block's level says what may be overridden).
 */
export function terraformPolicyArgumentFailures(news: Record<string, unknown>): CheckFailure[] {
  const failures: CheckFailure[] = [];
  for (const property of ["policyToolVersion", "agentEnabled"] as const) {
    if (news[property] === undefined || news[property] === false) continue;
    failures.push({
      property,
      reason:
        `${property} chooses how Sentinel or OPA runs; a Terraform policy set runs on each workspace's own ` +
        "Terraform (1.16 or newer), and the service documents no such setting for it: remove it",
    });
  }
  if (news.overridable === true) {
    failures.push({
      property: "overridable",
      reason:
        "overridable does not apply to a Terraform policy set: each policy block's enforcement_level says whether " +
        "it may be overridden (mandatory_overridable)",
    });
  }
  if (isUnknown(news.policyIds) || (Array.isArray(news.policyIds) && news.policyIds.length > 0)) {
    failures.push({
      property: "policyIds",
      reason:
        "a Terraform policy set holds no individual policies (the Policies API has none of kind tfpolicy): give " +
        "the folder of its .policy.hcl files (directory) or the repository that holds them (vcsRepo)",
    });
  }
  return failures;
}
