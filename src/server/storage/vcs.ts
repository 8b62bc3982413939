// The local server's table of version control: the repositories sets read from, and the credentials they read with.

import { Table } from "./database";
import type { VcsCredentialRecord, VcsRepositoryRecord } from "./records";

/** Version control: the repositories sets read from, and the credentials they read with. */
export class VcsTable extends Table {
  addVcsRepository(repository: VcsRepositoryRecord): void {
    this.run(
      `INSERT INTO vcs_repositories (identifier, path, service_provider, organizations) VALUES (?, ?, ?, ?)
       ON CONFLICT (identifier) DO UPDATE SET path = excluded.path, service_provider = excluded.service_provider,
         organizations = excluded.organizations`,
      repository.identifier,
      repository.path,
      repository.serviceProvider,
      repository.organizations === null ? null : JSON.stringify(repository.organizations),
    );
  }

  vcsRepository(identifier: string): VcsRepositoryRecord | undefined {
    const row = this.get(
      "SELECT identifier, path, service_provider, organizations FROM vcs_repositories WHERE identifier = ?",
      identifier,
    );
    return row && repositoryOf(row);
  }

  vcsRepositories(): VcsRepositoryRecord[] {
    return this.all(
      "SELECT identifier, path, service_provider, organizations FROM vcs_repositories ORDER BY identifier",
    ).map(repositoryOf);
  }

  vcsCredentials(): VcsCredentialRecord[] {
    return this.all("SELECT id, organization, service_provider FROM vcs_credentials ORDER BY id").map((row) => ({
      id: String(row.id),
      organization: row.organization === null ? null : String(row.organization),
      serviceProvider: String(row.service_provider),
    }));
  }

  addVcsCredential(credential: VcsCredentialRecord): void {
    this.run(
      `INSERT INTO vcs_credentials (id, organization, service_provider) VALUES (?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET organization = excluded.organization, service_provider = excluded.service_provider`,
      credential.id,
      credential.organization,
      credential.serviceProvider,
    );
  }

  vcsCredential(id: string): VcsCredentialRecord | undefined {
    const row = this.get("SELECT id, organization, service_provider FROM vcs_credentials WHERE id = ?", id);
    return (
      row && {
        id: String(row.id),
        organization: row.organization === null ? null : String(row.organization),
        serviceProvider: String(row.service_provider),
      }
    );
  }
}

function repositoryOf(row: Record<string, unknown>): VcsRepositoryRecord {
  return {
    identifier: String(row.identifier),
    path: String(row.path),
    serviceProvider: String(row.service_provider),
    organizations:
      row.organizations === null || row.organizations === undefined
        ? null
        : (JSON.parse(String(row.organizations)) as string[]),
  };
}
