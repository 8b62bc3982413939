import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { z } from "zod";
import { policySetKinds } from "../contract/policies";
import { runStatuses, tfPolicyResultStatuses } from "../contract/runs";
import { invalidDocument, issueMessages } from "./errors";
import type { Storage } from "./storage";

const name = z.string().min(1);

/** The seed file: what the server holds before the first request. Every list is optional. */
export const seedSchema = z.strictObject({
  organizations: z.array(z.strictObject({ name, plus: z.boolean().default(false) })).default([]),
  tokens: z
    .array(
      z.strictObject({
        token: z.string().min(8, "must be at least 8 characters"),
        organizations: z.array(name),
        managePolicies: z.boolean().default(true),
        manageModules: z.boolean().default(true),
      }),
    )
    .default([]),
  policySets: z
    .array(z.strictObject({ id: name, organization: name, name, kind: z.enum(policySetKinds).optional() }))
    .default([]),
  /**
   * Workspaces and projects exist here only so that policy sets can be scoped to them (a set scoped to a project
   * reaches the workspaces that name it) and runs recorded in them.
   */
  workspaces: z
    .array(
      z.strictObject({
        id: z.string().regex(/^ws-[A-Za-z0-9]+$/),
        organization: name,
        name,
        project: z
          .string()
          .regex(/^prj-[A-Za-z0-9]+$/)
          .optional(),
      }),
    )
    .default([]),
  projects: z
    .array(z.strictObject({ id: z.string().regex(/^prj-[A-Za-z0-9]+$/), organization: name, name }))
    .default([]),
  modules: z
    .array(z.strictObject({ organization: name, name, provider: name, versions: z.array(name).default([]) }))
    .default([]),
  /**
   * Repositories that policy sets may read from version control: the identifier a VCS provider gives one
   * (`acme/policy-library`) and a local git repository it stands for (relative to a seed file's folder).
   */
  vcsRepositories: z
    .array(
      z
        .strictObject({
          identifier: name,
          path: name.optional(),
          /** A folder whose files become the repository's first commit where it does not exist yet. */
          from: name.optional(),
          serviceProvider: name.default("github"),
          /**
           * The organizations whose VCS connections reach it, as a connection reaches only the repositories its
           * account can; every organization of the server where it is left out.
           */
          organizations: z.array(name).optional(),
        })
        .refine((repository) => repository.path !== undefined || repository.from !== undefined, {
          message: 'give "path" (a git repository) or "from" (a folder the server makes one from), or both',
        }),
    )
    .default([]),
  /** OAuth tokens of organizations' VCS connections: what a set's vcs-repo names as oauth-token-id. */
  oauthTokens: z
    .array(
      z.strictObject({
        id: z.string().regex(/^ot-[A-Za-z0-9]+$/),
        organization: name,
        serviceProvider: name.default("github"),
      }),
    )
    .default([]),
  /**
   * Runs of workspaces, with the policy results each recorded: what a team reads to see whom a stricter policy
   * would block. Sentinel results go to a task stage (or, with `via: "policy-check"`, to the older policy check),
   * OPA results to a task stage, Terraform policy results to a tf-policy evaluation.
   */
  runs: z
    .array(
      z
        .strictObject({
          id: z.string().regex(/^run-[A-Za-z0-9]+$/),
          workspace: z.string().regex(/^ws-[A-Za-z0-9]+$/),
          /** When the run was made; or `daysAgo`, counted from the server's start, for a seed that stays recent. */
          createdAt: z.iso.datetime().optional(),
          daysAgo: z.number().nonnegative().optional(),
          status: z.enum(runStatuses).default("applied"),
          message: z.string().default("Triggered via API"),
          /**
           * A user overrode the run's failures at overridable levels (soft-mandatory, mandatory_overridable, an
           * overridable OPA set's mandatory), and it went on: its task stage, evaluations, policy check and
           * Terraform policy evaluation say `overridden`.
           */
          overridden: z.boolean().default(false),
          policyResults: z
            .array(
              z
                .strictObject({
                  kind: z.enum(policySetKinds).default("sentinel"),
                  via: z.enum(["task-stage", "policy-check"]).default("task-stage"),
                  policySet: name,
                  policy: name,
                  level: name,
                  /** `unknown` is Terraform policy's alone. */
                  status: z.enum(tfPolicyResultStatuses),
                  /** Terraform policy: the file that holds the policy (`<policy>.policy.hcl` where not given). */
                  fileName: name.optional(),
                })
                .refine((result) => result.via === "task-stage" || result.kind === "sentinel", {
                  message: 'via "policy-check" is for Sentinel results only',
                })
                .refine((result) => result.status !== "unknown" || result.kind === "tfpolicy", {
                  message: 'status "unknown" is for Terraform policy results only',
                }),
            )
            .default([]),
        })
        .refine((run) => (run.createdAt === undefined) !== (run.daysAgo === undefined), {
          message: 'give "createdAt" (a date) or "daysAgo" (a number of days before the server starts), one of them',
        }),
    )
    .default([]),
  /** GitHub App installations: what a set's vcs-repo names as github-app-installation-id. */
  githubAppInstallations: z.array(z.strictObject({ id: z.string().regex(/^ghain-[A-Za-z0-9]+$/) })).default([]),
});
export type Seed = z.input<typeof seedSchema>;

export const defaultOrganization = "example-org";

/** Reads and checks a seed given as an object or as the path of a JSON file; errors name the file and member. */
export function loadSeed(seed: Seed | string): z.output<typeof seedSchema> {
  const source = typeof seed === "string" ? `seed file ${seed}` : "seed";
  let document: unknown = seed;
  if (typeof seed === "string") {
    try {
      document = JSON.parse(readFileSync(seed, "utf8"));
    } catch (error) {
      throw new Error(`${source}: cannot read it as JSON (${(error as Error).message})`);
    }
  }
  const result = seedSchema.safeParse(document, { error: issueMessages });
  if (!result.success) throw invalidDocument(source, result.error);
  // A seed file names repositories relative to itself, as a project's files are.
  const base = typeof seed === "string" ? dirname(resolve(seed)) : process.cwd();
  for (const repository of result.data.vcsRepositories) {
    if (repository.path !== undefined) repository.path = resolve(base, repository.path);
    if (repository.from !== undefined) repository.from = resolve(base, repository.from);
  }
  return result.data;
}

/**
 * Writes the seed; entries already stored are updated, never duplicated, so the same seed can be applied at every
 * start of a server on a file. An empty store with no seed gets one Plus organization and one random token.
 */
export function applySeed(storage: Storage, seed: z.output<typeof seedSchema> | undefined): void {
  if (!seed) {
    if (storage.tokens().length > 0) return;
    storage.addOrganization({ name: defaultOrganization, plus: true });
    storage.addToken({
      token: `${randomBytes(7).toString("hex")}.atlasv1.${randomBytes(32).toString("hex")}`,
      organizations: [defaultOrganization],
      managePolicies: true,
      manageModules: true,
    });
    return;
  }
  const requireOrganization = (organization: string, where: string) => {
    if (!storage.organization(organization)) {
      throw new Error(
        `seed: ${where} names organization "${organization}", which is neither in "organizations" nor stored`,
      );
    }
  };
  for (const organization of seed.organizations) storage.addOrganization(organization);
  for (const [index, token] of seed.tokens.entries()) {
    for (const organization of token.organizations) requireOrganization(organization, `tokens[${index}]`);
    storage.addToken(token);
  }
  for (const [index, policySet] of seed.policySets.entries()) {
    requireOrganization(policySet.organization, `policySets[${index}]`);
    storage.addPolicySet(policySet);
  }
  for (const [index, project] of seed.projects.entries()) {
    requireOrganization(project.organization, `projects[${index}]`);
    storage.addScopeTarget("projects", project);
  }
  for (const [index, { project, ...workspace }] of seed.workspaces.entries()) {
    requireOrganization(workspace.organization, `workspaces[${index}]`);
    const inProject = project === undefined ? undefined : storage.scopeTarget("projects", project);
    if (project !== undefined && inProject?.organization !== workspace.organization) {
      throw new Error(
        `seed: workspaces[${index}].project names ${project}, which is not a project of ${workspace.organization}: add it to projects`,
      );
    }
    storage.addScopeTarget("workspaces", { ...workspace, projectId: project ?? null });
  }
  for (const [index, repository] of seed.vcsRepositories.entries()) {
    if (repository.path === undefined) throw new Error(`seed: vcsRepositories[${index}] has no path yet`);
    for (const organization of repository.organizations ?? []) {
      requireOrganization(organization, `vcsRepositories[${index}].organizations`);
    }
    const { from: _from, ...stored } = repository;
    storage.addVcsRepository({ ...stored, path: repository.path, organizations: repository.organizations ?? null });
  }
  for (const [index, token] of seed.oauthTokens.entries()) {
    requireOrganization(token.organization, `oauthTokens[${index}]`);
    storage.addVcsCredential(token);
  }
  for (const installation of seed.githubAppInstallations) {
    storage.addVcsCredential({ id: installation.id, organization: null, serviceProvider: "github" });
  }
  for (const [index, run] of seed.runs.entries()) {
    if (!storage.scopeTarget("workspaces", run.workspace)) {
      throw new Error(
        `seed: runs[${index}] names workspace "${run.workspace}", which is neither in "workspaces" nor stored`,
      );
    }
    const { policyResults, daysAgo, createdAt, ...rest } = run;
    const made = createdAt ?? new Date(Date.now() - (daysAgo as number) * 24 * 3600 * 1000).toISOString();
    storage.addRun({ ...rest, createdAt: made, results: policyResults });
  }
  for (const [index, module] of seed.modules.entries()) {
    requireOrganization(module.organization, `modules[${index}]`);
    const stored = storage.createModule(module.organization, module.name, module.provider);
    const moduleId =
      stored === "exists" ? storage.module(module.organization, module.name, module.provider)!.id : stored.id;
    for (const version of module.versions) storage.createModuleVersion(moduleId, version);
  }
}
