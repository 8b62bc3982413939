import type { PolicySetKind } from "../contract/policies";
import type { FolderFiles } from "./folder-files";
import { PolicySetFolderError, readPolicySetFolder } from "./policy-set-folder";
import { readTfPolicyFolder, type TfPolicyBlock } from "./tfpolicy";

/**
 * The policies a set's folder enforces, as the service reads it: each policy block's label with its level, and for
 * Terraform policy each block's shape (levels resolved with the set's `parameters`). One reading for every caller
 * that compares folders: the local server's view of what an organization enforces, `tfe-governance check-folder`.
 * Throws {@link PolicySetFolderError} with every problem where the service could not read it.
 */
export async function folderLevels(
  files: FolderFiles,
  kind: PolicySetKind,
  options: { policiesPath?: string; parameters?: Readonly<Record<string, string | undefined>> } = {},
): Promise<{ policies: Record<string, string>; blocks: TfPolicyBlock[] }> {
  if (kind !== "tfpolicy") {
    return { policies: (await readPolicySetFolder(files, kind, options.policiesPath ?? "")).policies, blocks: [] };
  }
  const folder = await readTfPolicyFolder(files, options);
  if (folder.problems.length > 0) throw new PolicySetFolderError(folder.problems);
  return {
    policies: Object.fromEntries(folder.blocks.map((block) => [block.address, block.level])),
    blocks: folder.blocks,
  };
}
