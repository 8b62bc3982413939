import { afterAll, beforeAll } from "vitest";
import { TfeClient } from "../src/client";
import { type RunningServer, type ServerOptions, startServer } from "../src/server";

/**
 * A run's policy results, one recorded each way the service records them: Sentinel (advisory, failed; mandatory,
 * passed) and OPA in a task stage, Sentinel in the older policy check, Terraform policy in its own evaluation.
 */
export const resultsOfEveryKind = [
  { policySet: "baseline", policy: "require-tags", level: "advisory", status: "failed" as const },
  { policySet: "baseline", policy: "restrict-regions", level: "hard-mandatory", status: "passed" as const },
  {
    kind: "opa" as const,
    policySet: "opa-baseline",
    policy: "deny-public",
    level: "mandatory",
    status: "passed" as const,
  },
  {
    via: "policy-check" as const,
    policySet: "legacy",
    policy: "old-rule",
    level: "soft-mandatory",
    status: "failed" as const,
  },
  {
    kind: "tfpolicy" as const,
    policySet: "tf-rules",
    policy: "s3-encrypted",
    level: "mandatory_overridable",
    status: "failed" as const,
  },
];

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
  /** Workspaces with names of their own, and the runs recorded in them (the seed's own shapes). */
  workspaces?: Omit<SeedOf<"workspaces">[number], "organization">[];
  runs?: SeedOf<"runs">;
}

type Seed = Exclude<NonNullable<ServerOptions["seed"]>, string>;
type SeedOf<Member extends keyof Seed> = NonNullable<Seed[Member]>;

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
      workspaces: [
        ...(account.workspaceIds ?? []).map((id) => ({ id, organization, name: id })),
        ...(account.workspaces ?? []).map((workspace) => ({ ...workspace, organization })),
      ],
      runs: account.runs ?? [],
      projects: (account.projectIds ?? []).map((id) => ({ id, organization, name: id })),
    },
  });
}

/**
 * A seeded server and a client of it for the tests of one file (or one describe block): started before them,
 * closed after. Read its members inside the tests, once started.
 */
export function useSeededServer(account: SeededAccount): {
  readonly server: RunningServer;
  readonly client: TfeClient;
} {
  const started = {} as { server: RunningServer; client: TfeClient };
  beforeAll(async () => {
    started.server = await startSeededServer(account);
    started.client = new TfeClient({ address: started.server.url, token: account.token, rateLimit: false });
  });
  afterAll(async () => {
    await started.client?.close();
    await started.server?.close();
  });
  return started;
}
