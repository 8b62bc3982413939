import {
  type DeprecatedStatus,
  type LenientDeprecationRecord,
  lenientModuleVersionDocument,
  type ModuleVersionDeprecationRequest,
  moduleVersionDeprecationRequest,
} from "../contract/module-versions";
import { pathSegment } from "./paths";
import type { Transport } from "./transport";
import { validRequest } from "./validation";

/** The module-version deprecation calls (spec 4.5, 4.6). */
export interface ModuleVersions {
  /** Marks a version deprecated (spec 4.5). Needs the Plus edition; 404 otherwise. */
  deprecate(options: DeprecateOptions): Promise<ModuleVersionDeprecation>;
  /** Reverts the deprecation, so the version is fully reinstated (spec 4.6). */
  undeprecate(address: ModuleVersionAddress): Promise<{ moduleVersionId: string }>;
}

// 500 and 503 are the service's "failure while deprecating" (spec 7); the PATCH sets a state, so it is safe to repeat.
const retryDeprecationFailures = [500, 503];

export class ModuleVersionsApi implements ModuleVersions {
  constructor(private readonly transport: Transport) {}

  async deprecate(options: DeprecateOptions): Promise<ModuleVersionDeprecation> {
    const response = await this.transport.json({
      method: "PATCH",
      path: moduleVersionPath(options),
      body: validDeprecateOptions(options),
      schema: lenientModuleVersionDocument,
      retryStatuses: retryDeprecationFailures,
    });
    const deprecationId = response.data.relationships?.deprecation?.data?.id ?? null;
    const record = response.included?.find(
      (item): item is LenientDeprecationRecord =>
        item.type === "deprecations" && (deprecationId === null || item.id === deprecationId),
    );
    return {
      moduleVersionId: response.data.id,
      deprecationId: deprecationId ?? record?.id ?? null,
      reason: record?.attributes?.reason ?? null,
      link: record?.attributes?.link ?? null,
    };
  }

  async undeprecate(address: ModuleVersionAddress): Promise<{ moduleVersionId: string }> {
    const body = validRequest(moduleVersionDeprecationRequest, {
      data: { type: "module-versions", attributes: { deprecation: { "deprecated-status": "Undeprecated" } } },
    });
    const response = await this.transport.json({
      method: "PATCH",
      path: moduleVersionPath(address),
      body,
      schema: lenientModuleVersionDocument,
      retryStatuses: retryDeprecationFailures,
    });
    return { moduleVersionId: response.data.id };
  }
}

/** Where a module version lives in an organization's private registry. */
export interface ModuleVersionAddress {
  organization: string;
  name: string;
  provider: string;
  version: string;
}

export interface DeprecateOptions extends ModuleVersionAddress {
  reason: string;
  link?: string;
}

export interface ModuleVersionDeprecation {
  moduleVersionId: string;
  deprecationId: string | null;
  /** The reason as the service holds it: it appends text of its own to the one sent. */
  reason: string | null;
  link: string | null;
}

/** The deprecate document, checked against the contract before anything is sent. */
function validDeprecateOptions(options: DeprecateOptions): ModuleVersionDeprecationRequest {
  const deprecation: DeprecatedStatus = { "deprecated-status": "Deprecated", reason: options.reason };
  if (options.link !== undefined) deprecation.link = options.link;
  return validRequest(
    moduleVersionDeprecationRequest,
    { data: { type: "module-versions", attributes: { deprecation } } },
    { "deprecation.reason": "reason", "deprecation.link": "link" },
  );
}

function moduleVersionPath(address: ModuleVersionAddress): string {
  const organization = pathSegment("organization", address.organization);
  return (
    `/api/v2/organizations/${organization}/registry-modules/private/${organization}/` +
    `${pathSegment("name", address.name)}/${pathSegment("provider", address.provider)}/` +
    pathSegment("version", address.version)
  );
}
