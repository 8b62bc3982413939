import type { z } from "zod";
import { maxPageSize } from "../contract/policies";
import {
  lenientPolicyCheckListDocument,
  lenientPolicyEvaluationListDocument,
  lenientPolicySetOutcomeListDocument,
  lenientRunListDocument,
  lenientTaskStageListDocument,
  lenientTfPolicyEvaluationListDocument,
  lenientTfPolicySetOutcomeListDocument,
} from "../contract/runs";
import { everyPage, toPagination } from "./pagination";
import { pathSegment } from "./paths";
import type { Transport } from "./transport";

/** A run, as far as its policy results need it. */
export interface Run {
  id: string;
  status: string;
  createdAt: Date;
  message: string | null;
  /**
   * Where the run recorded policy results: ids of its task stages, policy checks, Terraform policy evaluations;
   * undefined where the run's document does not say (they are then listed).
   */
  taskStageIds: string[] | undefined;
  policyCheckIds: string[] | undefined;
  tfPolicyEvaluationIds: string[] | undefined;
}

/** One policy's result in one run, whichever way the run recorded it. */
export interface PolicyResult {
  runId: string;
  kind: "sentinel" | "opa" | "tfpolicy";
  /** `task-stage` (Sentinel and OPA), `policy-check` (Sentinel, the older way), `tf-policy-evaluation`. */
  recordedBy: "task-stage" | "policy-check" | "tf-policy-evaluation";
  policySet: string;
  policy: string;
  /**
   * The level the run evaluated it at, as the service reports it: `advisory` or `mandatory` in a task stage's
   * outcome (Sentinel's soft and hard alike), `advisory` or `mandatory` in a policy check (from `allowed-failure`),
   * Terraform policy's own (`advisory`, `mandatory_overridable`, `mandatory`).
   */
  level: string;
  /** `passed`, `failed` or `errored` (Terraform policy: also `unknown`); another value as the service sent it. */
  status: string;
  /**
   * Whether a user overrode what recorded it (the task stage's evaluation, the policy check, the Terraform policy
   * evaluation): a failure at an overridable level that the run went on past.
   */
  overridden: boolean;
  /** Terraform policy: the file the policy is in, and each enforce block's declaration its diagnostics name. */
  fileName?: string;
  declarations?: string[];
}

/** Whether an evaluation (or a policy check) says a user overrode it: its status, or when it was overridden. */
const overriddenPart = (attributes: { status?: string | null; "status-timestamps"?: unknown } | null | undefined) =>
  attributes?.status === "overridden" ||
  (typeof attributes?.["status-timestamps"] === "object" &&
    attributes["status-timestamps"] !== null &&
    "overridden-at" in attributes["status-timestamps"] &&
    Boolean((attributes["status-timestamps"] as Record<string, unknown>)["overridden-at"]));

type Json<S extends z.ZodType> = z.output<S>;

/** A workspace's runs and the policy results they recorded, read-only. */
export class RunsApi {
  constructor(private readonly transport: Transport) {}

  /**
   * The workspace's runs created at or after `since`, newest first: pages are read until one holds an older run (the
   * service lists runs newest first), so a window costs the pages it spans, not the workspace's whole history. The
   * page that holds the first older run is read to its end: two runs of one second may come in either order.
   */
  async *since(workspaceId: string, since: Date, pageSize = maxPageSize): AsyncGenerator<Run> {
    const path = `/api/v2/workspaces/${pathSegment("workspaceId", workspaceId)}/runs`;
    for (let pageNumber: number | null = 1; pageNumber !== null; ) {
      const response: Json<typeof lenientRunListDocument> = await this.transport.json({
        method: "GET",
        path,
        query: { "page[number]": String(pageNumber), "page[size]": String(pageSize) },
        schema: lenientRunListDocument,
      });
      let older = false;
      for (const item of response.data) {
        const run = runOf(item);
        if (run.createdAt < since) older = true;
        else yield run;
      }
      const next = toPagination(response.meta?.pagination, response.data.length).nextPage;
      pageNumber = !older && next !== null && next > pageNumber ? next : null;
    }
  }

  /**
   * Every policy result `run` recorded: its task stages' outcomes, its policy checks, its Terraform policy outcomes.
   * With `wentOnOnly`, an evaluation that cannot hold a result the run went on past (its counts say no advisory
   * result failed or errored and nothing came back unknown, and nobody overrode it) is not opened (one request less
   * each): what a reader of whom a stricter level would stop needs, once it knows the policy ran there.
   */
  async policyResults(run: Run, options: { wentOnOnly?: boolean } = {}): Promise<PolicyResult[]> {
    // The counts may be missing from an answer: then the outcomes are read.
    const skipped = (evaluation: {
      attributes?: {
        status?: string | null;
        "status-timestamps"?: unknown;
        "result-count"?: {
          "advisory-failed"?: number | null;
          errored?: number | null;
          unknown?: number | null;
        } | null;
      } | null;
    }) => {
      const count = evaluation.attributes?.["result-count"];
      return (
        options.wentOnOnly === true &&
        count?.["advisory-failed"] === 0 &&
        count.errored === 0 &&
        (count.unknown ?? 0) === 0 &&
        !overriddenPart(evaluation.attributes)
      );
    };
    const results: PolicyResult[] = [];
    for (const stageId of run.taskStageIds ?? (await this.taskStageIds(run.id))) {
      for (const evaluation of await this.all(
        `/api/v2/task-stages/${pathSegment("taskStageId", stageId)}/policy-evaluations`,
        lenientPolicyEvaluationListDocument,
      )) {
        if (skipped(evaluation)) continue;
        const kind = evaluation.attributes["policy-kind"] === "opa" ? "opa" : "sentinel";
        const overridden = overriddenPart(evaluation.attributes);
        for (const outcome of await this.all(
          `/api/v2/policy-evaluations/${pathSegment("policyEvaluationId", evaluation.id)}/policy-set-outcomes`,
          lenientPolicySetOutcomeListDocument,
        )) {
          for (const result of outcome.attributes.outcomes ?? []) {
            results.push({
              runId: run.id,
              kind,
              recordedBy: "task-stage",
              policySet: outcome.attributes["policy-set-name"] ?? "",
              policy: result.policy_name ?? "",
              level: result.enforcement_level ?? "",
              status: result.status ?? "",
              overridden,
            });
          }
        }
      }
    }
    if (run.policyCheckIds === undefined || run.policyCheckIds.length > 0) {
      for (const check of await this.all(
        `/api/v2/runs/${pathSegment("runId", run.id)}/policy-checks`,
        lenientPolicyCheckListDocument,
      )) {
        const overridden = overriddenPart(check.attributes);
        for (const [set, data] of Object.entries(check.attributes.result?.sentinel?.data ?? {})) {
          for (const policy of data.policies ?? []) {
            results.push({
              runId: run.id,
              kind: "sentinel",
              recordedBy: "policy-check",
              policySet: set,
              // `<set>/<policy>` in a policy check.
              policy: policy.policy.startsWith(`${set}/`) ? policy.policy.slice(set.length + 1) : policy.policy,
              level: policy["allowed-failure"] ? "advisory" : "mandatory",
              status: policy.error ? "errored" : policy.result ? "passed" : "failed",
              overridden,
            });
          }
        }
      }
    }
    if (run.tfPolicyEvaluationIds === undefined || run.tfPolicyEvaluationIds.length > 0) {
      for (const evaluation of await this.all(
        `/api/v2/runs/${pathSegment("runId", run.id)}/tf-policy-evaluations`,
        lenientTfPolicyEvaluationListDocument,
      )) {
        if (skipped(evaluation)) continue;
        const overridden = overriddenPart(evaluation.attributes);
        for (const outcome of await this.all(
          `/api/v2/tf-policy-evaluations/${pathSegment("tfPolicyEvaluationId", evaluation.id)}/tf-policy-set-outcomes`,
          lenientTfPolicySetOutcomeListDocument,
        )) {
          for (const result of outcome.attributes.outcomes ?? []) {
            results.push({
              runId: run.id,
              kind: "tfpolicy",
              recordedBy: "tf-policy-evaluation",
              policySet: outcome.attributes["policy-set-name"] ?? "",
              policy: result.policy_name ?? "",
              level: result.enforcement_level ?? "",
              status: result.status ?? "",
              overridden,
              fileName: result.file_name ?? "",
              declarations: (result.diagnostics ?? []).flatMap((diagnostic) =>
                diagnostic.context ? [diagnostic.context] : [],
              ),
            });
          }
        }
      }
    }
    return results;
  }

  private async taskStageIds(runId: string): Promise<string[]> {
    const stages = await this.all(
      `/api/v2/runs/${pathSegment("runId", runId)}/task-stages`,
      lenientTaskStageListDocument,
    );
    return stages.map((stage) => stage.id);
  }

  /** Every item of a listing under `path`, page after page. */
  private async all<S extends typeof lenientTaskStageListDocument | z.ZodType<{ data: unknown[] }>>(
    path: string,
    schema: S,
  ): Promise<Json<S>["data"]> {
    const items: unknown[] = [];
    for await (const item of everyPage(async (pageNumber) => {
      const response = (await this.transport.json({
        method: "GET",
        path,
        query: { "page[number]": String(pageNumber), "page[size]": String(maxPageSize) },
        schema,
      })) as { data: unknown[]; meta?: { pagination?: unknown } };
      return {
        items: response.data,
        pagination: toPagination(response.meta?.pagination as Parameters<typeof toPagination>[0], response.data.length),
      };
    }))
      items.push(item);
    return items as Json<S>["data"];
  }
}

function runOf(item: Json<typeof lenientRunListDocument>["data"][number]): Run {
  const ids = (relationship: { data?: { id: string }[] | null } | null | undefined) =>
    relationship?.data ? relationship.data.map((entry) => entry.id) : undefined;
  return {
    id: item.id,
    status: item.attributes.status,
    createdAt: new Date(item.attributes["created-at"]),
    message: item.attributes.message ?? null,
    taskStageIds: ids(item.relationships?.["task-stages"]),
    policyCheckIds: ids(item.relationships?.["policy-checks"]),
    tfPolicyEvaluationIds: ids(item.relationships?.["tf-policy-evaluations"]),
  };
}
