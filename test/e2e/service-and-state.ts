import type { Policy, TfeClient } from "../../src/client";
import type { PulumiProject } from "./pulumi-project";

/** Every policy of the organization, all pages. */
export async function policiesOnService(client: TfeClient, organization: string): Promise<Policy[]> {
  const policies: Policy[] = [];
  for await (const policy of client.policies.listAll(organization)) policies.push(policy);
  return policies;
}

export interface StackState {
  resources: { type: string; urn: string; id?: string }[];
  pendingOperations: { type: string; resource: { urn: string } }[];
}

/** The stack's resources and pending operations, as `pulumi stack export` shows them. */
export async function stackState(project: PulumiProject): Promise<StackState> {
  const exported = JSON.parse(await project.exportState()) as {
    deployment: { resources?: StackState["resources"]; pending_operations?: StackState["pendingOperations"] };
  };
  return {
    resources: exported.deployment.resources ?? [],
    pendingOperations: exported.deployment.pending_operations ?? [],
  };
}

/** The ids of the `Policy` resources in state. */
export function policyIdsInState(state: StackState): string[] {
  return state.resources
    .filter((resource) => resource.type === "pulumi-nodejs:dynamic/tfe:Policy")
    .map((resource) => resource.id ?? "");
}
