import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it, vi } from "vitest";
import { TfeClient } from "../../src/client";
import { startServer } from "../../src/server";
import type { FaultRule } from "../../src/server/faults";
import { type Declared, EngineDriver } from "./engine-driver";

// The impact oracle: random organizations (policy sets holding policies from the policy's side and from the set's,
// a set another stack made, a folder set, a Terraform policy set; workspaces in projects or none; global sets,
// exclusions), random runs and results (every framework, task stage and policy check, every status and level,
// overrides, runs at the window's edges, more runs than one page), random stricter changes (a policy raised, a
// folder's or a Terraform policy block's level raised, a scope widened), random read faults and budgets. Each
// preview's claim, made by the providers as the engine drives them (test/resources/engine-driver.ts) with
// tfe:requireNoBlockedRuns on, is compared with the truth computed from the seed by brute force, here, with none of
// src/impact/: "none" where a run would have been blocked, or where a read failed or was cut short, a run named
// that would not have been blocked, a count above the truth, and a stricter change passed that blocks, each fail it.
// `ORACLE_RUNS` sets the number of organizations (docs/development.md).

const runs = Number(process.env.IMPACT_ORACLE_RUNS ?? process.env.ORACLE_RUNS ?? 20);
const seed = process.env.ORACLE_SEED ? Number(process.env.ORACLE_SEED) : process.env.ORACLE_RUNS ? undefined : 20261128;
const organization = "acme";
const token = "impact-oracle-token-0123456789";
const day = 24 * 3600 * 1000;
/** The end of every window: the seed's runs are placed around it, and each operation starts at it. */
const now = new Date("2026-11-27T12:00:00.000Z");
const work = mkdtempSync(join(tmpdir(), "impact-oracle-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const workspaceIds = ["ws-ImpOracleA00001", "ws-ImpOracleB00001", "ws-ImpOracleC00001", "ws-ImpOracleD00001"];
const projectIds = ["prj-ImpOracleP0001", "prj-ImpOracleP0002"];
const sentinelLevels = ["advisory", "soft-mandatory", "hard-mandatory"] as const;
const tfLevels = ["advisory", "mandatory_overridable", "mandatory"] as const;
const policyNames = ["p0", "p1", "p2"] as const;
const folderLabels = ["f0", "f1"] as const;
/** The Terraform policy block, by its address, and the names a run's result may give it. */
const tfAddress = "resource_policy.aws_s3_bucket.owner";
const tfSpellings = [tfAddress, "owner", 'resource_policy "aws_s3_bucket" "owner"'];
const setNames = ["s0", "s1", "other-stack", "folder-set", "tf-set"] as const;
type SetName = (typeof setNames)[number];

interface Scope {
  global: boolean;
  workspaces: string[];
  projects: string[];
  excludedWorkspaces: string[];
  excludedProjects: string[];
}

interface Result {
  kind: "sentinel" | "tfpolicy";
  via: "task-stage" | "policy-check";
  policySet: string;
  policy: string;
  level: string;
  status: "passed" | "failed" | "errored" | "unknown";
}

interface RunModel {
  id: string;
  workspace: string;
  createdAt: string;
  overridden: boolean;
  results: Result[];
}

type Change =
  | { kind: "raise policy"; policy: number; level: "soft-mandatory" | "hard-mandatory" }
  | { kind: "raise folder"; label: number; level: "soft-mandatory" | "hard-mandatory" }
  | { kind: "raise terraform policy"; level: "mandatory_overridable" | "mandatory" }
  | { kind: "widen"; set: "s0" | "s1" | "folder-set" | "tf-set"; scope: Scope };

interface Model {
  projectOf: (string | null)[];
  policies: { level: (typeof sentinelLevels)[number]; inS0: boolean; inS1: boolean; inOther: boolean }[];
  scopes: Record<SetName, Scope>;
  folderLevels: (typeof sentinelLevels)[number][];
  tfLevel: (typeof tfLevels)[number];
  runs: RunModel[];
  change: Change;
  windowDays: number;
  budget: number;
  faults: FaultRule[];
}

// ---------------------------------------------------------------------------------------------------------------
// The truth, by brute force from the model
// ---------------------------------------------------------------------------------------------------------------

function inScope(scope: Scope, workspace: number, model: Model): boolean {
  const id = workspaceIds[workspace] as string;
  const project = model.projectOf[workspace] ?? null;
  if (scope.excludedWorkspaces.includes(id)) return false;
  if (project && scope.excludedProjects.includes(project)) return false;
  return scope.global || scope.workspaces.includes(id) || (project !== null && scope.projects.includes(project));
}

const strength = (level: string) =>
  ({ advisory: 1, "soft-mandatory": 2, "hard-mandatory": 3, mandatory_overridable: 2, mandatory: 3 })[level] ?? 0;

interface Target {
  kind: "sentinel" | "tfpolicy";
  names: string[];
  sets: string[];
  level: string;
}

interface Truth {
  /** The change makes something stricter: it must be said. */
  stricter: boolean;
  reached: string[];
  blocked: Set<string>;
}

/** What the change makes stricter, where, and which runs of the window it would have stopped. */
function truthOf(model: Model): Truth {
  const change = model.change;
  const targets: Target[] = [];
  let reachedBy: (workspace: number) => boolean = () => false;
  const reachOf = (set: SetName) => (workspace: number) => inScope(model.scopes[set], workspace, model);
  if (change.kind === "raise policy") {
    const policy = model.policies[change.policy] as Model["policies"][number];
    const holders: SetName[] = [
      ...(policy.inS0 ? (["s0"] as const) : []),
      ...(policy.inS1 ? (["s1"] as const) : []),
      ...(policy.inOther ? (["other-stack"] as const) : []),
    ];
    targets.push({
      kind: "sentinel",
      names: [policyNames[change.policy] as string],
      sets: holders,
      level: change.level,
    });
    reachedBy = (workspace) => holders.some((set) => reachOf(set)(workspace));
  } else if (change.kind === "raise folder") {
    targets.push({
      kind: "sentinel",
      names: [folderLabels[change.label] as string],
      sets: ["folder-set"],
      level: change.level,
    });
    reachedBy = reachOf("folder-set");
  } else if (change.kind === "raise terraform policy") {
    targets.push({ kind: "tfpolicy", names: tfSpellings, sets: ["tf-set"], level: change.level });
    reachedBy = reachOf("tf-set");
  } else {
    const set = change.set;
    if (set === "s0" || set === "s1") {
      model.policies.forEach((policy, index) => {
        if ((set === "s0" ? policy.inS0 : policy.inS1) && strength(policy.level) > 1) {
          targets.push({ kind: "sentinel", names: [policyNames[index] as string], sets: [set], level: policy.level });
        }
      });
    } else if (set === "folder-set") {
      model.folderLevels.forEach((level, index) => {
        if (strength(level) > 1)
          targets.push({ kind: "sentinel", names: [folderLabels[index] as string], sets: [set], level });
      });
    } else if (strength(model.tfLevel) > 1) {
      targets.push({ kind: "tfpolicy", names: tfSpellings, sets: [set], level: model.tfLevel });
    }
    reachedBy = (workspace) => inScope(change.scope, workspace, model) && !inScope(model.scopes[set], workspace, model);
  }
  const reached = workspaceIds.filter((_, workspace) => reachedBy(workspace));
  const since = now.getTime() - model.windowDays * day;
  const blocked = new Set<string>();
  for (const run of model.runs) {
    if (!reached.includes(run.workspace) || Date.parse(run.createdAt) < since) continue;
    for (const result of run.results) {
      for (const target of targets) {
        if (result.kind !== target.kind || !target.names.includes(result.policy)) continue;
        if (!target.sets.includes(result.policySet)) continue;
        if (!["failed", "errored", "unknown"].includes(result.status)) continue;
        const overridableNew = target.level === "soft-mandatory" || target.level === "mandatory_overridable";
        if (result.level === "advisory" || (run.overridden && !overridableNew)) blocked.add(run.id);
      }
    }
  }
  // A raise that lifts no level, or a widened set with no blocking policy, makes nothing stricter.
  const stricter = targets.length > 0 && (change.kind !== "widen" || reached.length > 0);
  return { stricter, reached, blocked };
}

// ---------------------------------------------------------------------------------------------------------------
// The claim, as preview says it
// ---------------------------------------------------------------------------------------------------------------

type Claim =
  | { verdict: "blocked"; count: number; runs: string[]; reached: number; notRead: boolean }
  | { verdict: "none"; readWhole: number; reached: number }
  | { verdict: "not known" }
  | { verdict: "silent" };

function claimOf(said: string): Claim {
  const blocked = /would have blocked (\d+) runs? in \d+ of (\d+) workspaces in the last \d+ days: (.*)$/s.exec(said);
  if (blocked) {
    return {
      verdict: "blocked",
      count: Number(blocked[1]),
      reached: Number(blocked[2]),
      runs: [...(blocked[3] as string).matchAll(/\b(run-[A-Za-z0-9]+),/g)].map((match) => match[1] as string),
      notRead: /; not read: /.test(blocked[3] as string),
    };
  }
  const none =
    /no run in the last \d+ days would have been blocked(?: in the workspaces of [^(]*)? \((\d+) of (\d+) workspaces read whole/.exec(
      said,
    );
  if (none) return { verdict: "none", readWhole: Number(none[1]), reached: Number(none[2]) };
  if (/reaches no workspace|holds no blocking policy: it blocks no run more/.test(said)) {
    return { verdict: "none", readWhole: 0, reached: 0 };
  }
  if (/whom it would block is not known/.test(said)) return { verdict: "not known" };
  return { verdict: "silent" };
}

// ---------------------------------------------------------------------------------------------------------------
// The organization, as a program and a seed
// ---------------------------------------------------------------------------------------------------------------

const scopeArgs = (scope: Scope) => ({
  global: scope.global,
  workspaceIds: scope.global ? [] : scope.workspaces,
  projectIds: scope.global ? [] : scope.projects,
  excludedWorkspaceIds: scope.excludedWorkspaces,
  excludedProjectIds: scope.excludedProjects,
});

function writeFolders(dir: string, folderLevels: readonly string[], tfLevel: string) {
  const folder = join(dir, "folder");
  const tf = join(dir, "terraform");
  rmSync(folder, { recursive: true, force: true });
  rmSync(tf, { recursive: true, force: true });
  mkdirSync(folder, { recursive: true });
  mkdirSync(tf, { recursive: true });
  writeFileSync(
    join(folder, "sentinel.hcl"),
    folderLabels
      .map(
        (label, index) =>
          `policy "${label}" {\n  source = "./${label}.sentinel"\n  enforcement_level = "${folderLevels[index]}"\n}\n`,
      )
      .join("\n"),
  );
  for (const label of folderLabels) writeFileSync(join(folder, `${label}.sentinel`), "main = rule { true }\n");
  writeFileSync(
    join(tf, "owner.policy.hcl"),
    `resource_policy "aws_s3_bucket" "owner" {\n  enforcement_level = "${tfLevel}"\n  enforce {\n` +
      '    condition = core::try(attrs.tags.Owner, "") != ""\n  }\n}\n',
  );
  return { folder, tf };
}

/** The program: s0 (policies join it from their side), the policies, s1 (holds them itself), a folder, a Terraform policy. */
function program(model: Model, dir: string, after: boolean): Declared[] {
  const change = model.change;
  const levelOf = (index: number) =>
    after && change.kind === "raise policy" && change.policy === index
      ? change.level
      : (model.policies[index]?.level as string);
  const folderLevels = model.folderLevels.map((level, index) =>
    after && change.kind === "raise folder" && change.label === index ? change.level : level,
  );
  const tfLevel = after && change.kind === "raise terraform policy" ? change.level : model.tfLevel;
  const paths = writeFolders(dir, folderLevels, tfLevel);
  const scope = (set: SetName) =>
    scopeArgs(after && change.kind === "widen" && change.set === set ? change.scope : model.scopes[set]);
  return [
    { name: "s0", type: "PolicySet", args: () => ({ organization, name: "s0", ...scope("s0") }) },
    ...policyNames.map(
      (name, index): Declared => ({
        name,
        type: "Policy",
        args: (idOf) => ({
          organization,
          name,
          code: "main = rule { true }\n",
          enforcementLevel: levelOf(index),
          policySetIds: model.policies[index]?.inS0 ? [idOf("s0")] : [],
        }),
      }),
    ),
    {
      name: "s1",
      type: "PolicySet",
      args: (idOf) => ({
        organization,
        name: "s1",
        policyIds: policyNames.filter((_, index) => model.policies[index]?.inS1).map((name) => idOf(name)),
        ...scope("s1"),
      }),
    },
    {
      name: "folder-set",
      type: "PolicySet",
      args: () => ({ organization, name: "folder-set", directory: paths.folder, ...scope("folder-set") }),
    },
    {
      name: "tf-set",
      type: "PolicySet",
      args: () => ({ organization, name: "tf-set", kind: "tfpolicy", directory: paths.tf, ...scope("tf-set") }),
    },
  ];
}

// ---------------------------------------------------------------------------------------------------------------
// Random organizations
// ---------------------------------------------------------------------------------------------------------------

const scopeArbitrary: fc.Arbitrary<Scope> = fc.record({
  global: fc.boolean(),
  workspaces: fc.subarray(workspaceIds),
  projects: fc.subarray(projectIds),
  excludedWorkspaces: fc.subarray(workspaceIds, { maxLength: 1 }),
  excludedProjects: fc.subarray(projectIds, { maxLength: 1 }),
});

const resultArbitrary: fc.Arbitrary<Result> = fc.oneof(
  fc.record({
    kind: fc.constant("sentinel" as const),
    via: fc.constantFrom("task-stage" as const, "policy-check" as const),
    policySet: fc.constantFrom("s0", "s1", "other-stack", "folder-set", "unrelated"),
    policy: fc.constantFrom(...policyNames, ...folderLabels),
    level: fc.constantFrom(...sentinelLevels),
    status: fc.constantFrom("passed" as const, "failed" as const, "errored" as const),
  }),
  fc.record({
    kind: fc.constant("tfpolicy" as const),
    via: fc.constant("task-stage" as const),
    policySet: fc.constantFrom("tf-set", "unrelated"),
    policy: fc.constantFrom(...tfSpellings, "another-block"),
    level: fc.constantFrom(...tfLevels),
    status: fc.constantFrom("passed" as const, "failed" as const, "errored" as const, "unknown" as const),
  }),
);

/** When a run was made: anywhere in 40 days, or at the edge of the window, to the millisecond, with or without one. */
const timeArbitrary = (windowDays: number) =>
  fc
    .oneof(
      fc.integer({ min: 0, max: 40 * day }),
      fc.constantFrom(-1, 0, 1, 500, -500).map((offset) => windowDays * day + offset),
    )
    .chain((offset) =>
      fc.boolean().map((plain) => {
        const text = new Date(now.getTime() - offset).toISOString();
        // The same instant written without its fraction, where it has none.
        return plain ? text.replace(".000Z", "Z") : text;
      }),
    );

const modelArbitrary: fc.Arbitrary<Model> = fc.integer({ min: 1, max: 30 }).chain((windowDays) =>
  fc
    .record({
      projectOf: fc.array(fc.constantFrom(null, ...projectIds), { minLength: 4, maxLength: 4 }),
      policies: fc.array(
        fc.record({
          level: fc.constantFrom(...sentinelLevels),
          inS0: fc.boolean(),
          inS1: fc.boolean(),
          inOther: fc.boolean(),
        }),
        { minLength: 3, maxLength: 3 },
      ),
      scopes: fc.record({
        s0: scopeArbitrary,
        s1: scopeArbitrary,
        "other-stack": scopeArbitrary,
        "folder-set": scopeArbitrary,
        "tf-set": scopeArbitrary,
      }),
      folderLevels: fc.array(fc.constantFrom(...sentinelLevels), { minLength: 2, maxLength: 2 }),
      tfLevel: fc.constantFrom(...tfLevels),
      runs: fc.array(
        fc.record({
          workspace: fc.constantFrom(...workspaceIds),
          createdAt: timeArbitrary(windowDays),
          overridden: fc.boolean(),
          results: fc.array(resultArbitrary, { maxLength: 4 }),
        }),
        { maxLength: 24 },
      ),
      /**
       * Runs that evaluated the organization's policies where they are: per workspace, up to three runs with a result
       * for every policy in every set that holds it (each drawn from `draws`), so that claims have evidence to stand
       * on; the runs above are noise around them.
       */
      evidence: fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 4, maxLength: 4 }),
      draws: fc.array(fc.nat(), { minLength: 400, maxLength: 400 }),
      evidenceTimes: fc.array(timeArbitrary(windowDays), { minLength: 12, maxLength: 12 }),
      /** One workspace's window holds more runs than a page: 101 that recorded nothing before the others. */
      crowded: fc.option(fc.constantFrom(...workspaceIds), { freq: 6 }),
      change: fc.oneof(
        fc.record({
          kind: fc.constant("raise policy" as const),
          policy: fc.integer({ min: 0, max: 2 }),
          level: fc.constantFrom("soft-mandatory" as const, "hard-mandatory" as const),
        }),
        fc.record({
          kind: fc.constant("raise folder" as const),
          label: fc.integer({ min: 0, max: 1 }),
          level: fc.constantFrom("soft-mandatory" as const, "hard-mandatory" as const),
        }),
        fc.record({
          kind: fc.constant("raise terraform policy" as const),
          level: fc.constantFrom("mandatory_overridable" as const, "mandatory" as const),
        }),
        fc.record({
          kind: fc.constant("widen" as const),
          set: fc.constantFrom("s0" as const, "s1" as const, "folder-set" as const, "tf-set" as const),
          scope: scopeArbitrary,
        }),
      ),
      budget: fc.oneof(
        { weight: 3, arbitrary: fc.constant(300) },
        { weight: 1, arbitrary: fc.integer({ min: 1, max: 40 }) },
      ),
      faults: fc.oneof(
        { weight: 4, arbitrary: fc.constant([] as FaultRule[]) },
        {
          weight: 2,
          arbitrary: fc.array(
            fc.record({
              route: fc.constantFrom(
                "GET /api/v2/workspaces/:workspaceId/runs",
                "GET /api/v2/runs/:runId/task-stages",
                "GET /api/v2/task-stages/:taskStageId/policy-evaluations",
                "GET /api/v2/policy-evaluations/:policyEvaluationId/policy-set-outcomes",
                "GET /api/v2/runs/:runId/policy-checks",
                "GET /api/v2/runs/:runId/tf-policy-evaluations",
                "GET /api/v2/tf-policy-evaluations/:tfPolicyEvaluationId/tf-policy-set-outcomes",
                "GET /api/v2/policies/:policyId",
                "GET /api/v2/policy-sets/:policySetId",
                "GET /api/v2/organizations/:organization/workspaces",
              ),
              status: fc.constantFrom(500 as const, 503 as const),
              share: fc.constantFrom(0.3, 1),
            }),
            { minLength: 1, maxLength: 2 },
          ),
        },
      ),
    })
    .map(({ crowded, runs: noise, evidence, draws, evidenceTimes, ...model }) => {
      let next = 0;
      const pick = <T>(values: readonly T[]): T =>
        values[(draws[next++ % draws.length] as number) % values.length] as T;
      const evaluated: [string, string, "sentinel" | "tfpolicy"][] = [
        ...model.policies.flatMap((policy, index) =>
          (["s0", "s1", "other-stack"] as const)
            .filter((set) => (set === "s0" ? policy.inS0 : set === "s1" ? policy.inS1 : policy.inOther))
            .map((set): [string, string, "sentinel"] => [policyNames[index] as string, set, "sentinel"]),
        ),
        ...folderLabels.map((label): [string, string, "sentinel"] => [label, "folder-set", "sentinel"]),
        ["tf", "tf-set", "tfpolicy"],
      ];
      const drawn = [
        ...noise,
        ...evidence.flatMap((count, workspace) =>
          Array.from({ length: count }, (_, ordinal) => ({
            workspace: workspaceIds[workspace] as string,
            createdAt: evidenceTimes[(workspace * 3 + ordinal) % evidenceTimes.length] as string,
            overridden: pick([true, false]),
            results: evaluated.map(
              ([policy, set, kind]): Result =>
                kind === "tfpolicy"
                  ? {
                      kind,
                      via: "task-stage",
                      policySet: set,
                      policy: pick(tfSpellings),
                      level: pick(tfLevels),
                      status: pick(["passed", "passed", "failed", "errored", "unknown"] as const),
                    }
                  : {
                      kind,
                      via: pick(["task-stage", "task-stage", "policy-check"] as const),
                      policySet: set,
                      policy,
                      level: pick(sentinelLevels),
                      status: pick(["passed", "passed", "passed", "failed", "errored"] as const),
                    },
            ),
          })),
        ),
      ];
      const made: RunModel[] = drawn.map((run, index) => ({
        ...run,
        id: `run-ImpOracle${String(index).padStart(4, "0")}`,
        // A user overrides only what can be overridden: a run with a failure at a final level stopped.
        overridden:
          run.overridden &&
          run.results.some((result) => result.status !== "passed" && strength(result.level) === 2) &&
          !run.results.some((result) => result.status !== "passed" && strength(result.level) === 3),
      }));
      if (crowded) {
        for (let index = 0; index < 101; index++) {
          made.push({
            id: `run-ImpCrowd${String(index).padStart(4, "0")}`,
            workspace: crowded,
            createdAt: new Date(now.getTime() - index * 1000).toISOString(),
            overridden: false,
            results: [],
          });
        }
      }
      // A raise raises: the level before it is below the one it sets.
      const change = model.change;
      const below = (level: string, current: string) => (strength(current) < strength(level) ? current : "advisory");
      const policies = model.policies.map((policy, index) =>
        change.kind === "raise policy" && change.policy === index
          ? { ...policy, level: below(change.level, policy.level) as Model["policies"][number]["level"] }
          : policy,
      );
      const folderLevels = model.folderLevels.map((level, index) =>
        change.kind === "raise folder" && change.label === index
          ? (below(change.level, level) as Model["folderLevels"][number])
          : level,
      );
      const tfLevel =
        change.kind === "raise terraform policy"
          ? (below(change.level, model.tfLevel) as Model["tfLevel"])
          : model.tfLevel;
      // A widened scope keeps all it reached: what it adds is drawn, what it drops is an exclusion.
      const widened = (old: Scope, drawn: Scope): Scope => ({
        global: old.global || drawn.global,
        workspaces: [...new Set([...old.workspaces, ...drawn.workspaces])],
        projects: [...new Set([...old.projects, ...drawn.projects])],
        excludedWorkspaces: old.excludedWorkspaces.filter((id) => drawn.excludedWorkspaces.includes(id)),
        excludedProjects: old.excludedProjects.filter((id) => drawn.excludedProjects.includes(id)),
      });
      const stricter: Change =
        change.kind === "widen" ? { ...change, scope: widened(model.scopes[change.set], change.scope) } : change;
      return { ...model, change: stricter, policies, folderLevels, tfLevel, windowDays, runs: made };
    }),
);

// ---------------------------------------------------------------------------------------------------------------
// One organization: made, changed, previewed, judged
// ---------------------------------------------------------------------------------------------------------------

const tally = { organizations: 0, blocked: 0, none: 0, notKnown: 0, silent: 0, nothingStricter: 0 };
// "silent": the preview failed on a read it needed before anything was said (injected faults only).

async function judge(model: Model): Promise<void> {
  const dir = mkdtempSync(join(work, "org-"));
  const server = await startServer({
    seed: {
      organizations: [{ name: organization, plus: true }],
      tokens: [{ token, organizations: [organization] }],
      projects: projectIds.map((id) => ({ id, organization, name: id })),
      workspaces: workspaceIds.map((id, index) => ({
        id,
        organization,
        name: `ws-${index}`,
        ...(model.projectOf[index] ? { project: model.projectOf[index] as string } : {}),
      })),
      runs: model.runs.map((run) => ({
        id: run.id,
        workspace: run.workspace,
        createdAt: run.createdAt,
        overridden: run.overridden,
        policyResults: run.results.map((result) =>
          result.kind === "tfpolicy"
            ? {
                kind: "tfpolicy" as const,
                policySet: result.policySet,
                policy: result.policy,
                level: result.level,
                status: result.status,
              }
            : {
                kind: "sentinel" as const,
                via: result.via,
                policySet: result.policySet,
                policy: result.policy,
                level: result.level,
                status: result.status as "passed" | "failed" | "errored",
              },
        ),
      })),
    },
  });
  const client = new TfeClient({
    address: server.url,
    token,
    rateLimit: false,
    retry: { maxRetries: 2, baseDelayMs: 1, maxDelayMs: 5 },
  });
  const history = JSON.stringify(model);
  try {
    // The organization as the stack found it: made with no question asked, and another stack's set.
    const setup = new EngineDriver(client, { impactWindowDays: "0" }, () => now);
    const quiet = vi.spyOn(console, "error").mockImplementation(() => {});
    const made = await setup.up(program(model, dir, false)).finally(() => quiet.mockRestore());
    if (!made.applied) throw new Error(`the first up failed: ${made.refusal}`);
    const other = model.scopes["other-stack"];
    const otherSet = await client.policySets.create(organization, { name: "other-stack", ...scopeArgs(other) });
    const held = policyNames.filter((_, index) => model.policies[index]?.inOther);
    if (held.length > 0) {
      await client.policySets.addPolicies(
        otherSet.id,
        held.map((name) => setup.state.get(name)?.id as string),
      );
    }
    // The preview of the stricter change, asking for certainty.
    const driver = new EngineDriver(
      client,
      {
        requireNoBlockedRuns: "true",
        impactWindowDays: String(model.windowDays),
        impactRequestBudget: String(model.budget),
      },
      () => now,
    );
    for (const [name, recorded] of setup.state) driver.state.set(name, recorded);
    server.setFaults(model.faults);
    const said: string[] = [];
    const spy = vi.spyOn(console, "error").mockImplementation((line: unknown) => void said.push(String(line)));
    let outcome: Awaited<ReturnType<EngineDriver["preview"]>>;
    try {
      outcome = await driver.preview(program(model, dir, true));
    } finally {
      spy.mockRestore();
      server.setFaults([]);
    }
    const truth = truthOf(model);
    const text = [...said, outcome.applied ? "" : outcome.refusal].join("\n");
    const claim = claimOf(text);
    tally.organizations++;
    const fail = (why: string) => {
      throw new Error(
        `${why}\n  truth: ${truth.blocked.size} blocked (${[...truth.blocked].join(", ")}) in ${truth.reached.length} ` +
          `workspaces reached\n  said: ${text.slice(0, 1500)}\n  model: ${history}`,
      );
    };
    if (!truth.stricter) {
      tally.nothingStricter++;
      if (claim.verdict === "blocked") fail("runs named blocked by a change that makes nothing stricter");
      return;
    }
    if (claim.verdict === "silent") {
      tally.silent++;
      // A read the preview needed failed (the guard's, a set's): the preview fails, which lets nothing through.
      if (model.faults.length > 0 && !outcome.applied && /answered 5\d\d/.test(outcome.refusal)) return;
      fail("a stricter change that was not said");
    }
    if (claim.verdict === "none") {
      tally.none++;
      if (truth.blocked.size > 0) fail('"none" said where a run of the window would have been blocked');
      if (claim.reached !== truth.reached.length)
        fail(`"none" said of ${claim.reached} workspaces, not the ${truth.reached.length} reached`);
      if (claim.readWhole !== claim.reached) fail('"none" said where not every workspace was read whole');
      if (!outcome.applied) fail(`a change said to block none was refused: ${outcome.refusal}`);
    } else {
      if (outcome.applied) fail(`requireNoBlockedRuns let through a change said to be "${claim.verdict}"`);
      if (claim.verdict === "blocked") {
        tally.blocked++;
        for (const run of claim.runs)
          if (!truth.blocked.has(run)) fail(`${run} named, which would not have been blocked`);
        if (claim.count > truth.blocked.size)
          fail(`${claim.count} runs said, above the ${truth.blocked.size} of the truth`);
        if (!claim.notRead && claim.count !== truth.blocked.size)
          fail(`${claim.count} runs said of a whole read, not ${truth.blocked.size}`);
      } else tally.notKnown++;
    }
  } finally {
    await client.close();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("the impact oracle", () => {
  it(
    `finds no false "none", no run named wrongly and no stricter change let through, in ${runs} random organizations`,
    async () => {
      await fc.assert(fc.asyncProperty(modelArbitrary, judge), {
        numRuns: runs,
        endOnFailure: true,
        ...(seed === undefined ? {} : { seed }),
      });
      console.log(
        `impact oracle: ${tally.organizations} organizations: ${tally.blocked} blocked, ${tally.none} none, ` +
          `${tally.notKnown} not known, ${tally.silent} failed on a read, ${tally.nothingStricter} made nothing stricter`,
      );
      // A property that answers "not known" to everything would pass too: the answers must be claims often enough.
      if (runs >= 20)
        expect(tally.blocked + tally.none).toBeGreaterThan((tally.organizations - tally.nothingStricter) / 4);
    },
    Math.max(900_000, runs * 3_000),
  );
});
