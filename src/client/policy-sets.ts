import { policySetPoliciesRequest } from "../contract/policy-sets";
import { pathSegment } from "./paths";
import type { Transport } from "./transport";
import { validRequest } from "./validation";

/** The policy-set calls that change which policies a set holds (policy-sets-api.md, "Policies and sets"). */
export interface PolicySets {
  /** The policies join the set; they keep their ids and code. Joining a set a policy is in changes nothing. */
  addPolicies(policySetId: string, policyIds: readonly string[]): Promise<void>;
  /** The policies leave the set; each stays in its other sets and in the organization. */
  removePolicies(policySetId: string, policyIds: readonly string[]): Promise<void>;
}

export class PolicySetsApi implements PolicySets {
  constructor(private readonly transport: Transport) {}

  addPolicies(policySetId: string, policyIds: readonly string[]): Promise<void> {
    return this.changePolicies("POST", policySetId, policyIds);
  }

  removePolicies(policySetId: string, policyIds: readonly string[]): Promise<void> {
    return this.changePolicies("DELETE", policySetId, policyIds);
  }

  private async changePolicies(method: "POST" | "DELETE", policySetId: string, policyIds: readonly string[]) {
    const body = validRequest(policySetPoliciesRequest, {
      data: policyIds.map((id) => ({ id: pathSegment("policyIds", id), type: "policies" })),
    });
    await this.transport.send({
      method,
      path: `/api/v2/policy-sets/${pathSegment("policySetId", policySetId)}/relationships/policies`,
      body,
    });
  }
}
