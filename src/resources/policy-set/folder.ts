import type { PolicySetKind } from "../../contract/policies";
import { collectFolder, hashFiles } from "../../policy-code/archive";
import { bringInOutsideSources, type WithOutsideSources } from "../../policy-code/outside-sources";
import { kindOfFolder } from "../../policy-code/policy-set-folder";

/** A folder as it is uploaded: the files go-slug packs, with sources outside the folder brought in. */
export interface PreparedFolder extends WithOutsideSources {
  kind: PolicySetKind;
  contentHash: string;
  externalLinks: { path: string; target: string }[];
}

export async function prepareFolder(path: string, declared: PolicySetKind | undefined): Promise<PreparedFolder> {
  const collected = collectFolder(path);
  const kind = declared ?? kindOfFolder(collected.files) ?? "sentinel";
  const withOutside = await bringInOutsideSources(path, collected.files, kind);
  return { ...withOutside, kind, contentHash: hashFiles(withOutside.files), externalLinks: collected.externalLinks };
}
