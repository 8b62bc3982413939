import type { FastifyInstance } from "fastify";
import type { JsonApiErrorObject } from "../../contract/jsonapi";
import { defaultPageSize, kindPhrase, maxPageSize, policySetKinds } from "../../contract/policies";
import {
  createPolicySetRequest,
  type PolicySetInclude,
  type PolicySetRelationship,
  type PolicySetResource,
  policySetDocument,
  policySetIncludes,
  policySetListDocument,
  relationshipRequest,
  type ScopeRelationship,
  scopeRelationshipNames,
  scopeRelationships,
  updatePolicySetRequest,
} from "../../contract/policy-sets";
import { authorize } from "../auth";
import type { AppContext } from "../context";
import { ApiError, alreadyTaken, badParameter, invalidAttribute, notFound, parseBody } from "../errors";
import { jsonApiEndpoint } from "../openapi";
import { oneOf, paginationOf, type Query, requestedPage } from "../pagination";
import type { PolicySetRecord, Storage } from "../storage";
import { providerHost, startVcsIngress } from "../vcs-ingress";

import { bothKindsMessage, loadPolicySet, type SetParams, send } from "./policy-set-access";
import { registerParameterRoutes } from "./policy-set-parameters";
import { registerVersionRoutes, versionDocument } from "./policy-set-versions";

type OrganizationParams = { Params: { organization: string } };

/** An upload link lasts an hour, as the service's does. */
const _uploadLinkTtlMs = 60 * 60 * 1000;

function policySetResource(set: PolicySetRecord): PolicySetResource {
  const many = <Type extends string>(type: Type, ids: readonly string[]) => ({ data: ids.map((id) => ({ id, type })) });
  const one = (id: string | null) => ({ data: id === null ? null : { id, type: "policy-set-versions" as const } });
  return {
    id: set.id,
    type: "policy-sets",
    attributes: {
      name: set.name,
      description: set.description,
      kind: set.kind,
      global: set.global,
      overridable: set.overridable,
      "agent-enabled": set.agentEnabled,
      "policy-tool-version": set.policyToolVersion,
      "policies-path": set.policiesPath,
      "policy-update-patterns": set.policyUpdatePatterns,
      "vcs-repo": set.vcsRepo && {
        identifier: set.vcsRepo.identifier,
        "display-identifier": set.vcsRepo.identifier,
        branch: set.vcsRepo.branch ?? "",
        "ingress-submodules": set.vcsRepo.ingressSubmodules,
        "oauth-token-id": set.vcsRepo.oauthTokenId,
        "github-app-installation-id": set.vcsRepo.githubAppInstallationId,
        "repository-http-url": `https://${providerHost(set.vcsRepo.serviceProvider)}/${set.vcsRepo.identifier}`,
        "service-provider": set.vcsRepo.serviceProvider,
      },
      versioned: set.versioned,
      "policy-count": set.policyIds.length,
      "workspace-count": set.scope.workspaces.length,
      "project-count": set.scope.projects.length,
      "created-at": set.createdAt,
      "updated-at": set.updatedAt,
    },
    relationships: {
      organization: { data: { id: set.organization, type: "organizations" } },
      policies: many("policies", set.policyIds),
      ...(set.global
        ? {}
        : { workspaces: many("workspaces", set.scope.workspaces), projects: many("projects", set.scope.projects) }),
      "workspace-exclusions": many("workspaces", set.scope["workspace-exclusions"]),
      "project-exclusions": many("projects", set.scope["project-exclusions"]),
      "current-version": one(set.currentVersionId),
      "newest-version": one(set.newestVersionId),
    },
    links: { self: `/api/v2/policy-sets/${set.id}` },
  };
}

function requestedIncludes(query: Query): Set<PolicySetInclude> {
  const text = query.include;
  if (text === undefined) return new Set();
  const includes = text.split(",").map((item) => item.trim());
  for (const include of includes) {
    if (!(policySetIncludes as readonly string[]).includes(include)) {
      throw badParameter("include", `"${include}" is not one of ${policySetIncludes.join(", ")}`);
    }
  }
  return new Set(includes as PolicySetInclude[]);
}

function includedFor(storage: Storage, sets: readonly PolicySetRecord[], includes: Set<PolicySetInclude>) {
  const included = new Map<string, { id: string; type: string; attributes: Record<string, unknown> }>();
  for (const set of sets) {
    if (includes.has("policies")) {
      for (const policy of storage.policiesById(set.policyIds)) {
        included.set(`policies/${policy.id}`, {
          id: policy.id,
          type: "policies",
          attributes: { name: policy.name, kind: policy.kind, "enforcement-level": policy.enforcementLevel },
        });
      }
    }
    for (const relationship of scopeRelationshipNames) {
      if (!includes.has(relationship.replace("-", "_") as PolicySetInclude)) continue;
      for (const id of set.scope[relationship]) {
        const target = storage.scopeTarget(relationship, id);
        const type = scopeRelationships[relationship];
        included.set(`${type}/${id}`, { id, type, attributes: { name: target?.name ?? id } });
      }
    }
    for (const [include, id] of [
      ["current_version", set.currentVersionId],
      ["newest_version", set.newestVersionId],
    ] as const) {
      const version = includes.has(include) && id !== null ? storage.version(id) : undefined;
      if (version) {
        const { attributes } = versionDocument(version, undefined).data;
        included.set(`policy-set-versions/${id}`, { id: version.id, type: "policy-set-versions", attributes });
      }
    }
  }
  return includes.size > 0 ? { included: [...included.values()] } : {};
}

/**
 * The ids a relationship body names, checked: each is a workspace, project or policy of the set's organization (and
 * for policies, of the set's kind). One 422 lists every stranger, each at its `/data/N/id`.
 */
function checkMembers(
  storage: Storage,
  set: Pick<PolicySetRecord, "organization" | "kind">,
  relationship: PolicySetRelationship,
  ids: readonly string[],
  pointer: (index: number) => string[],
): JsonApiErrorObject[] {
  return ids.flatMap((id, index) => {
    if (relationship === "policies") {
      const policy = storage.policy(id);
      if (policy?.organization !== set.organization) {
        return [invalidAttribute(pointer(index), `"${id}" is not a policy of organization ${set.organization}`)];
      }
      if (policy.kind !== set.kind) {
        return [
          invalidAttribute(
            pointer(index),
            `"${id}" is ${kindPhrase(policy.kind)} policy, and this is ${kindPhrase(set.kind)} set: a set holds one kind`,
          ),
        ];
      }
      return [];
    }
    const target = storage.scopeTarget(relationship, id);
    const what = scopeRelationships[relationship] === "workspaces" ? "workspace" : "project";
    return target?.organization === set.organization
      ? []
      : [invalidAttribute(pointer(index), `"${id}" is not a ${what} of organization ${set.organization}`)];
  });
}

/** Policy sets, their scope, versions and parameters (policy-sets-api.md). */
export function registerPolicySetRoutes(app: FastifyInstance, context: AppContext): void {
  const { storage } = context;

  app.get<OrganizationParams & { Querystring: Query }>(
    "/api/v2/organizations/:organization/policy-sets",
    jsonApiEndpoint({
      summary: "List policy sets",
      query: {
        "page[number]": "Page to return, from 1",
        "page[size]": `Sets per page; default ${defaultPageSize}, at most ${maxPageSize}`,
        "search[name]": "Only sets whose name contains this text",
        "filter[kind]": "sentinel or opa",
        "filter[versioned]": "true: only sets that hold versions; false: only the others",
        include: policySetIncludes.join(", "),
      },
      success: { status: 200, description: "One page", schema: policySetListDocument },
    }),
    async (request, reply) => {
      const { organization } = request.params;
      authorize(request, organization, "read");
      const query = request.query;
      const page = requestedPage(query);
      const includes = requestedIncludes(query);
      const versioned = oneOf(query, "filter[versioned]", ["true", "false"] as const);
      const { items, totalCount } = storage.listPolicySets({
        organization,
        search: query["search[name]"],
        kind: oneOf(query, "filter[kind]", policySetKinds),
        versioned: versioned === undefined ? undefined : versioned === "true",
        limit: page.pageSize,
        offset: page.offset,
      });
      return send(reply, {
        data: items.map(policySetResource),
        ...includedFor(storage, items, includes),
        ...paginationOf(
          request,
          `/api/v2/organizations/${encodeURIComponent(organization)}/policy-sets`,
          page,
          totalCount,
        ),
      });
    },
  );

  app.post<OrganizationParams>(
    "/api/v2/organizations/:organization/policy-sets",
    jsonApiEndpoint({
      summary: "Create a policy set",
      request: createPolicySetRequest,
      success: { status: 201, description: "Created", schema: policySetDocument },
    }),
    async (request, reply) => {
      const { organization } = request.params;
      authorize(request, organization, "managePolicies");
      const { attributes, relationships = {} } = parseBody(
        createPolicySetRequest,
        withoutEmptyCredentials(request.body),
      ).data;
      const kind = attributes.kind ?? "sentinel";
      const global = attributes.global ?? false;
      const agentEnabled = kind === "opa" || (attributes["agent-enabled"] ?? false);
      const problems = settingProblems(kind, agentEnabled, attributes);
      const idsOf = (relationship: PolicySetRelationship) => [
        ...new Set((relationships[relationship]?.data ?? []).map((item) => item.id)),
      ];
      for (const relationship of ["policies", ...scopeRelationshipNames] as const) {
        problems.push(
          ...checkMembers(storage, { organization, kind }, relationship, idsOf(relationship), (index) => [
            "data",
            "relationships",
            relationship,
            "data",
            String(index),
            "id",
          ]),
        );
      }
      if (global) problems.push(...globalScopeProblems(idsOf("workspaces"), idsOf("projects")));
      const vcs = vcsSettings(storage, organization, attributes, undefined, problems);
      if (vcs.vcsRepo && idsOf("policies").length > 0) {
        problems.push(invalidAttribute(["data", "relationships", "policies"], bothKindsMessage));
      }
      if (problems.length > 0) throw new ApiError(422, problems);
      const created = storage.createPolicySet({
        ...vcs,
        organization,
        name: attributes.name,
        description: attributes.description ?? null,
        kind,
        global,
        overridable: overridableOf(kind, agentEnabled, attributes.overridable),
        agentEnabled,
        policyToolVersion: attributes["policy-tool-version"] ?? "latest",
        policyIds: idsOf("policies"),
        scope: Object.fromEntries(scopeRelationshipNames.map((name) => [name, idsOf(name)])) as Record<
          ScopeRelationship,
          string[]
        >,
      });
      if (created === "name-taken") throw alreadyTaken("name");
      reply.code(201);
      if (created.vcsRepo) await startVcsIngress(storage, created);
      return send(reply, { data: policySetResource(storage.policySet(created.id) ?? created) });
    },
  );

  app.get<SetParams & { Querystring: Query }>(
    "/api/v2/policy-sets/:policySetId",
    jsonApiEndpoint({
      summary: "Show a policy set",
      query: { include: policySetIncludes.join(", ") },
      success: { status: 200, description: "The set", schema: policySetDocument },
    }),
    async (request, reply) => {
      const includes = requestedIncludes(request.query);
      const policySet = loadPolicySet(storage, request, "read");
      return send(reply, { data: policySetResource(policySet), ...includedFor(storage, [policySet], includes) });
    },
  );

  app.patch<SetParams>(
    "/api/v2/policy-sets/:policySetId",
    jsonApiEndpoint({
      summary: "Update a policy set: attributes left out keep their value; kind cannot change",
      request: updatePolicySetRequest,
      success: { status: 200, description: "The updated set", schema: policySetDocument },
      moreErrors: [409],
    }),
    async (request, reply) => {
      const policySet = loadPolicySet(storage, request, "managePolicies");
      const id = (request.body as { data?: { id?: unknown } } | undefined)?.data?.id;
      if (typeof id === "string" && id !== policySet.id) {
        throw ApiError.single(409, "conflict", `data.id "${id}" is not the set in the path (${policySet.id})`, {
          pointer: "/data/id",
        });
      }
      const { attributes } = parseBody(updatePolicySetRequest, withoutEmptyCredentials(request.body)).data;
      const agentEnabled = policySet.kind === "opa" || (attributes["agent-enabled"] ?? policySet.agentEnabled);
      const problems = settingProblems(policySet.kind, agentEnabled, attributes);
      const vcs = vcsSettings(storage, policySet.organization, attributes, policySet, problems);
      if (vcs.vcsRepo && policySet.policyIds.length > 0) {
        problems.push(invalidAttribute(["data", "attributes", "vcs-repo"], bothKindsMessage));
      }
      if (problems.length > 0) throw new ApiError(422, problems);
      const updated = storage.updatePolicySet(policySet.id, {
        ...vcs,
        ...(attributes.name !== undefined ? { name: attributes.name } : {}),
        ...("description" in attributes ? { description: attributes.description ?? null } : {}),
        ...(attributes.global !== undefined ? { global: attributes.global } : {}),
        ...(attributes["policy-tool-version"] !== undefined
          ? { policyToolVersion: attributes["policy-tool-version"] }
          : {}),
        agentEnabled,
        overridable: overridableOf(policySet.kind, agentEnabled, attributes.overridable ?? policySet.overridable),
      });
      if (updated === "name-taken") throw alreadyTaken("name");
      if (!updated) throw notFound();
      // A new repository, branch or policies path is read at once, as the service does.
      const moved =
        updated.vcsRepo !== null &&
        (JSON.stringify(updated.vcsRepo) !== JSON.stringify(policySet.vcsRepo) ||
          updated.policiesPath !== policySet.policiesPath);
      if (moved) await startVcsIngress(storage, updated);
      return send(reply, { data: policySetResource(storage.policySet(updated.id) ?? updated) });
    },
  );

  app.delete<SetParams>(
    "/api/v2/policy-sets/:policySetId",
    jsonApiEndpoint({ summary: "Delete a policy set", success: { status: 204, description: "Deleted" } }),
    async (request, reply) => {
      const policySet = loadPolicySet(storage, request, "managePolicies");
      if (!storage.deletePolicySet(policySet.id)) throw notFound();
      return reply.code(204).send();
    },
  );

  registerRelationshipRoutes(app, storage);
  registerVersionRoutes(app, context);
  registerParameterRoutes(app, storage);
}

type VcsAttributes = {
  "vcs-repo"?:
    | {
        identifier: string;
        branch?: string | null | undefined;
        "ingress-submodules"?: boolean | null | undefined;
        "oauth-token-id"?: string | null | undefined;
        "github-app-installation-id"?: string | null | undefined;
      }
    | null
    | undefined;
  "policies-path"?: string | null | undefined;
  "policy-update-patterns"?: string[] | undefined;
};

/**
 * A set's version control from a request, over what it held (`current`, for an update): the credential must be one
 * of the organization's VCS connections (or a GitHub App installation); a policies path or update patterns without a
 * repository say nothing. Problems go into `problems`, as 422s naming the attribute.
 */
function vcsSettings(
  storage: Storage,
  organization: string,
  attributes: VcsAttributes,
  current: PolicySetRecord | undefined,
  problems: JsonApiErrorObject[],
): Pick<PolicySetRecord, "vcsRepo" | "policiesPath" | "policyUpdatePatterns"> {
  const requested = attributes["vcs-repo"];
  let vcsRepo = current?.vcsRepo ?? null;
  if (requested === null) vcsRepo = null;
  else if (requested !== undefined) {
    const tokenId = requested["oauth-token-id"] ?? null;
    const installationId = requested["github-app-installation-id"] ?? null;
    const credential = storage.vcsCredential((tokenId ?? installationId) as string);
    const pointer = ["data", "attributes", "vcs-repo", tokenId ? "oauth-token-id" : "github-app-installation-id"];
    if (!credential || (tokenId && credential.organization !== organization)) {
      problems.push(
        invalidAttribute(
          pointer,
          tokenId
            ? `OAuth token ${tokenId} is not one of organization "${organization}"'s VCS connections`
            : `GitHub App installation ${installationId} was not found`,
        ),
      );
    }
    // An organization's VCS connection reaches the repositories its account can: here, those the seed gives it.
    const repository = storage.vcsRepository(requested.identifier);
    const reachable = repository?.organizations ?? null;
    if (tokenId && credential && reachable !== null && !reachable.includes(organization)) {
      problems.push(
        invalidAttribute(
          ["data", "attributes", "vcs-repo", "identifier"],
          `repository ${requested.identifier} is not reachable through organization "${organization}"'s VCS connections`,
        ),
      );
    }
    vcsRepo = {
      identifier: requested.identifier,
      branch: requested.branch || null,
      ingressSubmodules: requested["ingress-submodules"] ?? false,
      oauthTokenId: tokenId,
      githubAppInstallationId: installationId,
      serviceProvider: credential?.serviceProvider ?? "github",
    };
  }
  const policiesPath =
    "policies-path" in attributes ? (attributes["policies-path"] ?? null) : (current?.policiesPath ?? null);
  const policyUpdatePatterns = attributes["policy-update-patterns"] ?? current?.policyUpdatePatterns ?? [];
  if (!vcsRepo && (policiesPath || policyUpdatePatterns.length > 0)) {
    problems.push(
      invalidAttribute(
        ["data", "attributes", policiesPath ? "policies-path" : "policy-update-patterns"],
        "applies to sets read from version control: give vcs-repo too",
      ),
    );
  }
  return {
    vcsRepo,
    policiesPath: vcsRepo ? policiesPath : null,
    policyUpdatePatterns: vcsRepo ? policyUpdatePatterns : [],
  };
}

type SettableAttributes = { overridable?: boolean | null | undefined; "agent-enabled"?: boolean | undefined };

/** The rules between a set's kind and its runtime settings, each a 422 naming the attribute. */
function settingProblems(kind: string, agentEnabled: boolean, attributes: SettableAttributes): JsonApiErrorObject[] {
  const problems: JsonApiErrorObject[] = [];
  if (kind === "opa" && attributes["agent-enabled"] === false) {
    problems.push(
      invalidAttribute(["data", "attributes", "agent-enabled"], "cannot be false: OPA sets always run in the agent"),
    );
  }
  if (kind === "tfpolicy" && attributes.overridable === true) {
    problems.push(
      invalidAttribute(
        ["data", "attributes", "overridable"],
        "does not apply to a Terraform policy set: each policy block's enforcement_level says whether it may be overridden (mandatory_overridable)",
      ),
    );
  }
  if (kind === "sentinel" && !agentEnabled && attributes.overridable === true) {
    problems.push(
      invalidAttribute(
        ["data", "attributes", "overridable"],
        "applies to OPA sets and to Sentinel sets with agent-enabled: set agent-enabled too, or leave it out",
      ),
    );
  }
  return problems;
}

function overridableOf(kind: string, agentEnabled: boolean, given: boolean | null | undefined): boolean | null {
  if ((kind === "sentinel" && !agentEnabled) || kind === "tfpolicy") return null;
  return given ?? false;
}

function globalScopeProblems(workspaces: readonly string[], projects: readonly string[]): JsonApiErrorObject[] {
  return (
    [
      ["workspaces", workspaces],
      ["projects", projects],
    ] as const
  ).flatMap(([relationship, ids]) =>
    ids.length > 0
      ? [
          invalidAttribute(
            ["data", "relationships", relationship],
            "cannot be given for a global set, which applies to every workspace: set global to false, or use exclusions",
          ),
        ]
      : [],
  );
}

function registerRelationshipRoutes(app: FastifyInstance, storage: Storage): void {
  for (const relationship of ["policies", ...scopeRelationshipNames] as const) {
    const request = relationshipRequest(relationship);
    for (const [method, change] of [
      ["POST", "add"],
      ["DELETE", "remove"],
    ] as const) {
      app.route<SetParams>({
        method,
        url: `/api/v2/policy-sets/:policySetId/relationships/${relationship}`,
        ...jsonApiEndpoint({
          summary: `${change === "add" ? "Add" : "Remove"} ${relationship} ${change === "add" ? "to" : "from"} a policy set`,
          request,
          success: { status: 204, description: "Done" },
        }),
        handler: async (httpRequest, reply) => {
          const policySet = loadPolicySet(storage, httpRequest, "managePolicies");
          const ids = parseBody(request, httpRequest.body).data.map(({ id }) => id);
          if (change === "add") {
            const problems = checkMembers(storage, policySet, relationship, ids, (index) => [
              "data",
              String(index),
              "id",
            ]);
            if (relationship === "policies" && policySet.versioned) {
              problems.push(invalidAttribute(["data"], bothKindsMessage));
            }
            if (policySet.global && (relationship === "workspaces" || relationship === "projects")) {
              problems.push(
                ...globalScopeProblems(
                  relationship === "workspaces" ? ids : [],
                  relationship === "projects" ? ids : [],
                ),
              );
            }
            if (problems.length > 0) throw new ApiError(422, problems);
          }
          if (relationship === "policies") {
            storage.changeSetMembership(policySet.id, ids, change === "add" ? "join" : "leave");
          } else {
            storage.changeScope(policySet.id, relationship, ids, change);
          }
          return reply.code(204).send();
        },
      });
    }
  }
}

/**
 * The body with an empty `vcs-repo` credential left out: the Terraform provider sends `"github-app-installation-id":
 * ""` beside an OAuth token (and the reverse), which the service takes as absent. The server only; the client sends
 * valid requests.
 */
function withoutEmptyCredentials(body: unknown): unknown {
  const repo = (body as { data?: { attributes?: { "vcs-repo"?: unknown } } } | undefined)?.data?.attributes?.[
    "vcs-repo"
  ];
  if (typeof repo !== "object" || repo === null) return body;
  const cleaned = Object.fromEntries(
    Object.entries(repo).filter(
      ([key, value]) => !(["oauth-token-id", "github-app-installation-id"].includes(key) && value === ""),
    ),
  );
  const data = (body as { data: { attributes: Record<string, unknown> } }).data;
  return { ...(body as object), data: { ...data, attributes: { ...data.attributes, "vcs-repo": cleaned } } };
}
