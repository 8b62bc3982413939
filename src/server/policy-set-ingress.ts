import { ArchiveError, unpackArchive } from "../policy-code/archive";
import { PolicySetFolderError, readPolicySetFolder } from "../policy-code/policy-set-folder";
import { errorText } from "../process/error-text";
import { type FaultInjector, ingressRoute } from "./faults";
import type { Storage } from "./storage";

/**
 * Reads an uploaded version's folder as the service does and settles it: `ready` (it becomes its set's current
 * version) or `errored` with the reason, naming the file. Remote `source` addresses are accepted and not fetched:
 * this server reaches no network, and the service fetches them when it evaluates, not when it ingests.
 */
export async function ingestVersion(storage: Storage, versionId: string, faults?: FaultInjector): Promise<void> {
  const version = storage.version(versionId);
  const archive = storage.archive(versionId);
  const policySet = version && storage.policySet(version.policySetId);
  if (version?.status !== "ingressing" || !archive || !policySet) return;
  const [method, route] = ingressRoute.split(" ") as [string, string];
  const injected = faults?.pick(method, route, false)?.versionError;
  if (injected) {
    storage.finishVersion(versionId, { status: "errored", errorMessage: injected });
    return;
  }
  try {
    await readPolicySetFolder(await unpackArchive(archive), policySet.kind);
    storage.finishVersion(versionId, { status: "ready" });
  } catch (error) {
    storage.finishVersion(versionId, { status: "errored", errorMessage: ingressErrorMessage(error) });
  }
}

/**
 * What an errored version says: the folder's or the archive's own error, naming the file; any other failure still
 * errors the version (one left ingressing would keep its clients waiting for good), saying what failed.
 */
export function ingressErrorMessage(error: unknown): string {
  if (error instanceof PolicySetFolderError || error instanceof ArchiveError) return error.message;
  return `Failed to ingress: ${errorText(error)}`;
}

/** Versions a killed server left ingressing: their archives are stored, so they are read again at start. */
export async function resumeIngress(storage: Storage): Promise<void> {
  for (const versionId of storage.ingressingVersions()) await ingestVersion(storage, versionId);
}
