import {
  type CreatePolicyRequest,
  createPolicyRequest,
  type EnforcementLevel,
  type LenientPolicyResource,
  lenientPolicyDocument,
  lenientPolicyListDocument,
  maxPageSize,
  maxPolicyCodeBytes,
  type PolicyKind,
  type PolicySortOrder,
  policyKinds,
  policySortOrders,
  type UpdatePolicyRequest,
  updatePolicyRequest,
} from "../contract/policies";
import { TfeValidationError } from "./errors";
import { everyPage, exactlyNamed, type Pagination, toPagination } from "./pagination";
import { pathSegment } from "./paths";
import type { Transport } from "./transport";
import { validRequest } from "./validation";

/** The policy calls (spec 4.1-4.4, 4.9, 4.10 and the download endpoint of service-facts). */
export interface Policies {
  /** One page of an organization's policies. */
  list(organization: string, options?: ListPoliciesOptions): Promise<PolicyPage>;
  /** Every policy of an organization, page after page, following `next-page` to the end. */
  listAll(organization: string, options?: Omit<ListPoliciesOptions, "pageNumber">): AsyncGenerator<Policy>;
  findByName(organization: string, name: string): Promise<Policy | undefined>;
  /** Creates the policy object, without code: upload it next with {@link Policies.upload}. */
  create(organization: string, options: CreatePolicyOptions): Promise<Policy>;
  read(policyId: string, options?: ReadPolicyOptions): Promise<Policy>;
  /** Sends only the attributes given; `description: null` clears the description. */
  update(policyId: string, options: UpdatePolicyOptions): Promise<Policy>;
  delete(policyId: string): Promise<void>;
  /** Uploads the policy's code (raw bytes, at most 10 MB). */
  upload(policyId: string, code: string | Uint8Array): Promise<UploadAnswer>;
  /** Downloads the policy's code, following the redirect to the temporary URL without the token. */
  download(policyId: string): Promise<Buffer>;
}

export class PoliciesApi implements Policies {
  constructor(private readonly transport: Transport) {}

  async list(organization: string, options: ListPoliciesOptions = {}): Promise<PolicyPage> {
    const response = await this.transport.json({
      method: "GET",
      path: `/api/v2/organizations/${pathSegment("organization", organization)}/policies`,
      query: validListOptions(options),
      schema: lenientPolicyListDocument,
    });
    return {
      items: response.data.map(toPolicy),
      pagination: toPagination(response.meta?.pagination, response.data.length),
      included: (response.included ?? []).map(({ id, type }) => ({ id, type })),
    };
  }

  async *listAll(organization: string, options: Omit<ListPoliciesOptions, "pageNumber"> = {}): AsyncGenerator<Policy> {
    yield* everyPage((pageNumber) => this.list(organization, { pageSize: maxPageSize, ...options, pageNumber }));
  }

  /** The organization's policy named exactly `name`, or undefined: a search by name, then an exact match. */
  findByName(organization: string, name: string): Promise<Policy | undefined> {
    return exactlyNamed(this.listAll(organization, { search: name }), name);
  }

  async create(organization: string, options: CreatePolicyOptions): Promise<Policy> {
    const response = await this.transport.json({
      method: "POST",
      path: `/api/v2/organizations/${pathSegment("organization", organization)}/policies`,
      body: validCreateOptions(options),
      schema: lenientPolicyDocument,
    });
    return toPolicy(response.data);
  }

  async read(policyId: string, options: ReadPolicyOptions = {}): Promise<Policy> {
    const response = await this.transport.json({
      method: "GET",
      path: `/api/v2/policies/${pathSegment("policyId", policyId)}`,
      query: options.includePolicySets ? { include: "policy_sets" } : undefined,
      schema: lenientPolicyDocument,
    });
    const policy = toPolicy(response.data);
    // A show leaves the relationship out when the policy is in no set (service facts); only lists and updates may
    // leave it out of a policy that has sets.
    return { ...policy, policySetIds: policy.policySetIds ?? [] };
  }

  async update(policyId: string, options: UpdatePolicyOptions): Promise<Policy> {
    const response = await this.transport.json({
      method: "PATCH",
      path: `/api/v2/policies/${pathSegment("policyId", policyId)}`,
      body: validUpdateOptions(options),
      schema: lenientPolicyDocument,
    });
    return toPolicy(response.data);
  }

  async delete(policyId: string): Promise<void> {
    await this.transport.send({ method: "DELETE", path: `/api/v2/policies/${pathSegment("policyId", policyId)}` });
  }

  /**
   * Uploads the policy's code. The upload answers no body: what it gives back is when the service answered (its
   * `Date` header, to the second) and the latest its clock can have read then, which bound the `updated-at` the
   * upload set.
   */
  async upload(policyId: string, code: string | Uint8Array): Promise<UploadAnswer> {
    const bytes = typeof code === "string" ? Buffer.from(code, "utf8") : code;
    if (bytes.byteLength > maxPolicyCodeBytes) {
      throw new TfeValidationError([
        {
          field: "code",
          message: `is ${bytes.byteLength} bytes; the service accepts at most ${maxPolicyCodeBytes} bytes (10 MB): split the policy`,
        },
      ]);
    }
    return this.transport.send({
      method: "PUT",
      path: `/api/v2/policies/${pathSegment("policyId", policyId)}/upload`,
      rawBody: bytes,
      contentType: "application/octet-stream",
    });
  }

  async download(policyId: string): Promise<Buffer> {
    return this.transport.download(`/api/v2/policies/${pathSegment("policyId", policyId)}/download`);
  }
}

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
  /**
   * Ids of the policy sets holding the policy; `undefined` where a list or update response left the relationship out
   * of a policy that may have sets. A show response means none when it leaves it out.
   */
  policySetIds: string[] | undefined;
  /** Whether the service holds code for the policy (its document links to a download). */
  hasCode: boolean;
}

export interface PolicyPage {
  items: Policy[];
  pagination: Pagination;
  /** Policy sets from `include=policy_sets`. */
  included: { id: string; type: string }[];
}

export interface ListPoliciesOptions {
  search?: string;
  kind?: PolicyKind;
  includePolicySets?: boolean;
  pageNumber?: number;
  /** 1 to 100; the service's default is 20. */
  pageSize?: number;
  sort?: PolicySortOrder;
}

export interface ReadPolicyOptions {
  /** Ask for the policy's policy sets (`include=policy_sets`). */
  includePolicySets?: boolean;
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

/** The query of a list request, or a validation error naming the option. */
function validListOptions(options: ListPoliciesOptions): Record<string, string> {
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

/** Option names for validation errors, keyed by the wire names of the request documents. */
const policyFieldNames = {
  "enforcement-level": "enforcementLevel",
  "data.relationships.policy-sets.data": "policySetIds",
};

/** The create document, checked against the contract before anything is sent. */
function validCreateOptions(options: CreatePolicyOptions): CreatePolicyRequest {
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
  return validRequest(createPolicyRequest, body, policyFieldNames);
}

/** When the service answered an upload: its `Date` header, and the latest its clock can have read (ServerClock). */
export interface UploadAnswer {
  answeredAt: Date | undefined;
  settledBy: Date | undefined;
}

/** The update document, checked against the contract before anything is sent. */
function validUpdateOptions(options: UpdatePolicyOptions): UpdatePolicyRequest {
  const attributes: UpdatePolicyRequest["data"]["attributes"] = {};
  if (options.description !== undefined) attributes.description = options.description;
  if (options.query !== undefined) attributes.query = options.query;
  if (options.enforcementLevel !== undefined) attributes["enforcement-level"] = options.enforcementLevel;
  if (options.enforce !== undefined) attributes.enforce = options.enforce;
  return validRequest(updatePolicyRequest, { data: { type: "policies", attributes } }, policyFieldNames);
}

function toPolicy(resource: LenientPolicyResource): Policy {
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
