import { z } from "zod";

// Policy sets, as far as the Policies API meets them: a policy joins or leaves a set through the set's
// `relationships/policies` (policy-sets-api.md, "Policies and sets"), keeping its id and its code.

// Not strict: go-tfe sends whole policy documents here (attributes and relationships beside id and type), and the
// service reads only the identifiers. This library's client sends the identifiers alone.
/** What the service's policy set ids look like (`polset-` and letters and digits): a set's name is not one. */
export const policySetIdPattern = /^polset-[A-Za-z0-9]+$/;

const policyIdentifier = z.object({ id: z.string().min(1), type: z.literal("policies") });

/**
 * Body of `POST` and `DELETE /policy-sets/:id/relationships/policies`: the policies that join or leave the set.
 * Both answer 204 with no body.
 */
export const policySetPoliciesRequest = z.object({ data: z.array(policyIdentifier).min(1) });
export type PolicySetPoliciesRequest = z.infer<typeof policySetPoliciesRequest>;
