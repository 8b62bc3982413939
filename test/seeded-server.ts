import { type RunningServer, type ServerOptions, startServer } from "../src/server";

export interface SeededAccount {
  organization: string;
  token: string;
  /** A Sentinel policy set. */
  policySetId?: string;
  /** An OPA policy set: a set holds policies of its own kind only. */
  opaPolicySetId?: string;
  modules?: { name: string; provider: string; versions: string[] }[];
  /** Workspaces and projects by id, to scope policy sets to; each is named after its id. */
  workspaceIds?: string[];
  projectIds?: string[];
}

/**
 * The local server with one Plus organization, one token that may manage its policies and modules, and
 * optionally a policy set and modules: the account most tests act as.
 */
export function startSeededServer(account: SeededAccount, options: ServerOptions = {}): Promise<RunningServer> {
  const { organization, token } = account;
  return startServer({
    ...options,
    seed: {
      organizations: [{ name: organization, plus: true }],
      tokens: [{ token, organizations: [organization], managePolicies: true, manageModules: true }],
      policySets: [
        ...(account.policySetId ? [{ id: account.policySetId, organization, name: "baseline" }] : []),
        ...(account.opaPolicySetId
          ? [{ id: account.opaPolicySetId, organization, name: "opa-baseline", kind: "opa" as const }]
          : []),
      ],
      modules: (account.modules ?? []).map((module) => ({ organization, ...module })),
      workspaces: (account.workspaceIds ?? []).map((id) => ({ id, organization, name: id })),
      projects: (account.projectIds ?? []).map((id) => ({ id, organization, name: id })),
    },
  });
}
