import type { z } from "zod";
import { maxPageSize, type PolicySetKind, policySetKinds } from "../contract/policies";
import {
  createParameterRequest,
  createPolicySetRequest,
  type LenientPolicySetResource,
  lenientParameterDocument,
  lenientParameterListDocument,
  lenientPolicySetDocument,
  lenientPolicySetListDocument,
  lenientPolicySetVersionDocument,
  maxPolicySetArchiveBytes,
  type PolicySetInclude,
  type PolicySetRelationship,
  parameterCategory,
  relationshipRequest,
  type ScopeRelationship,
  scopeRelationships,
  updateParameterRequest,
  updatePolicySetRequest,
} from "../contract/policy-sets";
import { TfeApiError, TfeValidationError } from "./errors";
import { everyPage, exactlyNamed, type Pagination, toPagination } from "./pagination";
import { pathSegment } from "./paths";
import type { Transport } from "./transport";
import { validRequest } from "./validation";

/** The policy set calls (policy-sets-api.md): sets, their policies and scope, versions and parameters. */
export interface PolicySets {
  list(organization: string, options?: ListPolicySetsOptions): Promise<PolicySetPage>;
  /** Every set of an organization, page after page. */
  listAll(organization: string, options?: Omit<ListPolicySetsOptions, "pageNumber">): AsyncGenerator<PolicySet>;
  create(organization: string, options: CreatePolicySetOptions): Promise<PolicySet>;
  read(policySetId: string, options?: { include?: PolicySetInclude[] }): Promise<PolicySet>;
  /** Sends only the settings given; `description: null` clears the description. `kind` cannot change. */
  update(policySetId: string, options: UpdatePolicySetOptions): Promise<PolicySet>;
  delete(policySetId: string): Promise<void>;
  /** The policies join the set; they keep their ids and code. Joining a set a policy is in changes nothing. */
  addPolicies(policySetId: string, policyIds: readonly string[]): Promise<void>;
  /** The policies leave the set; each stays in its other sets and in the organization. */
  removePolicies(policySetId: string, policyIds: readonly string[]): Promise<void>;
  /** Workspaces or projects join one of the set's scope relationships (inclusions or exclusions). */
  addToScope(policySetId: string, relationship: ScopeRelationship, ids: readonly string[]): Promise<void>;
  removeFromScope(policySetId: string, relationship: ScopeRelationship, ids: readonly string[]): Promise<void>;
  /** A new version, waiting for its folder: upload it with {@link PolicySets.uploadVersion}. */
  createVersion(policySetId: string): Promise<PolicySetVersion>;
  readVersion(versionId: string): Promise<PolicySetVersion>;
  /** PUTs the gzip'd tar to the version's upload link, which is its own credential: the token is not sent. */
  uploadVersion(version: Pick<PolicySetVersion, "id" | "uploadLink">, archive: Uint8Array): Promise<void>;
  listParameters(policySetId: string): Promise<PolicySetParameter[]>;
  createParameter(policySetId: string, options: ParameterOptions): Promise<PolicySetParameter>;
  updateParameter(
    policySetId: string,
    parameterId: string,
    options: Partial<ParameterOptions>,
  ): Promise<PolicySetParameter>;
  deleteParameter(policySetId: string, parameterId: string): Promise<void>;
}

export interface ListPolicySetsOptions {
  pageNumber?: number;
  pageSize?: number;
  search?: string;
  kind?: PolicySetKind;
  versioned?: boolean;
}

/** Scope as the client speaks of it, each to the relationship it is on the wire. */
export interface PolicySetScope {
  workspaceIds?: string[];
  projectIds?: string[];
  excludedWorkspaceIds?: string[];
  excludedProjectIds?: string[];
}

export const scopeRelationshipOf: Record<keyof PolicySetScope, ScopeRelationship> = {
  workspaceIds: "workspaces",
  projectIds: "projects",
  excludedWorkspaceIds: "workspace-exclusions",
  excludedProjectIds: "project-exclusions",
};

/** What a call's errors name for each relationship: the option a caller wrote. */
const optionOfRelationship: Record<PolicySetRelationship, string> = {
  policies: "policyIds",
  ...(Object.fromEntries(
    Object.entries(scopeRelationshipOf).map(([option, relationship]) => [relationship, option]),
  ) as Record<ScopeRelationship, string>),
};

export interface PolicySetSettings {
  description?: string | null;
  global?: boolean;
  overridable?: boolean | null;
  agentEnabled?: boolean;
  policyToolVersion?: string;
  /** Read the set from version control; `null` (update) makes it a set that takes uploads again. */
  vcsRepo?: VcsRepo | null;
  /** The repository's folder that holds the set. */
  policiesPath?: string | null;
  /** Path globs whose changes make a new version; default: any change. */
  policyUpdatePatterns?: string[];
}

/** A repository a set is read from, and the credential the service reads it with (exactly one of the two). */
export interface VcsRepo {
  /** `org/repo`, as the VCS provider names it. */
  identifier: string;
  /** Default: the repository's default branch. */
  branch?: string | null;
  ingressSubmodules?: boolean;
  oauthTokenId?: string | null;
  githubAppInstallationId?: string | null;
}

/** A set's version control, as the service holds it. */
export interface PolicySetVcs {
  vcsRepo: Required<VcsRepo> & { serviceProvider: string | null };
  policiesPath: string | null;
  policyUpdatePatterns: string[];
}

export interface CreatePolicySetOptions extends PolicySetSettings, PolicySetScope {
  name: string;
  kind?: PolicySetKind;
  policyIds?: string[];
}

export interface UpdatePolicySetOptions extends PolicySetSettings {
  name?: string;
}

/** A policy set as the client returns it. Lists of ids are undefined where the answer left the relationship out. */
export interface PolicySet extends Required<PolicySetScope> {
  id: string;
  /** The organization that holds it, where the answer names it. */
  organization: string | null;
  name: string;
  description: string | null;
  kind: PolicySetKind;
  global: boolean;
  overridable: boolean | null;
  agentEnabled: boolean;
  policyToolVersion: string | null;
  versioned: boolean;
  policyIds: string[];
  currentVersionId: string | null;
  newestVersionId: string | null;
  updatedAt: string | null;
  /** Where a set read from version control reads from; null for a set that takes uploads, or holds policies. */
  vcs: PolicySetVcs | null;
}

export interface PolicySetPage {
  items: PolicySet[];
  pagination: Pagination;
}

export interface PolicySetVersion {
  id: string;
  status: string;
  /** `tfe-api` for an upload, the VCS provider's name (`github`, ...) for a version read from version control. */
  source: string | null;
  /** The commit a version-control version was read from. */
  commitSha: string | null;
  errorMessage: string | null;
  /** Where to PUT the archive while the version is pending. */
  uploadLink: string | null;
}

export interface ParameterOptions {
  key: string;
  value: string;
  sensitive: boolean;
}

export interface PolicySetParameter {
  id: string;
  key: string;
  /** Empty for a sensitive parameter: the service never sends its value back. */
  value: string;
  sensitive: boolean;
}

const fieldNames = {
  "agent-enabled": "agentEnabled",
  "policy-tool-version": "policyToolVersion",
  "relationships.workspaces": "workspaceIds",
  "vcs-repo": "vcsRepo",
  "policies-path": "policiesPath",
  "policy-update-patterns": "policyUpdatePatterns",
};

export class PolicySetsApi implements PolicySets {
  constructor(private readonly transport: Transport) {}

  async list(organization: string, options: ListPolicySetsOptions = {}): Promise<PolicySetPage> {
    const query: Record<string, string> = {};
    if (options.pageNumber !== undefined) query["page[number]"] = String(options.pageNumber);
    if (options.pageSize !== undefined) query["page[size]"] = String(options.pageSize);
    if (options.search !== undefined) query["search[name]"] = options.search;
    if (options.kind !== undefined) {
      if (!policySetKinds.includes(options.kind)) {
        throw new TfeValidationError([{ field: "kind", message: `must be one of ${policySetKinds.join(", ")}` }]);
      }
      query["filter[kind]"] = options.kind;
    }
    if (options.versioned !== undefined) query["filter[versioned]"] = String(options.versioned);
    const response = await this.transport.json({
      method: "GET",
      path: `/api/v2/organizations/${pathSegment("organization", organization)}/policy-sets`,
      query,
      schema: lenientPolicySetListDocument,
    });
    return {
      items: response.data.map(toPolicySet),
      pagination: toPagination(response.meta?.pagination, response.data.length),
    };
  }

  async *listAll(
    organization: string,
    options: Omit<ListPolicySetsOptions, "pageNumber"> = {},
  ): AsyncGenerator<PolicySet> {
    yield* everyPage((pageNumber) => this.list(organization, { pageSize: maxPageSize, ...options, pageNumber }));
  }

  /** The organization's policy set named exactly `name`, or undefined: a search by name, then an exact match. */
  findByName(organization: string, name: string): Promise<PolicySet | undefined> {
    return exactlyNamed(this.listAll(organization, { search: name }), name);
  }

  async create(organization: string, options: CreatePolicySetOptions): Promise<PolicySet> {
    const identifiers = (type: string, ids: readonly string[] | undefined) =>
      ids && ids.length > 0 ? { data: ids.map((id) => ({ id, type })) } : undefined;
    const relationships = Object.fromEntries(
      [
        ["policies", identifiers("policies", options.policyIds)],
        ...Object.entries(scopeRelationshipOf).map(([option, relationship]) => [
          relationship,
          identifiers(scopeRelationships[relationship], options[option as keyof PolicySetScope]),
        ]),
      ].filter(([, value]) => value !== undefined),
    );
    const body = validRequest(
      createPolicySetRequest,
      {
        data: {
          type: "policy-sets",
          attributes: { name: options.name, ...(options.kind ? { kind: options.kind } : {}), ...settings(options) },
          ...(Object.keys(relationships).length > 0 ? { relationships } : {}),
        },
      },
      fieldNames,
    );
    const response = await this.transport.json({
      method: "POST",
      path: `/api/v2/organizations/${pathSegment("organization", organization)}/policy-sets`,
      body,
      schema: lenientPolicySetDocument,
    });
    return toPolicySet(response.data);
  }

  async read(policySetId: string, options: { include?: PolicySetInclude[] } = {}): Promise<PolicySet> {
    const response = await this.transport.json({
      method: "GET",
      path: setPath(policySetId),
      query: options.include?.length ? { include: options.include.join(",") } : undefined,
      schema: lenientPolicySetDocument,
    });
    return toPolicySet(response.data);
  }

  async update(policySetId: string, options: UpdatePolicySetOptions): Promise<PolicySet> {
    const attributes = { ...(options.name !== undefined ? { name: options.name } : {}), ...settings(options) };
    const body = validRequest(updatePolicySetRequest, { data: { type: "policy-sets", attributes } }, fieldNames);
    const response = await this.transport.json({
      method: "PATCH",
      path: setPath(policySetId),
      body,
      schema: lenientPolicySetDocument,
    });
    return toPolicySet(response.data);
  }

  async delete(policySetId: string): Promise<void> {
    await this.transport.send({ method: "DELETE", path: setPath(policySetId) });
  }

  addPolicies(policySetId: string, policyIds: readonly string[]): Promise<void> {
    return this.changeRelationship("POST", policySetId, "policies", policyIds);
  }

  removePolicies(policySetId: string, policyIds: readonly string[]): Promise<void> {
    return this.changeRelationship("DELETE", policySetId, "policies", policyIds);
  }

  addToScope(policySetId: string, relationship: ScopeRelationship, ids: readonly string[]): Promise<void> {
    return this.changeRelationship("POST", policySetId, relationship, ids);
  }

  removeFromScope(policySetId: string, relationship: ScopeRelationship, ids: readonly string[]): Promise<void> {
    return this.changeRelationship("DELETE", policySetId, relationship, ids);
  }

  private async changeRelationship(
    method: "POST" | "DELETE",
    policySetId: string,
    relationship: PolicySetRelationship,
    ids: readonly string[],
  ) {
    const type = relationship === "policies" ? "policies" : scopeRelationships[relationship];
    const body = validRequest(relationshipRequest(relationship), {
      data: ids.map((id) => ({ id: pathSegment(optionOfRelationship[relationship], id), type })),
    });
    // Joining a relationship twice, or leaving it twice, changes nothing: a lost answer is retried like a PUT.
    await this.transport.send({
      method,
      path: `${setPath(policySetId)}/relationships/${relationship}`,
      body,
      idempotent: true,
    });
  }

  async createVersion(policySetId: string): Promise<PolicySetVersion> {
    const response = await this.transport.json({
      method: "POST",
      path: `${setPath(policySetId)}/versions`,
      schema: lenientPolicySetVersionDocument,
    });
    return toVersion(response.data);
  }

  async readVersion(versionId: string): Promise<PolicySetVersion> {
    const response = await this.transport.json({
      method: "GET",
      path: `/api/v2/policy-set-versions/${pathSegment("versionId", versionId)}`,
      schema: lenientPolicySetVersionDocument,
    });
    return toVersion(response.data);
  }

  async uploadVersion(version: Pick<PolicySetVersion, "id" | "uploadLink">, archive: Uint8Array): Promise<void> {
    if (!version.uploadLink) {
      throw new TfeValidationError([
        { field: "uploadLink", message: `version ${version.id} has no upload link: it is no longer pending` },
      ]);
    }
    if (archive.byteLength > maxPolicySetArchiveBytes) {
      throw new TfeValidationError([
        {
          field: "archive",
          message: `is ${archive.byteLength} bytes gzip'd; at most ${maxPolicySetArchiveBytes} are taken: leave files out with .terraformignore`,
        },
      ]);
    }
    try {
      await this.transport.putToLink(version.uploadLink, archive, `policy set version ${version.id} upload`);
    } catch (error) {
      // A retry finds the link spent when an earlier attempt got through and only its answer was lost: the link is
      // this upload's alone, so a version that moved on holds what was sent.
      if (error instanceof TfeApiError && error.status === 409 && error.attempts > 1) {
        if ((await this.readVersion(version.id)).status !== "pending") return;
      }
      throw error;
    }
  }

  async listParameters(policySetId: string): Promise<PolicySetParameter[]> {
    const parameters: PolicySetParameter[] = [];
    const pages = everyPage(async (pageNumber) => {
      const response: z.output<typeof lenientParameterListDocument> = await this.transport.json({
        method: "GET",
        path: `${setPath(policySetId)}/parameters`,
        query: { "page[number]": String(pageNumber), "page[size]": String(maxPageSize) },
        schema: lenientParameterListDocument,
      });
      return {
        items: response.data.map(toParameter),
        pagination: toPagination(response.meta?.pagination, response.data.length),
      };
    });
    for await (const parameter of pages) parameters.push(parameter);
    return parameters;
  }

  async createParameter(policySetId: string, options: ParameterOptions): Promise<PolicySetParameter> {
    const body = validRequest(createParameterRequest, {
      data: { type: "vars", attributes: { ...options, category: parameterCategory } },
    });
    const response = await this.transport.json({
      method: "POST",
      path: `${setPath(policySetId)}/parameters`,
      body,
      schema: lenientParameterDocument,
    });
    return toParameter(response.data);
  }

  async updateParameter(
    policySetId: string,
    parameterId: string,
    options: Partial<ParameterOptions>,
  ): Promise<PolicySetParameter> {
    const body = validRequest(updateParameterRequest, { data: { type: "vars", attributes: options } });
    const response = await this.transport.json({
      method: "PATCH",
      path: `${setPath(policySetId)}/parameters/${pathSegment("parameterId", parameterId)}`,
      body,
      schema: lenientParameterDocument,
    });
    return toParameter(response.data);
  }

  async deleteParameter(policySetId: string, parameterId: string): Promise<void> {
    await this.transport.send({
      method: "DELETE",
      path: `${setPath(policySetId)}/parameters/${pathSegment("parameterId", parameterId)}`,
    });
  }
}

function setPath(policySetId: string): string {
  return `/api/v2/policy-sets/${pathSegment("policySetId", policySetId)}`;
}

function settings(options: PolicySetSettings): Record<string, unknown> {
  const repo = options.vcsRepo;
  const wire: Record<string, unknown> = {
    description: options.description,
    global: options.global,
    overridable: options.overridable,
    "agent-enabled": options.agentEnabled,
    "policy-tool-version": options.policyToolVersion,
    "vcs-repo":
      repo === undefined || repo === null
        ? repo
        : Object.fromEntries(
            Object.entries({
              identifier: repo.identifier,
              branch: repo.branch,
              "ingress-submodules": repo.ingressSubmodules,
              "oauth-token-id": repo.oauthTokenId,
              "github-app-installation-id": repo.githubAppInstallationId,
            }).filter(([, value]) => value !== undefined && value !== null),
          ),
    "policies-path": options.policiesPath,
    "policy-update-patterns": options.policyUpdatePatterns,
  };
  return Object.fromEntries(Object.entries(wire).filter(([, value]) => value !== undefined));
}

function toPolicySet(resource: LenientPolicySetResource): PolicySet {
  const { attributes, relationships = {} } = resource;
  const ids = (relationship: keyof NonNullable<LenientPolicySetResource["relationships"]>) =>
    (relationships[relationship] as { data?: { id: string }[] | null } | undefined)?.data?.map(({ id }) => id) ?? [];
  const versionId = (relationship: "current-version" | "newest-version") =>
    relationships[relationship]?.data?.id ?? null;
  return {
    id: resource.id,
    organization: relationships.organization?.data?.id ?? null,
    name: attributes.name,
    description: attributes.description ?? null,
    kind: policySetKinds.find((kind) => kind === attributes.kind) ?? "sentinel",
    global: attributes.global ?? false,
    overridable: attributes.overridable ?? null,
    agentEnabled: attributes["agent-enabled"] ?? false,
    policyToolVersion: attributes["policy-tool-version"] ?? null,
    versioned: attributes.versioned ?? false,
    policyIds: ids("policies"),
    workspaceIds: ids("workspaces"),
    projectIds: ids("projects"),
    excludedWorkspaceIds: ids("workspace-exclusions"),
    excludedProjectIds: ids("project-exclusions"),
    currentVersionId: versionId("current-version"),
    newestVersionId: versionId("newest-version"),
    updatedAt: attributes["updated-at"] ?? null,
    vcs: vcsOf(attributes),
  };
}

function vcsOf(attributes: LenientPolicySetResource["attributes"]): PolicySetVcs | null {
  const repo = attributes["vcs-repo"];
  if (!repo) return null;
  return {
    vcsRepo: {
      identifier: repo.identifier,
      branch: repo.branch ?? null,
      ingressSubmodules: repo["ingress-submodules"] ?? false,
      // The service sends the credential it does not use as null or as an empty string.
      oauthTokenId: repo["oauth-token-id"] || null,
      githubAppInstallationId: repo["github-app-installation-id"] || null,
      serviceProvider: repo["service-provider"] ?? null,
    },
    policiesPath: attributes["policies-path"] ?? null,
    policyUpdatePatterns: attributes["policy-update-patterns"] ?? [],
  };
}

function toVersion(resource: {
  id: string;
  attributes: {
    status: string;
    source?: string | null | undefined;
    "error-message"?: string | null | undefined;
    "ingress-attributes"?: { "commit-sha"?: string | null | undefined } | null | undefined;
  };
  links?: { upload?: string | null | undefined } | undefined;
}): PolicySetVersion {
  return {
    id: resource.id,
    status: resource.attributes.status,
    source: resource.attributes.source ?? null,
    commitSha: resource.attributes["ingress-attributes"]?.["commit-sha"] ?? null,
    errorMessage: resource.attributes["error-message"] ?? null,
    uploadLink: resource.links?.upload ?? null,
  };
}

function toParameter(resource: {
  id: string;
  attributes: { key: string; value?: string | null | undefined; sensitive?: boolean | null | undefined };
}): PolicySetParameter {
  return {
    id: resource.id,
    key: resource.attributes.key,
    value: resource.attributes.value ?? "",
    sensitive: resource.attributes.sensitive ?? false,
  };
}
