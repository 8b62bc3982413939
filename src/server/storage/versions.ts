// The local server's table of policy set versions: their status, their archives, where they were read from.

import type { PolicySetVersionStatus } from "../../contract/policy-sets";

import { Table } from "./database";
import { type PolicySetVersionRecord, randomId } from "./records";

/** Policy set versions: their status, their archives, where they were read from. */
export class VersionsTable extends Table {
  /**
   * A new version: pending its upload, or, read from version control, ingressing from the commit named (the
   * service reads the commit at once).
   */
  createVersion(
    policySetId: string,
    fromVcs?: { source: string; ingressAttributes: NonNullable<PolicySetVersionRecord["ingressAttributes"]> },
  ): PolicySetVersionRecord {
    return this.transaction(() => {
      const id = randomId("polsetver");
      const now = new Date().toISOString();
      this.run(
        `INSERT INTO policy_set_versions (id, policy_set_id, status, source, ingress_attributes, created_at, updated_at,
         status_timestamps) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
        id,
        policySetId,
        fromVcs ? "ingressing" : "pending",
        fromVcs?.source ?? "tfe-api",
        fromVcs ? JSON.stringify(fromVcs.ingressAttributes) : null,
        now,
        now,
        JSON.stringify(fromVcs ? { pending: now, ingressing: now } : { pending: now }),
      );
      return this.version(id)!;
    });
  }

  version(id: string): PolicySetVersionRecord | undefined {
    const row = this.get(
      `SELECT id, policy_set_id, status, source, ingress_attributes, error_message, created_at, updated_at,
       status_timestamps FROM policy_set_versions WHERE id = ?`,
      id,
    );
    return (
      row && {
        id: String(row.id),
        policySetId: String(row.policy_set_id),
        status: String(row.status) as PolicySetVersionStatus,
        source: String(row.source),
        ingressAttributes: row.ingress_attributes === null ? null : JSON.parse(String(row.ingress_attributes)),
        errorMessage: row.error_message === null ? null : String(row.error_message),
        createdAt: String(row.created_at),
        updatedAt: String(row.updated_at),
        statusTimestamps: JSON.parse(String(row.status_timestamps)),
      }
    );
  }

  /** Versions whose archive arrived but was not read to the end: a server killed while ingressing left them. */
  ingressingVersions(): string[] {
    return this.all("SELECT id FROM policy_set_versions WHERE status = 'ingressing' ORDER BY rowid").map((row) =>
      String(row.id),
    );
  }

  /**
   * Stores the archive of a pending version and marks it ingressing, in one transaction: a version is never
   * ingressing without its archive. Answers false when the version is gone or has had its upload.
   */
  storeArchive(id: string, archive: Uint8Array): boolean {
    return this.transaction(() => {
      const now = new Date().toISOString();
      const version = this.version(id);
      if (version?.status !== "pending") return false;
      this.run(
        "UPDATE policy_set_versions SET archive = ?, status = 'ingressing', updated_at = ?, status_timestamps = ? WHERE id = ?",
        archive,
        now,
        JSON.stringify({ ...version.statusTimestamps, ingressing: now }),
        id,
      );
      return true;
    });
  }

  archive(id: string): Uint8Array | undefined {
    const row = this.get("SELECT archive FROM policy_set_versions WHERE id = ?", id);
    return row?.archive instanceof Uint8Array ? row.archive : undefined;
  }

  /** The end of ingress: `ready`, or `errored` with the reason a user reads. */
  /**
   * Settles a version, once: `ready` only from `ingressing`, `errored` from `pending` (an archive that could not be
   * stored) or `ingressing`. A version already settled keeps its status, so a late answer to a second upload
   * cannot turn a ready version errored. Answers whether it moved.
   */
  finishVersion(id: string, outcome: { status: "ready" } | { status: "errored"; errorMessage: string }): boolean {
    return this.transaction(() => {
      const version = this.version(id);
      const from = outcome.status === "ready" ? ["ingressing"] : ["pending", "ingressing"];
      if (!version || !from.includes(version.status)) return false;
      const now = new Date().toISOString();
      this.run(
        "UPDATE policy_set_versions SET status = ?, error_message = ?, updated_at = ?, status_timestamps = ? WHERE id = ?",
        outcome.status,
        outcome.status === "errored" ? outcome.errorMessage : null,
        now,
        JSON.stringify({ ...version.statusTimestamps, [outcome.status]: now }),
        id,
      );
      return true;
    });
  }
}
