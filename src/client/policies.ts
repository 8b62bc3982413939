import { z } from "zod";
import { TfeValidationError } from "./errors";
import { type Pagination, paginationLinks, paginationMeta, resourceIdentifier, toPagination } from "./jsonapi";
import { pathSegment } from "./paths";
import type { Transport } from "./transport";

// ---------------------------------------------------------------------------------------------------------------
// Vocabulary (spec 2.1)
// ---------------------------------------------------------------------------------------------------------------

export const policyKinds = ["sentinel", "opa"] as const;
export type PolicyKind = (typeof policyKinds)[number];

export const enforcementLevelsByKind = {
  sentinel: ["hard-mandatory", "soft-mandatory", "advisory"],
  opa: ["mandatory", "advisory"],
} as const satisfies Record<PolicyKind, readonly string[]>;
export const enforcementLevels = ["hard-mandatory", "soft-mandatory", "advisory", "mandatory"] as const;
export type EnforcementLevel = (typeof enforcementLevels)[number];

/** Letters, digits, `-` and `_`: the service's rule for policy names. */
export const policyNamePattern = /^[A-Za-z0-9_-]+$/;
/** Largest policy code the service accepts (spec 8). */
export const maxPolicyCodeBytes = 10 * 1024 * 1024;
export const maxPageSize = 100;
export const defaultPageSize = 20;
export const policySortOrders = ["name", "-name", "updated-at", "-updated-at"] as const;

/** File name the deprecated `enforce` entry points at: `<NAME>.sentinel` or `<NAME>.rego`. */
export function enforcePath(name: string, kind: PolicyKind): string {
  return `${name}.${kind === "opa" ? "rego" : "sentinel"}`;
}

/**
 * Checks the rules that tie a policy's attributes together (spec 2.1, 4.1): the level is valid for the kind,
 * `query` goes with `opa` only and is required there, and the deprecated `enforce` agrees with `enforcement-level`.
 * With `kind` undefined (an update, which does not send it) only the rules that hold for every kind are checked.
 * Returns one message per broken rule, each naming the attribute and the fix.
 */
export function policyRuleViolations(policy: {
  name?: string | undefined;
  kind: PolicyKind | undefined;
  query?: string | null | undefined;
  enforcementLevel?: string | undefined;
  enforce?: readonly { path: string; mode: string }[] | undefined;
  isCreate: boolean;
}): { attribute: string; message: string }[] {
  const violations: { attribute: string; message: string }[] = [];
  const levels: readonly string[] = policy.kind ? enforcementLevelsByKind[policy.kind] : enforcementLevels;
  const describeLevels = levels.map((level) => `"${level}"`).join(", ");
  const ofKind = policy.kind ? ` of ${policy.kind} policies` : "";
  if (policy.enforcementLevel !== undefined && !levels.includes(policy.enforcementLevel)) {
    violations.push({
      attribute: "enforcement-level",
      message: `"${policy.enforcementLevel}" is not an enforcement level${ofKind}: use one of ${describeLevels}`,
    });
  }
  if (policy.kind === "sentinel" && policy.query !== undefined && policy.query !== null) {
    violations.push({ attribute: "query", message: "is only valid for opa policies: remove it, or set kind to opa" });
  }
  if (policy.kind === "opa" && policy.isCreate && !policy.query) {
    violations.push({ attribute: "query", message: 'is required for opa policies, e.g. "data.terraform.deny"' });
  }
  if (policy.enforce) {
    if (policy.enforce.length !== 1) {
      violations.push({
        attribute: "enforce",
        message: "must hold exactly one {path, mode} entry: policies have one file",
      });
    }
    for (const entry of policy.enforce) {
      if (!levels.includes(entry.mode)) {
        violations.push({
          attribute: "enforce",
          message: `mode "${entry.mode}" is not an enforcement level${ofKind}: use one of ${describeLevels}`,
        });
      } else if (policy.enforcementLevel !== undefined && entry.mode !== policy.enforcementLevel) {
        violations.push({
          attribute: "enforce",
          message: `mode "${entry.mode}" contradicts enforcement-level "${policy.enforcementLevel}": set only enforcement-level`,
        });
      }
    }
  }
  if (policy.isCreate && policy.enforcementLevel === undefined && !policy.enforce) {
    violations.push({ attribute: "enforcement-level", message: `is required: use one of ${describeLevels}` });
  }
  return violations;
}

// ---------------------------------------------------------------------------------------------------------------
// Wire documents
// ---------------------------------------------------------------------------------------------------------------

const enforceEntry = z.strictObject({ path: z.string().min(1), mode: z.string().min(1) });
const policySetIdentifier = z.strictObject({ id: z.string().min(1), type: z.literal("policy-sets") });

function addRuleViolations(
  attributes: {
    name?: string;
    kind?: PolicyKind;
    query?: string | null;
    "enforcement-level"?: string;
    enforce?: { path: string; mode: string }[];
  },
  ctx: z.RefinementCtx,
  isCreate: boolean,
  kindWhenAbsent: PolicyKind | undefined,
) {
  for (const violation of policyRuleViolations({
    name: attributes.name,
    kind: attributes.kind ?? kindWhenAbsent,
    query: attributes.query,
    enforcementLevel: attributes["enforcement-level"],
    enforce: attributes.enforce,
    isCreate,
  })) {
    ctx.addIssue({ code: "custom", path: ["data", "attributes", violation.attribute], message: violation.message });
  }
}

/** Body of `POST /organizations/:org/policies` (spec 4.1), validated strictly before it is sent. */
export const createPolicyRequest = z
  .strictObject({
    data: z.strictObject({
      type: z.literal("policies"),
      attributes: z.strictObject({
        name: z.string().min(1, "is required").regex(policyNamePattern, "may hold only letters, digits, '-' and '_'"),
        description: z.string().nullable().optional(),
        kind: z.enum(policyKinds).optional(),
        query: z.string().min(1).optional(),
        "enforcement-level": z.enum(enforcementLevels).optional(),
        enforce: z.array(enforceEntry).optional(),
      }),
      relationships: z
        .strictObject({ "policy-sets": z.strictObject({ data: z.array(policySetIdentifier) }) })
        .optional(),
    }),
  })
  .superRefine((document, ctx) => addRuleViolations(document.data.attributes, ctx, true, "sentinel"));
export type CreatePolicyRequest = z.infer<typeof createPolicyRequest>;

const updatePolicyAttributes = z.strictObject({
  description: z.string().nullable().optional(),
  query: z.string().min(1).optional(),
  "enforcement-level": z.enum(enforcementLevels).optional(),
  enforce: z.array(enforceEntry).optional(),
});

/** Body of `PATCH /policies/:id` (spec 4.4). Rules that need the policy's kind are checked by the caller. */
export const updatePolicyRequest = z
  .strictObject({
    // JSON:API says a PATCH names the resource it changes; go-tfe leaves the id out, so both are accepted.
    data: z.strictObject({
      type: z.literal("policies"),
      id: z.string().min(1).optional(),
      attributes: updatePolicyAttributes,
    }),
  })
  .superRefine((document, ctx) => addRuleViolations(document.data.attributes, ctx, false, undefined));
export type UpdatePolicyRequest = z.infer<typeof updatePolicyRequest>;

/** One policy resource as the service sends it: lenient, see service-facts. */
export const policyResource = z.object({
  id: z.string(),
  type: z.literal("policies"),
  attributes: z.object({
    name: z.string(),
    description: z.string().nullish(),
    kind: z.string().nullish(),
    query: z.string().nullish(),
    "enforcement-level": z.string().nullish(),
    enforce: z.array(z.object({ path: z.string(), mode: z.string() })).nullish(),
    "policy-set-count": z.number().nullish(),
    "updated-at": z.string().nullish(),
  }),
  relationships: z
    .object({
      organization: z.object({ data: resourceIdentifier.nullish() }).optional(),
      "policy-sets": z.object({ data: z.array(resourceIdentifier).nullish() }).optional(),
    })
    .optional(),
  links: z.object({ self: z.string(), upload: z.string(), download: z.string() }).partial().optional(),
});
export type PolicyResource = z.infer<typeof policyResource>;

/** A policy-set record in `included`; the spec shows only its identity. */
export const includedResource = z.object({
  id: z.string(),
  type: z.string(),
  attributes: z.record(z.string(), z.unknown()).optional(),
});

export const policyDocument = z.object({ data: policyResource, included: z.array(includedResource).optional() });
export const policyListDocument = z.object({
  data: z.array(policyResource),
  included: z.array(includedResource).optional(),
  meta: z.object({ pagination: paginationMeta.optional() }).passthrough().optional(),
  links: paginationLinks.optional(),
});

// ---------------------------------------------------------------------------------------------------------------
// Client types
// ---------------------------------------------------------------------------------------------------------------

/** A policy as the client returns it, camel-cased, with the service's defaults filled in. */
export interface Policy {
  id: string;
  name: string;
  description: string | null;
  kind: PolicyKind;
  query: string | null;
  enforcementLevel: string | null;
  enforce: { path: string; mode: string }[];
  policySetCount: number;
  updatedAt: string | null;
  organization: string | null;
  /** Ids of the policy sets holding the policy; `undefined` where the response left the relationship out. */
  policySetIds: string[] | undefined;
  /** Whether the service holds code for the policy (its document links to a download). */
  hasCode: boolean;
}

export function toPolicy(resource: PolicyResource): Policy {
  const attributes = resource.attributes;
  const kind: PolicyKind = attributes.kind === "opa" ? "opa" : "sentinel";
  const enforce = attributes.enforce ?? [];
  const policySets = resource.relationships?.["policy-sets"];
  return {
    id: resource.id,
    name: attributes.name,
    description: attributes.description ?? null,
    kind,
    query: attributes.query ?? null,
    enforcementLevel: attributes["enforcement-level"] ?? enforce[0]?.mode ?? null,
    enforce,
    policySetCount: attributes["policy-set-count"] ?? policySets?.data?.length ?? 0,
    updatedAt: attributes["updated-at"] ?? null,
    organization: resource.relationships?.organization?.data?.id ?? null,
    policySetIds: policySets ? (policySets.data ?? []).map((set) => set.id) : undefined,
    hasCode: resource.links?.download !== undefined || attributes["updated-at"] != null,
  };
}

export interface CreatePolicyOptions {
  name: string;
  description?: string | null;
  kind?: PolicyKind;
  /** OPA only, and required there. */
  query?: string;
  enforcementLevel?: EnforcementLevel;
  /** Deprecated by the service in favour of `enforcementLevel`; sent as given. */
  enforce?: { path: string; mode: string }[];
  policySetIds?: string[];
}

export interface UpdatePolicyOptions {
  /** `null` clears the description. */
  description?: string | null;
  query?: string;
  enforcementLevel?: EnforcementLevel;
  enforce?: { path: string; mode: string }[];
}

export interface ListPoliciesOptions {
  search?: string;
  kind?: PolicyKind;
  includePolicySets?: boolean;
  pageNumber?: number;
  /** 1 to 100; the service's default is 20. */
  pageSize?: number;
  sort?: (typeof policySortOrders)[number];
}

export interface PolicyPage {
  items: Policy[];
  pagination: Pagination;
  /** Policy sets from `include=policy_sets`. */
  included: { id: string; type: string }[];
}

export function createPolicyBody(options: CreatePolicyOptions): CreatePolicyRequest {
  const attributes: CreatePolicyRequest["data"]["attributes"] = { name: options.name };
  if (options.description !== undefined) attributes.description = options.description;
  if (options.kind !== undefined) attributes.kind = options.kind;
  if (options.query !== undefined) attributes.query = options.query;
  if (options.enforcementLevel !== undefined) attributes["enforcement-level"] = options.enforcementLevel;
  if (options.enforce !== undefined) attributes.enforce = options.enforce;
  const body: CreatePolicyRequest = { data: { type: "policies", attributes } };
  if (options.policySetIds && options.policySetIds.length > 0) {
    body.data.relationships = {
      "policy-sets": { data: options.policySetIds.map((id) => ({ id, type: "policy-sets" as const })) },
    };
  }
  return body;
}

export function updatePolicyBody(options: UpdatePolicyOptions): UpdatePolicyRequest {
  const attributes: UpdatePolicyRequest["data"]["attributes"] = {};
  if (options.description !== undefined) attributes.description = options.description;
  if (options.query !== undefined) attributes.query = options.query;
  if (options.enforcementLevel !== undefined) attributes["enforcement-level"] = options.enforcementLevel;
  if (options.enforce !== undefined) attributes.enforce = options.enforce;
  return { data: { type: "policies", attributes } };
}

function listQuery(options: ListPoliciesOptions): Record<string, string> {
  const query: Record<string, string> = {};
  if (options.pageNumber !== undefined) {
    if (!Number.isInteger(options.pageNumber) || options.pageNumber < 1) {
      throw new TfeValidationError([{ field: "pageNumber", message: "must be a whole number from 1" }]);
    }
    query["page[number]"] = String(options.pageNumber);
  }
  if (options.pageSize !== undefined) {
    if (!Number.isInteger(options.pageSize) || options.pageSize < 1 || options.pageSize > maxPageSize) {
      throw new TfeValidationError([
        { field: "pageSize", message: `must be a whole number from 1 to ${maxPageSize} (the service's maximum)` },
      ]);
    }
    query["page[size]"] = String(options.pageSize);
  }
  if (options.search !== undefined) query["search[name]"] = options.search;
  if (options.kind !== undefined) {
    if (!policyKinds.includes(options.kind)) {
      throw new TfeValidationError([{ field: "kind", message: 'must be "sentinel" or "opa"' }]);
    }
    query["filter[kind]"] = options.kind;
  }
  if (options.includePolicySets) query.include = "policy_sets";
  if (options.sort !== undefined) {
    if (!policySortOrders.includes(options.sort)) {
      throw new TfeValidationError([{ field: "sort", message: `must be one of ${policySortOrders.join(", ")}` }]);
    }
    query.sort = options.sort;
  }
  return query;
}

// ---------------------------------------------------------------------------------------------------------------
// Calls (spec 4.1-4.4, 4.9, 4.10 and the download endpoint of service-facts)
// ---------------------------------------------------------------------------------------------------------------

/** Option names for validation errors, keyed by the wire names of the request documents. */
const policyFieldNames = {
  "enforcement-level": "enforcementLevel",
  "data.relationships.policy-sets.data": "policySetIds",
};

export class PoliciesApi {
  constructor(private readonly transport: Transport) {}

  /** Creates the policy object, without code: upload it next with {@link upload}. */
  async create(organization: string, options: CreatePolicyOptions): Promise<Policy> {
    const body = this.transport.validate(createPolicyRequest, createPolicyBody(options), policyFieldNames);
    const response = await this.transport.json({
      method: "POST",
      path: `/api/v2/organizations/${pathSegment("organization", organization)}/policies`,
      body,
      schema: policyDocument,
    });
    return toPolicy(response.data);
  }

  async read(policyId: string, options: { includePolicySets?: boolean } = {}): Promise<Policy> {
    const response = await this.transport.json({
      method: "GET",
      path: `/api/v2/policies/${pathSegment("policyId", policyId)}`,
      query: options.includePolicySets ? { include: "policy_sets" } : undefined,
      schema: policyDocument,
    });
    return toPolicy(response.data);
  }

  /** Sends only the attributes given; `description: null` clears the description. */
  async update(policyId: string, options: UpdatePolicyOptions): Promise<Policy> {
    const body = this.transport.validate(updatePolicyRequest, updatePolicyBody(options), policyFieldNames);
    const response = await this.transport.json({
      method: "PATCH",
      path: `/api/v2/policies/${pathSegment("policyId", policyId)}`,
      body,
      schema: policyDocument,
    });
    return toPolicy(response.data);
  }

  async delete(policyId: string): Promise<void> {
    await this.transport.send({ method: "DELETE", path: `/api/v2/policies/${pathSegment("policyId", policyId)}` });
  }

  /** Uploads the policy's code (raw bytes, at most 10 MB). */
  async upload(policyId: string, code: string | Uint8Array): Promise<void> {
    const bytes = typeof code === "string" ? Buffer.from(code, "utf8") : code;
    if (bytes.byteLength > maxPolicyCodeBytes) {
      throw new TfeValidationError([
        {
          field: "code",
          message: `is ${bytes.byteLength} bytes; the service accepts at most ${maxPolicyCodeBytes} bytes (10 MB): split the policy`,
        },
      ]);
    }
    await this.transport.send({
      method: "PUT",
      path: `/api/v2/policies/${pathSegment("policyId", policyId)}/upload`,
      rawBody: bytes,
      contentType: "application/octet-stream",
    });
  }

  /** Downloads the policy's code, following the redirect to the temporary URL without the token. */
  async download(policyId: string): Promise<Buffer> {
    return this.transport.download(`/api/v2/policies/${pathSegment("policyId", policyId)}/download`);
  }

  /** One page of an organization's policies. */
  async list(organization: string, options: ListPoliciesOptions = {}): Promise<PolicyPage> {
    const response = await this.transport.json({
      method: "GET",
      path: `/api/v2/organizations/${pathSegment("organization", organization)}/policies`,
      query: listQuery(options),
      schema: policyListDocument,
    });
    return {
      items: response.data.map(toPolicy),
      pagination: toPagination(response.meta?.pagination, response.data.length),
      included: (response.included ?? []).map(({ id, type }) => ({ id, type })),
    };
  }

  /** Every policy of an organization, page after page, following `next-page` to the end. */
  async *listAll(organization: string, options: Omit<ListPoliciesOptions, "pageNumber"> = {}): AsyncGenerator<Policy> {
    let pageNumber: number | null = 1;
    while (pageNumber !== null) {
      const page: PolicyPage = await this.list(organization, { pageSize: maxPageSize, ...options, pageNumber });
      yield* page.items;
      const next = page.pagination.nextPage;
      // A next-page that does not move forward (a misbehaving proxy or server) would otherwise loop forever.
      pageNumber = next !== null && next > pageNumber ? next : null;
    }
  }
}
