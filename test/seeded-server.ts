import { type RunningServer, type ServerOptions, startServer } from "../src/server";

export interface SeededAccount {
  organization: string;
  token: string;
  policySetId?: string;
  modules?: { name: string; provider: string; versions: string[] }[];
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
      policySets: account.policySetId ? [{ id: account.policySetId, organization, name: "baseline" }] : [],
      modules: (account.modules ?? []).map((module) => ({ organization, ...module })),
    },
  });
}
