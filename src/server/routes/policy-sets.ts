import type { FastifyInstance } from "fastify";
import { policySetPoliciesRequest } from "../../contract/policy-sets";
import { authorize } from "../auth";
import type { AppContext } from "../context";
import { ApiError, invalidAttribute, notFound, parseBody } from "../errors";
import { jsonApiEndpoint } from "../openapi";

type PolicySetParams = { Params: { policySetId: string } };

/** A policy's membership of a set, changed from the set's side without recreating the policy. */
export function registerPolicySetRoutes(app: FastifyInstance, { storage }: AppContext): void {
  for (const [method, change, summary] of [
    ["POST", "join", "Add policies to a policy set"],
    ["DELETE", "leave", "Remove policies from a policy set"],
  ] as const) {
    app.route<PolicySetParams>({
      method,
      url: "/api/v2/policy-sets/:policySetId/relationships/policies",
      ...jsonApiEndpoint({
        summary: `${summary}: the policies keep their ids and code (policy-sets-api.md, "Policies and sets")`,
        request: policySetPoliciesRequest,
        success: { status: 204, description: "Done" },
      }),
      handler: async (request, reply) => {
        const [policySet] = storage.policySets([request.params.policySetId]);
        if (!policySet) throw notFound();
        authorize(request, policySet.organization, "managePolicies");
        const { data } = parseBody(policySetPoliciesRequest, request.body);
        const strangers = data.flatMap(({ id }, index) =>
          storage.policy(id)?.organization === policySet.organization
            ? []
            : [
                invalidAttribute(
                  ["data", String(index), "id"],
                  `"${id}" is not a policy of organization ${policySet.organization}`,
                ),
              ],
        );
        if (strangers.length > 0) throw new ApiError(422, strangers);
        storage.changeSetMembership(
          policySet.id,
          data.map(({ id }) => id),
          change,
        );
        return reply.code(204).send();
      },
    });
  }
}
