import type { FastifyInstance, FastifyReply } from "fastify";
import { jsonApiMediaType } from "../../contract/jsonapi";
import {
  createPolicyRequest,
  defaultPageSize,
  type EnforcementLevel,
  enforcePath,
  kindPhrase,
  maxPageSize,
  type PolicyDocument,
  type PolicyKind,
  type PolicyListDocument,
  type PolicyResource,
  policyDocument,
  policyKinds,
  policyListDocument,
  policyRuleViolations,
  policySortOrders,
  updatePolicyRequest,
  wireAttribute,
} from "../../contract/policies";
import { authorize } from "../auth";
import { type AppContext, loadPolicy } from "../context";
import { codePath } from "../download-origin";
import { ApiError, alreadyTaken, badParameter, invalidAttribute, notFound, parseBody } from "../errors";
import { jsonApiEndpoint } from "../openapi";
import { oneOf, paginationOf, type Query, requestedPage } from "../pagination";
import type { PolicyChanges, PolicyRecord, Storage } from "../storage";

type PolicyParams = { Params: { policyId: string } };
type OrganizationParams = { Params: { organization: string } };

/**
 * The level a request asks for. The deprecated `enforce` entry counts only where `enforcement-level` is absent;
 * an entry whose path is not the policy's own file falls back to the kind's default (spec 2.1).
 */
function requestedLevel(
  level: EnforcementLevel | undefined,
  enforce: readonly { path: string; mode: string }[] | undefined,
  name: string,
  kind: PolicyKind,
): EnforcementLevel | undefined {
  if (level !== undefined) return level;
  const entry = enforce?.[0];
  if (!entry) return undefined;
  // The request's rules have checked that the mode is a level of the kind.
  if (entry.path === enforcePath(name, kind)) return entry.mode as EnforcementLevel;
  return kind === "sentinel" ? "hard-mandatory" : "advisory";
}

function policyResource(policy: PolicyRecord): PolicyResource {
  const self = `/api/v2/policies/${policy.id}`;
  const resource: PolicyResource = {
    id: policy.id,
    type: "policies",
    attributes: {
      name: policy.name,
      description: policy.description,
      kind: policy.kind,
      "enforcement-level": policy.enforcementLevel,
      // The service fills `enforce` only once the policy has a file to point at.
      enforce: policy.hasCode ? [{ path: enforcePath(policy.name, policy.kind), mode: policy.enforcementLevel }] : [],
      "policy-set-count": policy.policySetIds.length,
      "updated-at": policy.updatedAt,
    },
    relationships: { organization: { data: { id: policy.organization, type: "organizations" } } },
    links: { self, upload: `${self}/upload`, ...(policy.hasCode ? { download: `${self}/download` } : {}) },
  };
  if (policy.kind === "opa" && policy.query !== null) resource.attributes.query = policy.query;
  if (policy.policySetIds.length > 0) {
    resource.relationships!["policy-sets"] = {
      data: policy.policySetIds.map((id) => ({ id, type: "policy-sets" })),
    };
  }
  return resource;
}

/** JSON:API: a PATCH whose `data.id` names another resource than its URL is a conflict (409), not an update. */
function rejectOtherId(body: unknown, policyId: string): void {
  const id = (body as { data?: { id?: unknown } } | undefined)?.data?.id;
  if (typeof id === "string" && id !== policyId) {
    throw ApiError.single(
      409,
      "conflict",
      `data.id "${id}" is not the policy in the path (${policyId}): send its id or none`,
      {
        pointer: "/data/id",
      },
    );
  }
}

function includesPolicySets(query: Query): boolean {
  if (query.include === undefined) return false;
  if (query.include !== "policy_sets") throw badParameter("include", 'accepts only "policy_sets"');
  return true;
}

function includedPolicySets(storage: Storage, policies: readonly PolicyRecord[]) {
  const ids = [...new Set(policies.flatMap((policy) => policy.policySetIds))];
  return storage
    .policySets(ids)
    .map((set) => ({ id: set.id, type: "policy-sets" as const, attributes: { name: set.name } }));
}

/** Typed by the contract's documents, so the compiler holds every response to them. */
const send = (reply: FastifyReply, body: PolicyDocument | PolicyListDocument) =>
  reply.type(jsonApiMediaType).send(body);

export function registerPolicyRoutes(app: FastifyInstance, { storage, signer, downloadOrigin }: AppContext): void {
  app.post<OrganizationParams>(
    "/api/v2/organizations/:organization/policies",
    jsonApiEndpoint({
      summary: "Create a policy (spec 4.1)",
      request: createPolicyRequest,
      success: { status: 201, description: "Created", schema: policyDocument },
    }),
    async (request, reply) => {
      const { organization } = request.params;
      authorize(request, organization, "managePolicies");
      refuseTerraformPolicy(request.body);
      const { data } = parseBody(createPolicyRequest, request.body);
      const { attributes } = data;
      const kind = attributes.kind ?? "sentinel";
      const policySetIds = (data.relationships?.["policy-sets"].data ?? []).map((set) => set.id);
      const unknown = policySetIds.flatMap((id, index) => {
        const policySet = storage.policySet(id);
        const problem =
          policySet?.organization !== organization
            ? `"${id}" is not a policy set of organization ${organization}`
            : policySet.kind !== kind
              ? `"${id}" is ${kindPhrase(policySet.kind)} set, and this is ${kindPhrase(kind)} policy: a set holds one kind`
              : policySet.versioned
                ? `"${id}" holds uploaded versions, and a set holds versions or policies, never both`
                : undefined;
        return problem
          ? [invalidAttribute(["data", "relationships", "policy-sets", "data", String(index), "id"], problem)]
          : [];
      });
      if (unknown.length > 0) throw new ApiError(422, unknown);
      const created = storage.createPolicy({
        organization,
        name: attributes.name,
        description: attributes.description ?? null,
        kind,
        query: attributes.query ?? null,
        // The schema has checked that one of enforcement-level and enforce is present.
        enforcementLevel: requestedLevel(attributes["enforcement-level"], attributes.enforce, attributes.name, kind)!,
        // A set named twice holds the policy once: membership is a set, and stored as one row per pair.
        policySetIds: [...new Set(policySetIds)],
      });
      if (created === "name-taken") {
        throw alreadyTaken("name");
      }
      reply.code(201);
      return send(reply, { data: policyResource(created) });
    },
  );

  app.get<OrganizationParams & { Querystring: Query }>(
    "/api/v2/organizations/:organization/policies",
    jsonApiEndpoint({
      summary: "List policies (spec 4.9)",
      query: {
        "page[number]": "Page to return, from 1",
        "page[size]": `Policies per page; default ${defaultPageSize}, at most ${maxPageSize}`,
        "search[name]": "Only policies whose name contains this text",
        "filter[kind]": "sentinel or opa",
        sort: policySortOrders.join(", "),
        include: "policy_sets",
      },
      success: { status: 200, description: "One page", schema: policyListDocument },
    }),
    async (request, reply) => {
      const { organization } = request.params;
      authorize(request, organization, "read");
      const query = request.query;
      const page = requestedPage(query);
      const kind = oneOf(query, "filter[kind]", policyKinds);
      const sort = oneOf(query, "sort", policySortOrders);
      const search = query["search[name]"];
      const withPolicySets = includesPolicySets(query);
      const { items, totalCount } = storage.listPolicies({
        organization,
        search,
        kind,
        sort,
        limit: page.pageSize,
        offset: page.offset,
      });
      return send(reply, {
        data: items.map(policyResource),
        ...(withPolicySets ? { included: includedPolicySets(storage, items) } : {}),
        ...paginationOf(
          request,
          `/api/v2/organizations/${encodeURIComponent(organization)}/policies`,
          page,
          totalCount,
        ),
      });
    },
  );

  app.get<PolicyParams & { Querystring: Query }>(
    "/api/v2/policies/:policyId",
    jsonApiEndpoint({
      summary: "Show a policy (spec 4.2)",
      query: { include: "policy_sets" },
      success: { status: 200, description: "The policy", schema: policyDocument },
    }),
    async (request, reply) => {
      const withPolicySets = includesPolicySets(request.query);
      const policy = loadPolicy(storage, request, "read");
      return send(reply, {
        data: policyResource(policy),
        ...(withPolicySets ? { included: includedPolicySets(storage, [policy]) } : {}),
      });
    },
  );

  app.patch<PolicyParams>(
    "/api/v2/policies/:policyId",
    jsonApiEndpoint({
      summary: "Update a policy (spec 4.4)",
      request: updatePolicyRequest,
      success: { status: 200, description: "The updated policy", schema: policyDocument },
      moreErrors: [409],
    }),
    async (request, reply) => {
      const policy = loadPolicy(storage, request, "managePolicies");
      rejectOtherId(request.body, policy.id);
      const { attributes } = parseBody(updatePolicyRequest, request.body).data;
      const violations = policyRuleViolations({
        kind: policy.kind,
        query: attributes.query,
        enforcementLevel: attributes["enforcement-level"],
        enforce: attributes.enforce,
        isCreate: false,
      });
      if (violations.length > 0) {
        throw new ApiError(
          422,
          violations.map((violation) =>
            invalidAttribute(["data", "attributes", wireAttribute[violation.property]], violation.message),
          ),
        );
      }
      const changes: PolicyChanges = {
        ...("description" in attributes ? { description: attributes.description ?? null } : {}),
        ...(attributes.query !== undefined ? { query: attributes.query } : {}),
        enforcementLevel: requestedLevel(attributes["enforcement-level"], attributes.enforce, policy.name, policy.kind),
      };
      // As the service (a Rails application) does, an update that changes no value (go-tfe's empty Update, the
      // tfe provider re-sending what is there) leaves the policy and its updated-at as they are.
      const changesSomething = (Object.keys(changes) as (keyof PolicyChanges)[]).some(
        (key) => changes[key] !== undefined && changes[key] !== policy[key],
      );
      const updated = changesSomething ? storage.updatePolicy(policy.id, changes) : policy;
      if (!updated) throw notFound();
      return send(reply, { data: policyResource(updated) });
    },
  );

  app.delete<PolicyParams>(
    "/api/v2/policies/:policyId",
    jsonApiEndpoint({
      summary: "Delete a policy (spec 4.10)",
      success: { status: 204, description: "Deleted" },
    }),
    async (request, reply) => {
      const policy = loadPolicy(storage, request, "managePolicies");
      if (!storage.deletePolicy(policy.id)) throw notFound();
      return reply.code(204).send();
    },
  );

  app.get<PolicyParams>(
    "/api/v2/policies/:policyId/download",
    jsonApiEndpoint({
      summary: "Download policy code: redirects to a short-lived signed URL on another origin (no token there)",
      success: { status: 302, description: "Location: the signed URL" },
    }),
    async (request, reply) => {
      const policy = loadPolicy(storage, request, "read");
      if (!policy.hasCode) throw ApiError.single(404, "not found", "The policy has no code yet: upload it first.");
      return reply.redirect(signer.sign(downloadOrigin(), codePath(policy.id)), 302);
    },
  );
}

/**
 * A Terraform policy is no individual policy: its code lives only in a policy set's versions. Said in those words
 * rather than as a kind outside the list, since `tfpolicy` is a kind of the service, for sets.
 */
function refuseTerraformPolicy(body: unknown): void {
  const kind = (body as { data?: { attributes?: { kind?: unknown } } } | undefined)?.data?.attributes?.kind;
  if (kind !== "tfpolicy") return;
  throw ApiError.single(
    422,
    "invalid attribute",
    "Terraform policy (tfpolicy) is not a kind of individual policy: its code lives in a policy set's versions; create a policy set of kind tfpolicy and upload its folder",
    { pointer: "/data/attributes/kind" },
  );
}
