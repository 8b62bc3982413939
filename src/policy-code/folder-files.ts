import { posix } from "node:path";

/** A folder's files by path relative to its root, `/`-separated (`modules/tfplan-functions.sentinel`). */
export type FolderFiles = ReadonlyMap<string, Uint8Array>;

/**
 * A set's policies path as the paths of its repository's files spell it: `/`-separated, no leading `./` or
 * trailing `/`; "" for the repository's root (or an uploaded folder).
 */
export function normalizedPoliciesPath(policiesPath: string): string {
  return posix.normalize(policiesPath.replace(/\\/g, "/")).replace(/^\.\/?$|^\.\/|\/$/g, "");
}
