import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { z } from "zod";
import { jsonApiMediaType } from "../../contract/jsonapi";
import { defaultPageSize, maxPageSize } from "../../contract/policies";
import {
  policyCheckListDocument,
  policyEvaluationListDocument,
  policySetOutcomeListDocument,
  type RunResource,
  runListDocument,
  taskStageListDocument,
  tfPolicyEvaluationListDocument,
  tfPolicySetOutcomeListDocument,
} from "../../contract/runs";
import { authorize } from "../auth";
import type { AppContext } from "../context";
import { notFound } from "../errors";
import { jsonApiEndpoint } from "../openapi";
import { paginationOf, type Query, requestedPage } from "../pagination";
import type { PolicyResultRecord, RunRecord } from "../storage";

// A workspace's runs and the policy results they recorded, read-only, as the service answers them (contract/runs.ts).
// Runs come from the seed. Everything below a run is derived from its results, with ids made from the run's: a task
// stage `ts-<run>`, its evaluations `poleval-<run><s|o>` (Sentinel, OPA), their outcomes
// `psout-<run><s|o><index>`, the policy check `polchk-<run>`, the Terraform policy evaluation `tfpe-<run>` and its
// outcomes `tfpso-<run><index>` (each index three digits), so that every id leads back to its run.

const suffixOf = (runId: string) => runId.slice("run-".length);
const frameworkLetter = { sentinel: "s", opa: "o" } as const;
type Framework = keyof typeof frameworkLetter;
const index3 = (index: number) => String(index).padStart(3, "0");

/** The results of `run` that a part of it reports. */
const taskStageResults = (run: RunRecord, kind?: Framework) =>
  run.results.filter(
    (result) => result.via === "task-stage" && result.kind !== "tfpolicy" && (!kind || result.kind === kind),
  );
const checkResults = (run: RunRecord) => run.results.filter((result) => result.via === "policy-check");
const tfPolicyResults = (run: RunRecord) => run.results.filter((result) => result.kind === "tfpolicy");

/** The results grouped by policy set, in the order the seed gives them. */
function bySet(results: PolicyResultRecord[]): [string, PolicyResultRecord[]][] {
  const sets = new Map<string, PolicyResultRecord[]>();
  for (const result of results) sets.set(result.policySet, [...(sets.get(result.policySet) ?? []), result]);
  return [...sets];
}

const unknownCount = (results: PolicyResultRecord[]) => results.filter((result) => result.status === "unknown").length;

function counts(results: PolicyResultRecord[]) {
  const failed = (mandatory: boolean) =>
    results.filter((result) => result.status === "failed" && (result.level === "advisory") !== mandatory).length;
  return {
    "advisory-failed": failed(false),
    "mandatory-failed": failed(true),
    passed: results.filter((result) => result.status === "passed").length,
    errored: results.filter((result) => result.status === "errored").length,
  };
}

/**
 * What stopped the run, if anything: an error, a failure at a level that is not advisory (a Terraform policy result
 * that came back unknown is no pass there either); none of it once overridden.
 */
const outcomeStatus = (results: PolicyResultRecord[]) =>
  results.some((result) => result.status === "errored")
    ? "errored"
    : results.some(
          (result) => (result.status === "failed" || result.status === "unknown") && result.level !== "advisory",
        )
      ? "failed"
      : "passed";

/** A part of `run` that reports `results`: `overridden` where it stopped the run and a user let the run go on. */
const partStatus = (run: RunRecord, results: PolicyResultRecord[]) => {
  const status = outcomeStatus(results);
  return run.overridden && status !== "passed" ? "overridden" : status;
};

/** A Terraform policy block's declaration, as a diagnostic's `context` gives it, where `policy` is its address. */
function declarationOf(policy: string): string | undefined {
  const match = /^(resource_policy|provider_policy|module_policy)\.([^.]+)\.([^.]+)$/.exec(policy);
  return match ? `${match[1]} "${match[2]}" "${match[3]}"` : undefined;
}

/** A run's page, its task stage, evaluations and outcomes: each document of contract/runs.ts. */
const documents = {
  run(run: RunRecord): RunResource {
    const suffix = suffixOf(run.id);
    const ids = (type: string, id: string, present: boolean) => ({ data: present ? [{ id, type }] : [] });
    return {
      id: run.id,
      type: "runs",
      attributes: {
        status: run.status as RunResource["attributes"]["status"],
        "created-at": run.createdAt,
        message: run.message,
        source: "tfe-api",
        "has-changes": true,
        "is-destroy": false,
        "plan-only": false,
      },
      relationships: {
        workspace: { data: { id: run.workspace, type: "workspaces" } },
        "task-stages": ids("task-stages", `ts-${suffix}`, taskStageResults(run).length > 0),
        "policy-checks": ids("policy-checks", `polchk-${suffix}`, checkResults(run).length > 0),
        "tf-policy-evaluations": ids("tf-policy-evaluations", `tfpe-${suffix}`, tfPolicyResults(run).length > 0),
      } as RunResource["relationships"],
      links: { self: `/api/v2/runs/${run.id}` },
    };
  },
  taskStage(run: RunRecord) {
    const suffix = suffixOf(run.id);
    const frameworks = (["sentinel", "opa"] as const).filter((kind) => taskStageResults(run, kind).length > 0);
    return {
      id: `ts-${suffix}`,
      type: "task-stages" as const,
      attributes: {
        stage: "post_plan" as const,
        status: partStatus(run, taskStageResults(run)),
        "created-at": run.createdAt,
      },
      relationships: {
        run: { data: { id: run.id, type: "runs" as const } },
        "policy-evaluations": {
          data: frameworks.map((kind) => ({
            id: `poleval-${suffix}${frameworkLetter[kind]}`,
            type: "policy-evaluations" as const,
          })),
        },
      },
    };
  },
  evaluation(run: RunRecord, kind: Framework) {
    const results = taskStageResults(run, kind);
    return {
      id: `poleval-${suffixOf(run.id)}${frameworkLetter[kind]}`,
      type: "policy-evaluations" as const,
      attributes: {
        status: partStatus(run, results),
        "policy-kind": kind,
        "result-count": counts(results),
        "created-at": run.createdAt,
      },
      relationships: {
        "policy-attachable": { data: { id: `ts-${suffixOf(run.id)}`, type: "task-stages" as const } },
      },
    };
  },
  outcomes(run: RunRecord, kind: Framework) {
    const evaluation = `poleval-${suffixOf(run.id)}${frameworkLetter[kind]}`;
    return bySet(taskStageResults(run, kind)).map(([set, results], index) => ({
      id: `psout-${suffixOf(run.id)}${frameworkLetter[kind]}${index3(index)}`,
      type: "policy-set-outcomes" as const,
      attributes: {
        outcomes: results.map((result) => ({
          // The service reports Sentinel's levels as OPA's: advisory, or mandatory (soft and hard alike).
          enforcement_level: (result.level === "advisory" ? "advisory" : "mandatory") as "advisory" | "mandatory",
          query: kind === "opa" ? `data.${result.policy}.deny` : "",
          status: result.status,
          policy_name: result.policy,
          description: "",
        })),
        error: null,
        overridable: results.some((result) => result.level === "soft-mandatory"),
        "policy-set-name": set,
        "policy-set-description": null,
        result_count: counts(results),
      },
      relationships: { "policy-evaluation": { data: { id: evaluation, type: "policy-evaluations" as const } } },
    }));
  },
  policyCheck(run: RunRecord) {
    const results = checkResults(run);
    const failed = (level: string) =>
      results.filter((result) => result.status === "failed" && result.level === level).length;
    const data = Object.fromEntries(
      bySet(results).map(([set, inSet]) => [
        set,
        {
          "can-override": inSet.some((result) => result.level === "soft-mandatory"),
          error: null,
          policies: inSet.map((result) => ({
            "allowed-failure": result.level === "advisory",
            error: result.status === "errored" ? "the policy errored" : null,
            policy: `${set}/${result.policy}`,
            result: result.status === "passed",
          })),
          result: inSet.every((result) => result.status === "passed" || result.level === "advisory"),
        },
      ]),
    );
    const [hard, soft, advisory] = [failed("hard-mandatory"), failed("soft-mandatory"), failed("advisory")];
    // A policy that errored stops the run as a failure at its level would: a soft-mandatory error may be overridden.
    const stopped = (level: string) => results.some((result) => result.status !== "passed" && result.level === level);
    const status = stopped("hard-mandatory")
      ? "hard_failed"
      : stopped("soft-mandatory")
        ? run.overridden
          ? "overridden"
          : "soft_failed"
        : "passed";
    return {
      id: `polchk-${suffixOf(run.id)}`,
      type: "policy-checks" as const,
      attributes: {
        result: {
          result: hard + soft === 0,
          passed: results.filter((result) => result.status === "passed").length,
          "total-failed": hard + soft + advisory,
          "hard-failed": hard,
          "soft-failed": soft,
          "advisory-failed": advisory,
          "duration-ms": 0,
          sentinel: { "schema-version": "1.0.0" as const, data },
        },
        scope: "organization" as const,
        status: status as "passed" | "soft_failed" | "hard_failed" | "overridden" | "errored",
        "status-timestamps": {
          "queued-at": run.createdAt,
          ...{
            hard_failed: { "hard-failed-at": run.createdAt },
            overridden: { "soft-failed-at": run.createdAt, "overridden-at": run.createdAt },
            soft_failed: { "soft-failed-at": run.createdAt },
            passed: { "passed-at": run.createdAt },
          }[status],
        },
      },
      relationships: { run: { data: { id: run.id, type: "runs" as const } } },
    };
  },
  tfPolicyEvaluation(run: RunRecord) {
    const results = tfPolicyResults(run);
    const sets = bySet(results);
    return {
      id: `tfpe-${suffixOf(run.id)}`,
      type: "tf-policy-evaluations" as const,
      attributes: {
        status: partStatus(run, results),
        "stage-type": "Plan" as const,
        "result-count": { ...counts(results), unknown: unknownCount(results) },
        "organized-log": true,
      },
      relationships: {
        run: { data: { id: run.id, type: "runs" as const } },
        outcomes: {
          data: sets.map((_, index) => ({
            id: `tfpso-${suffixOf(run.id)}${index3(index)}`,
            type: "tf-policy-set-outcomes" as const,
          })),
        },
      },
    };
  },
  tfPolicyOutcomes(run: RunRecord) {
    return bySet(tfPolicyResults(run)).map(([set, results], index) => ({
      id: `tfpso-${suffixOf(run.id)}${index3(index)}`,
      type: "tf-policy-set-outcomes" as const,
      attributes: {
        outcomes: results.map((result) => {
          const declaration = declarationOf(result.policy);
          return {
            enforcement_level: result.level as "advisory" | "mandatory_overridable" | "mandatory",
            status: result.status,
            description: "",
            file_name: result.fileName ?? `${result.policy}.policy.hcl`,
            policy_name: result.policy,
            diagnostics:
              declaration && result.status === "failed"
                ? [{ context: declaration, summary: declaration, code: "", start_line: 1 }]
                : [],
          };
        }),
        error: null,
        overridable: results.some((result) => result.level === "mandatory_overridable"),
        "policy-set-name": set,
        "policy-set-description": null,
        "result-count": { ...counts(results), unknown: unknownCount(results) },
      },
      relationships: {
        "tf-policy-evaluation": { data: { id: `tfpe-${suffixOf(run.id)}`, type: "tf-policy-evaluations" as const } },
      },
    }));
  },
};

export function registerRunRoutes(app: FastifyInstance, { storage }: AppContext): void {
  /** The run an id of `prefix` leads back to (`suffixLength` characters after the run's own), readable here. */
  const runOf = (request: FastifyRequest, id: string, prefix: string, suffixLength = 0): RunRecord => {
    if (!id.startsWith(prefix)) throw notFound();
    const run = storage.runById(`run-${id.slice(prefix.length, id.length - suffixLength)}`);
    const workspace = run && storage.scopeTarget("workspaces", run.workspace);
    if (!run || !workspace) throw notFound();
    authorize(request, workspace.organization, "read");
    return run;
  };
  const page = (request: FastifyRequest<{ Querystring: Query }>, reply: FastifyReply, path: string, all: unknown[]) => {
    const requested = requestedPage(request.query);
    const items = all.slice(requested.offset, requested.offset + requested.pageSize);
    return reply.type(jsonApiMediaType).send({ data: items, ...paginationOf(request, path, requested, all.length) });
  };
  const pageQuery = {
    "page[number]": "Page to return, from 1",
    "page[size]": `Items per page; default ${defaultPageSize}, at most ${maxPageSize}`,
  };
  const list = <Params extends Record<string, string>>(
    url: string,
    summary: string,
    schema: z.ZodType,
    items: (request: FastifyRequest<{ Params: Params; Querystring: Query }>) => unknown[],
  ) =>
    app.get<{ Params: Params; Querystring: Query }>(
      url,
      jsonApiEndpoint({ summary, query: pageQuery, success: { status: 200, description: "One page", schema } }),
      async (request, reply) => page(request, reply, request.url.split("?")[0] as string, items(request)),
    );

  app.get<{ Params: { workspaceId: string }; Querystring: Query }>(
    "/api/v2/workspaces/:workspaceId/runs",
    jsonApiEndpoint({
      summary: "List a workspace's runs, newest first",
      query: pageQuery,
      success: { status: 200, description: "One page", schema: runListDocument },
    }),
    async (request, reply) => {
      const workspace = storage.scopeTarget("workspaces", request.params.workspaceId);
      if (!workspace) throw notFound();
      authorize(request, workspace.organization, "read");
      const requested = requestedPage(request.query);
      const { items, totalCount } = storage.listRuns({
        workspace: workspace.id,
        limit: requested.pageSize,
        offset: requested.offset,
      });
      const path = `/api/v2/workspaces/${encodeURIComponent(workspace.id)}/runs`;
      return reply
        .type(jsonApiMediaType)
        .send({ data: items.map(documents.run), ...paginationOf(request, path, requested, totalCount) });
    },
  );
  list<{ runId: string }>(
    "/api/v2/runs/:runId/task-stages",
    "List a run's task stages",
    taskStageListDocument,
    (request) => {
      const run = runOf(request, request.params.runId, "run-");
      return taskStageResults(run).length > 0 ? [documents.taskStage(run)] : [];
    },
  );
  list<{ taskStageId: string }>(
    "/api/v2/task-stages/:taskStageId/policy-evaluations",
    "List a task stage's policy evaluations, one per framework",
    policyEvaluationListDocument,
    (request) => {
      const run = runOf(request, request.params.taskStageId, "ts-");
      return (["sentinel", "opa"] as const)
        .filter((kind) => taskStageResults(run, kind).length > 0)
        .map((kind) => documents.evaluation(run, kind));
    },
  );
  list<{ policyEvaluationId: string }>(
    "/api/v2/policy-evaluations/:policyEvaluationId/policy-set-outcomes",
    "List a policy evaluation's outcomes, one per policy set",
    policySetOutcomeListDocument,
    (request) => {
      const id = request.params.policyEvaluationId;
      const run = runOf(request, id, "poleval-", 1);
      const kind = id.endsWith("o") ? "opa" : id.endsWith("s") ? "sentinel" : undefined;
      if (!kind || taskStageResults(run, kind).length === 0) throw notFound();
      return documents.outcomes(run, kind);
    },
  );
  list<{ runId: string }>(
    "/api/v2/runs/:runId/policy-checks",
    "List a run's policy checks",
    policyCheckListDocument,
    (request) => {
      const run = runOf(request, request.params.runId, "run-");
      return checkResults(run).length > 0 ? [documents.policyCheck(run)] : [];
    },
  );
  list<{ runId: string }>(
    "/api/v2/runs/:runId/tf-policy-evaluations",
    "List a run's Terraform policy evaluations",
    tfPolicyEvaluationListDocument,
    (request) => {
      const run = runOf(request, request.params.runId, "run-");
      return tfPolicyResults(run).length > 0 ? [documents.tfPolicyEvaluation(run)] : [];
    },
  );
  list<{ tfPolicyEvaluationId: string }>(
    "/api/v2/tf-policy-evaluations/:tfPolicyEvaluationId/tf-policy-set-outcomes",
    "List a Terraform policy evaluation's outcomes, one per policy set",
    tfPolicySetOutcomeListDocument,
    (request) => {
      const run = runOf(request, request.params.tfPolicyEvaluationId, "tfpe-");
      if (tfPolicyResults(run).length === 0) throw notFound();
      return documents.tfPolicyOutcomes(run);
    },
  );
}
