// The local server's table of private-registry modules, their versions and deprecations.

import { Table } from "./database";
import type { DeprecationRecord, ModuleRecord, ModuleVersionRecord } from "./records";
import { moduleVersionSelect, toModuleVersion } from "./rows";

/** Private-registry modules, their versions and deprecations. */
export class ModulesTable extends Table {
  createModule(organization: string, name: string, provider: string): ModuleRecord | "exists" {
    return this.transaction(() => {
      if (this.module(organization, name, provider)) return "exists";
      this.run(
        "INSERT INTO modules (organization, name, provider, created_at) VALUES (?, ?, ?, ?)",
        organization,
        name,
        provider,
        new Date().toISOString(),
      );
      return this.module(organization, name, provider)!;
    });
  }

  module(organization: string, name: string, provider: string): ModuleRecord | undefined {
    const row = this.get(
      "SELECT id, organization, name, provider, created_at FROM modules WHERE organization = ? AND name = ? AND provider = ?",
      organization,
      name,
      provider,
    );
    return (
      row && {
        id: Number(row.id),
        organization: String(row.organization),
        name: String(row.name),
        provider: String(row.provider),
        createdAt: String(row.created_at),
      }
    );
  }

  createModuleVersion(moduleId: number, version: string): ModuleVersionRecord | "exists" {
    return this.transaction(() => {
      if (this.moduleVersion(moduleId, version)) return "exists";
      this.run(
        "INSERT INTO module_versions (module_id, version, published_at) VALUES (?, ?, ?)",
        moduleId,
        version,
        new Date().toISOString(),
      );
      return this.moduleVersion(moduleId, version)!;
    });
  }

  moduleVersion(moduleId: number, version: string): ModuleVersionRecord | undefined {
    const row = this.get(`${moduleVersionSelect} WHERE v.module_id = ? AND v.version = ?`, moduleId, version);
    return row && toModuleVersion(row);
  }

  moduleVersions(moduleId: number): ModuleVersionRecord[] {
    return this.all(`${moduleVersionSelect} WHERE v.module_id = ? ORDER BY v.id`, moduleId).map(toModuleVersion);
  }

  deprecate(moduleVersionId: number, reason: string, link: string | null): DeprecationRecord {
    return this.transaction(() => {
      const id = Number(
        this.run(
          "INSERT INTO deprecations (module_version_id, reason, link) VALUES (?, ?, ?)",
          moduleVersionId,
          reason,
          link,
        ).lastInsertRowid,
      );
      this.run("UPDATE module_versions SET deprecation_id = ? WHERE id = ?", id, moduleVersionId);
      this.run("DELETE FROM deprecations WHERE module_version_id = ? AND id <> ?", moduleVersionId, id);
      return { id, reason, link };
    });
  }

  undeprecate(moduleVersionId: number): void {
    this.transaction(() => {
      this.run("UPDATE module_versions SET deprecation_id = NULL WHERE id = ?", moduleVersionId);
      this.run("DELETE FROM deprecations WHERE module_version_id = ?", moduleVersionId);
    });
  }
}
