import {
  type LenientRegistryDeprecation,
  lenientRegistryModuleVersion,
  lenientRegistryModuleVersions,
} from "../contract/registry";
import { pathSegment } from "./paths";
import type { Transport } from "./transport";

/** The registry read calls (spec 4.7, 4.8): plain JSON, not JSON:API. */
export interface Registry {
  /** One version with its deprecation data (spec 4.7). */
  getModuleVersion(address: RegistryModuleAddress & { version: string }): Promise<RegistryModuleVersion>;
  /** Every version of a module with its deprecation data (spec 4.8). */
  listModuleVersions(address: RegistryModuleAddress): Promise<RegistryModuleVersionSummary[]>;
}

export class RegistryApi implements Registry {
  constructor(private readonly transport: Transport) {}

  async getModuleVersion(address: RegistryModuleAddress & { version: string }): Promise<RegistryModuleVersion> {
    const record = await this.transport.json({
      method: "GET",
      path: `${modulePath(address)}/${pathSegment("version", address.version)}`,
      schema: lenientRegistryModuleVersion,
      accept: "application/json",
    });
    return {
      id: record.id,
      namespace: record.namespace,
      name: record.name,
      provider: record.provider,
      version: record.version,
      description: record.description ?? null,
      publishedAt: record.published_at ?? null,
      deprecation: toDeprecation(record.deprecation),
    };
  }

  async listModuleVersions(address: RegistryModuleAddress): Promise<RegistryModuleVersionSummary[]> {
    const response = await this.transport.json({
      method: "GET",
      path: `${modulePath(address)}/versions`,
      schema: lenientRegistryModuleVersions,
      accept: "application/json",
    });
    return response.modules.flatMap((module) =>
      module.versions.map((entry) => ({ version: entry.version, deprecation: toDeprecation(entry.deprecation) })),
    );
  }
}

export interface RegistryModuleAddress {
  /** For private modules, the organization name. */
  namespace: string;
  name: string;
  provider: string;
}

export interface Deprecation {
  reason: string;
  link: string | null;
}

export interface RegistryModuleVersion {
  id: string;
  namespace: string;
  name: string;
  provider: string;
  version: string;
  description: string | null;
  publishedAt: string | null;
  deprecation: Deprecation | null;
}

export interface RegistryModuleVersionSummary {
  version: string;
  deprecation: Deprecation | null;
}

function toDeprecation(value: LenientRegistryDeprecation | undefined): Deprecation | null {
  if (!value) return null;
  return { reason: value.reason ?? "", link: value.link ?? null };
}

function modulePath(address: RegistryModuleAddress): string {
  return (
    `/api/registry/v1/modules/${pathSegment("namespace", address.namespace)}/` +
    `${pathSegment("name", address.name)}/${pathSegment("provider", address.provider)}`
  );
}
