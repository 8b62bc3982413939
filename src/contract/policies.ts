// The policies resource on the wire (spec 2.1, 4.1-4.4, 4.9, 4.10): vocabulary, rules and documents, shared by
// the client, the local server and its OpenAPI document.
import { z } from "zod";
import {
  includedResource,
  lenientPaginationLinks,
  lenientPaginationMeta,
  listDocument,
  resourceDocument,
  resourceIdentifier,
} from "./jsonapi";
import { maxNameLength } from "./limits";

// ---------------------------------------------------------------------------------------------------------------
// Vocabulary (spec 2.1)
// ---------------------------------------------------------------------------------------------------------------

/** The kinds of individual policies (the Policies API): Terraform policy's code lives only in a set's versions. */
export const policyKinds = ["sentinel", "opa"] as const;
export type PolicyKind = (typeof policyKinds)[number];
/** The kinds of policy sets: Sentinel, OPA, and Terraform policy (`tfpolicy`, HCP Terraform only). */
export const policySetKinds = ["sentinel", "opa", "tfpolicy"] as const;
export type PolicySetKind = (typeof policySetKinds)[number];

/** "a Sentinel", "an OPA" or "a Terraform policy", for messages: `a Sentinel set`, `an OPA policy`. */
export function kindPhrase(kind: PolicySetKind): string {
  return kind === "opa" ? "an OPA" : kind === "tfpolicy" ? "a Terraform policy" : "a Sentinel";
}

/** Terraform policy's levels, set per policy block in the files (`enforcement_level`, default `mandatory`). */
export const tfPolicyLevels = ["advisory", "mandatory_overridable", "mandatory"] as const;

export const enforcementLevelsByKind = {
  sentinel: ["hard-mandatory", "soft-mandatory", "advisory"],
  opa: ["mandatory", "advisory"],
} as const satisfies Record<PolicyKind, readonly string[]>;
export const enforcementLevels = ["hard-mandatory", "soft-mandatory", "advisory", "mandatory"] as const;

/**
 * How hard a level stops a run, comparable across kinds: advisory only warns; Sentinel's soft-mandatory may be
 * overridden; hard-mandatory and OPA's mandatory stop it (an OPA set that is `overridable` is its own weakening).
 * Undefined for a level the kind does not know (another rule reports it).
 */
export function enforcementStrength(kind: PolicySetKind, level: string): number | undefined {
  return Object.hasOwn(strengths[kind], level) ? strengths[kind][level] : undefined;
}

const strengths: Record<PolicySetKind, Record<string, number>> = {
  sentinel: { advisory: 1, "soft-mandatory": 2, "hard-mandatory": 3 },
  opa: { advisory: 1, mandatory: 3 },
  tfpolicy: { advisory: 1, mandatory_overridable: 2, mandatory: 3 },
};

/**
 * The level of a policy written as an expression the checks cannot evaluate: no kind knows it, so it compares with
 * nothing but itself (the guard counts a change to or from it as one it cannot compare).
 */
export function cannotEvaluate(expression: string): string {
  return `<cannot evaluate: ${expression}>`;
}

/** The level nothing is stricter than: a change to it weakens nothing, whatever it replaces. */
export function strongestLevel(kind: PolicySetKind): string {
  return kind === "sentinel" ? "hard-mandatory" : "mandatory";
}

/**
 * Whether going from level `from` of a `kind` policy to level `to` of a `toKind` policy (the same kind unless a set
 * is replaced by one of another kind) weakens it. Levels a kind does not know compare as nothing.
 */
export function weakensEnforcement(
  kind: PolicySetKind,
  from: string,
  to: string,
  toKind: PolicySetKind = kind,
): boolean {
  const [before, after] = [enforcementStrength(kind, from), enforcementStrength(toKind, to)];
  return before !== undefined && after !== undefined && after < before;
}
export type EnforcementLevel = (typeof enforcementLevels)[number];

/** Letters, digits, `-` and `_`: the service's rule for policy names. */
export const policyNamePattern = /^[A-Za-z0-9_-]+$/;
/** Largest policy code the service accepts (spec 8). */
export const maxPolicyCodeBytes = 10 * 1024 * 1024;
export const maxPageSize = 100;
export const defaultPageSize = 20;
export const policySortOrders = ["name", "-name", "updated-at", "-updated-at"] as const;
export type PolicySortOrder = (typeof policySortOrders)[number];

/** File name the deprecated `enforce` entry points at: `<NAME>.sentinel` or `<NAME>.rego`. */
export function enforcePath(name: string, kind: PolicyKind): string {
  return `${name}.${kind === "opa" ? "rego" : "sentinel"}`;
}

/** A broken rule, naming the property as programs and the client's options do (camelCase). */
export interface PolicyRuleViolation {
  property: "enforcementLevel" | "query" | "enforce";
  message: string;
}

/** The one mapping from the rules' property names to the wire's attribute names (JSON pointers, error sources). */
export const wireAttribute: Record<PolicyRuleViolation["property"], string> = {
  enforcementLevel: "enforcement-level",
  query: "query",
  enforce: "enforce",
};

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
  /** What the user wrote for the level, where a message names it: `enforcementLevel` in a Pulumi program. */
  levelName?: string;
}): PolicyRuleViolation[] {
  const levelName = policy.levelName ?? wireAttribute.enforcementLevel;
  const violations: PolicyRuleViolation[] = [];
  const levels: readonly string[] = policy.kind ? enforcementLevelsByKind[policy.kind] : enforcementLevels;
  const describeLevels = levels.map((level) => `"${level}"`).join(", ");
  const ofKind = policy.kind ? ` of ${policy.kind} policies` : "";
  if (policy.enforcementLevel !== undefined && !levels.includes(policy.enforcementLevel)) {
    violations.push({
      property: "enforcementLevel",
      message: `"${policy.enforcementLevel}" is not an enforcement level${ofKind}: use one of ${describeLevels}`,
    });
  }
  if (policy.kind === "sentinel" && policy.query !== undefined && policy.query !== null) {
    violations.push({ property: "query", message: "is only valid for opa policies: remove it, or set kind to opa" });
  }
  if (policy.kind === "opa" && policy.isCreate && !policy.query) {
    violations.push({ property: "query", message: 'is required for opa policies, e.g. "data.terraform.deny"' });
  }
  if (policy.enforce) {
    if (policy.enforce.length !== 1) {
      violations.push({
        property: "enforce",
        message: "must hold exactly one {path, mode} entry: policies have one file",
      });
    }
    for (const entry of policy.enforce) {
      if (!levels.includes(entry.mode)) {
        violations.push({
          property: "enforce",
          message: `mode "${entry.mode}" is not an enforcement level${ofKind}: use one of ${describeLevels}`,
        });
      } else if (policy.enforcementLevel !== undefined && entry.mode !== policy.enforcementLevel) {
        violations.push({
          property: "enforce",
          message: `mode "${entry.mode}" contradicts ${levelName} "${policy.enforcementLevel}": set only ${levelName}`,
        });
      }
    }
  }
  if (policy.isCreate && policy.enforcementLevel === undefined && !policy.enforce) {
    violations.push({ property: "enforcementLevel", message: `is required: use one of ${describeLevels}` });
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
    ctx.addIssue({
      code: "custom",
      path: ["data", "attributes", wireAttribute[violation.property]],
      message: violation.message,
    });
  }
}

/** Body of `POST /organizations/:org/policies` (spec 4.1), validated strictly before it is sent. */
export const createPolicyRequest = z
  .strictObject({
    data: z.strictObject({
      type: z.literal("policies"),
      attributes: z.strictObject({
        name: z
          .string()
          .min(1, "is required")
          .max(maxNameLength, `is longer than ${maxNameLength} characters: shorten it`)
          .regex(policyNamePattern, "may hold only letters, digits, '-' and '_'"),
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
      // go-tfe sends no attributes for an update with nothing set, as the tfe provider does when a description is
      // removed: a valid update that changes nothing.
      attributes: updatePolicyAttributes.default({}),
    }),
  })
  .superRefine((document, ctx) => addRuleViolations(document.data.attributes, ctx, false, undefined));
export type UpdatePolicyRequest = z.infer<typeof updatePolicyRequest>;

const organizationIdentifier = z.strictObject({ id: z.string().min(1), type: z.literal("organizations") });

/** One policy resource as the contract describes it (spec 2.1 and service-facts): what the local server sends. */
export const policyResource = z
  .strictObject({
    id: z.string().min(1),
    type: z.literal("policies"),
    attributes: z.strictObject({
      name: z.string().regex(policyNamePattern),
      description: z.string().nullable(),
      kind: z.enum(policyKinds),
      /** Present on opa policies only. */
      query: z.string().min(1).optional(),
      "enforcement-level": z.enum(enforcementLevels),
      /** Empty until code has been uploaded; then the one entry for the policy's file. */
      enforce: z.array(z.strictObject({ path: z.string().min(1), mode: z.enum(enforcementLevels) })).max(1),
      "policy-set-count": z.number().int().nonnegative(),
      /** Null until the first upload. */
      "updated-at": z.iso.datetime().nullable(),
    }),
    relationships: z.strictObject({
      organization: z.strictObject({ data: organizationIdentifier }),
      /** Left out when the policy is in no policy set. */
      "policy-sets": z.strictObject({ data: z.array(policySetIdentifier).min(1) }).optional(),
    }),
    links: z.strictObject({
      self: z.string().min(1),
      upload: z.string().min(1),
      /** Present once the policy has code. */
      download: z.string().min(1).optional(),
    }),
  })
  .superRefine(({ attributes }, ctx) => {
    const entry = attributes.enforce[0];
    for (const violation of policyRuleViolations({
      kind: attributes.kind,
      query: attributes.query,
      enforcementLevel: attributes["enforcement-level"],
      enforce: entry ? [entry] : undefined,
      isCreate: true,
    })) {
      ctx.addIssue({
        code: "custom",
        path: ["attributes", wireAttribute[violation.property]],
        message: violation.message,
      });
    }
    if (entry && entry.path !== enforcePath(attributes.name, attributes.kind)) {
      ctx.addIssue({
        code: "custom",
        path: ["attributes", "enforce", 0, "path"],
        message: `must be ${enforcePath(attributes.name, attributes.kind)}, the policy's own file`,
      });
    }
  });
export type PolicyResource = z.infer<typeof policyResource>;

/** A policy set in `included`: the spec shows only its identity. */
export const includedPolicySet = includedResource(z.literal("policy-sets"));

/** Response to create, show and update (spec 4.1, 4.2, 4.4). */
export const policyDocument = resourceDocument(policyResource, includedPolicySet);
/** Response to list (spec 4.9). */
export const policyListDocument = listDocument(policyResource, includedPolicySet);
export type PolicyDocument = z.infer<typeof policyDocument>;
export type PolicyListDocument = z.infer<typeof policyListDocument>;

/** One policy resource as the client accepts it: lenient, because the service varies (service-facts). */
export const lenientPolicyResource = z.object({
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
export type LenientPolicyResource = z.infer<typeof lenientPolicyResource>;

const lenientIncludedResource = z.object({
  id: z.string(),
  type: z.string(),
  attributes: z.record(z.string(), z.unknown()).optional(),
});

export const lenientPolicyDocument = z.object({
  data: lenientPolicyResource,
  included: z.array(lenientIncludedResource).optional(),
});
export const lenientPolicyListDocument = z.object({
  data: z.array(lenientPolicyResource),
  included: z.array(lenientIncludedResource).optional(),
  meta: z.object({ pagination: lenientPaginationMeta.optional() }).passthrough().optional(),
  links: lenientPaginationLinks.optional(),
});
