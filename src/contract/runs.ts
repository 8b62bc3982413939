import { z } from "zod";
import { lenientPaginationLinks, lenientPaginationMeta, listDocument } from "./jsonapi";

// What a workspace's runs say of policies: the runs (newest first), and the results each recorded, by the three ways
// the service records them. Sentinel and OPA through task stages: a run's task stages, a stage's policy evaluations
// (one per framework), an evaluation's policy-set outcomes, each listing its policies with level and status. The
// older policy checks (Sentinel, before task stages): one per run, its `result.sentinel.data` keyed by policy set.
// Terraform policy: a run's tf-policy-evaluations, each with its tf-policy-set-outcomes. Shapes as go-tfe 1.111's
// run.go, task_stages.go, policy_evaluation.go, policy_check.go and tfpolicy_evaluations.go read them, including
// the outcomes' attributes in snake_case (`enforcement_level`, `policy_name`), as the service sends them.

const relationshipList = (type: string) =>
  z.strictObject({ data: z.array(z.strictObject({ id: z.string(), type: z.literal(type) })) });
const relationshipOne = (type: string) =>
  z.strictObject({ data: z.strictObject({ id: z.string(), type: z.literal(type) }) });

/** A run's statuses that this API reports; the service has more (queued, planning...), all strings to a client. */
export const runStatuses = [
  "applied",
  "planned_and_finished",
  "errored",
  "discarded",
  "canceled",
  "policy_checked",
  "policy_override",
  "policy_soft_failed",
  "post_plan_completed",
] as const;

export const runResource = z.strictObject({
  id: z.string().regex(/^run-[A-Za-z0-9]+$/),
  type: z.literal("runs"),
  attributes: z.strictObject({
    status: z.enum(runStatuses),
    "created-at": z.iso.datetime(),
    message: z.string(),
    source: z.string(),
    "has-changes": z.boolean(),
    "is-destroy": z.boolean(),
    "plan-only": z.boolean(),
  }),
  relationships: z.strictObject({
    workspace: relationshipOne("workspaces"),
    "task-stages": relationshipList("task-stages"),
    "policy-checks": relationshipList("policy-checks"),
    "tf-policy-evaluations": relationshipList("tf-policy-evaluations"),
  }),
  links: z.strictObject({ self: z.string() }),
});
export const runListDocument = listDocument(runResource, z.never());
export type RunResource = z.infer<typeof runResource>;

export const taskStageResource = z.strictObject({
  id: z.string().regex(/^ts-[A-Za-z0-9]+$/),
  type: z.literal("task-stages"),
  attributes: z.strictObject({
    stage: z.enum(["pre_plan", "post_plan", "pre_apply", "post_apply"]),
    status: z.enum(["passed", "failed", "errored", "overridden", "canceled"]),
    "created-at": z.iso.datetime(),
  }),
  relationships: z.strictObject({
    run: relationshipOne("runs"),
    "policy-evaluations": relationshipList("policy-evaluations"),
  }),
});
export const taskStageListDocument = listDocument(taskStageResource, z.never());

const resultCount = z.strictObject({
  "advisory-failed": z.number().int().nonnegative(),
  "mandatory-failed": z.number().int().nonnegative(),
  passed: z.number().int().nonnegative(),
  errored: z.number().int().nonnegative(),
});

export const policyEvaluationResource = z.strictObject({
  id: z.string().regex(/^poleval-[A-Za-z0-9]+$/),
  type: z.literal("policy-evaluations"),
  attributes: z.strictObject({
    status: z.enum(["passed", "failed", "errored", "overridden", "canceled"]),
    "policy-kind": z.enum(["sentinel", "opa"]),
    "result-count": resultCount,
    "created-at": z.iso.datetime(),
  }),
  relationships: z.strictObject({
    "policy-attachable": z.strictObject({
      data: z.strictObject({ id: z.string(), type: z.literal("task-stages") }),
    }),
  }),
});
export const policyEvaluationListDocument = listDocument(policyEvaluationResource, z.never());

/** A policy's result in an outcome: what each framework reports, status `passed`, `failed` or `errored`. */
export const policyResultStatuses = ["passed", "failed", "errored"] as const;
/** Terraform policy's results may also be `unknown` (a value the plan does not know yet). */
export const tfPolicyResultStatuses = [...policyResultStatuses, "unknown"] as const;

export const policySetOutcomeResource = z.strictObject({
  id: z.string().regex(/^psout-[A-Za-z0-9]+$/),
  type: z.literal("policy-set-outcomes"),
  attributes: z.strictObject({
    outcomes: z.array(
      z.strictObject({
        enforcement_level: z.enum(["advisory", "mandatory"]),
        query: z.string(),
        status: z.enum(policyResultStatuses),
        policy_name: z.string(),
        description: z.string(),
      }),
    ),
    error: z.string().nullable(),
    overridable: z.boolean().nullable(),
    "policy-set-name": z.string(),
    "policy-set-description": z.string().nullable(),
    result_count: resultCount,
  }),
  relationships: z.strictObject({ "policy-evaluation": relationshipOne("policy-evaluations") }),
});
export const policySetOutcomeListDocument = listDocument(policySetOutcomeResource, z.never());

export const policyCheckResource = z.strictObject({
  id: z.string().regex(/^polchk-[A-Za-z0-9]+$/),
  type: z.literal("policy-checks"),
  attributes: z.strictObject({
    result: z.strictObject({
      result: z.boolean(),
      passed: z.number().int().nonnegative(),
      "total-failed": z.number().int().nonnegative(),
      "hard-failed": z.number().int().nonnegative(),
      "soft-failed": z.number().int().nonnegative(),
      "advisory-failed": z.number().int().nonnegative(),
      "duration-ms": z.number().int().nonnegative(),
      sentinel: z.strictObject({
        "schema-version": z.literal("1.0.0"),
        data: z.record(
          z.string(),
          z.strictObject({
            "can-override": z.boolean(),
            error: z.string().nullable(),
            policies: z.array(
              z.strictObject({
                "allowed-failure": z.boolean(),
                error: z.string().nullable(),
                policy: z.string(),
                result: z.boolean(),
              }),
            ),
            result: z.boolean(),
          }),
        ),
      }),
    }),
    scope: z.enum(["organization", "workspace"]),
    status: z.enum(["passed", "soft_failed", "hard_failed", "overridden", "errored"]),
    /** When the check reached each status it passed through: `overridden-at` once a user overrode it. */
    "status-timestamps": z.partialRecord(
      z.enum(["queued-at", "passed-at", "soft-failed-at", "hard-failed-at", "overridden-at", "errored-at"]),
      z.iso.datetime(),
    ),
  }),
  relationships: z.strictObject({ run: relationshipOne("runs") }),
});
export const policyCheckListDocument = listDocument(policyCheckResource, z.never());

export const tfPolicyEvaluationResource = z.strictObject({
  id: z.string().regex(/^tfpe-[A-Za-z0-9]+$/),
  type: z.literal("tf-policy-evaluations"),
  attributes: z.strictObject({
    status: z.enum(["passed", "failed", "errored", "overridden", "canceled"]),
    "stage-type": z.enum(["Plan", "Apply"]),
    "result-count": resultCount.extend({ unknown: z.number().int().nonnegative() }),
    "organized-log": z.boolean(),
  }),
  relationships: z.strictObject({ run: relationshipOne("runs"), outcomes: relationshipList("tf-policy-set-outcomes") }),
});
export const tfPolicyEvaluationListDocument = listDocument(tfPolicyEvaluationResource, z.never());

export const tfPolicySetOutcomeResource = z.strictObject({
  id: z.string().regex(/^tfpso-[A-Za-z0-9]+$/),
  type: z.literal("tf-policy-set-outcomes"),
  attributes: z.strictObject({
    outcomes: z.array(
      z.strictObject({
        enforcement_level: z.enum(["advisory", "mandatory_overridable", "mandatory"]),
        status: z.enum(tfPolicyResultStatuses),
        description: z.string(),
        file_name: z.string(),
        policy_name: z.string(),
        /** Grouped by enforce block; `context` is the block's declaration (`resource_policy "aws_s3_bucket" "x"`). */
        diagnostics: z.array(
          z.strictObject({ context: z.string(), summary: z.string(), code: z.string(), start_line: z.number().int() }),
        ),
      }),
    ),
    error: z.string().nullable(),
    overridable: z.boolean(),
    "policy-set-name": z.string(),
    "policy-set-description": z.string().nullable(),
    "result-count": resultCount.extend({ unknown: z.number().int().nonnegative() }),
  }),
  relationships: z.strictObject({ "tf-policy-evaluation": relationshipOne("tf-policy-evaluations") }),
});
export const tfPolicySetOutcomeListDocument = listDocument(tfPolicySetOutcomeResource, z.never());

// What the client accepts from any service: the members it reads, each optional where the service may leave it out.

const lenientList = <Item extends z.ZodType>(item: Item) =>
  z.object({
    data: z.array(item),
    meta: z.object({ pagination: lenientPaginationMeta.optional() }).passthrough().optional(),
    links: lenientPaginationLinks.optional(),
  });
const lenientIds = z.object({ data: z.array(z.object({ id: z.string() })).nullish() }).nullish();

export const lenientRunListDocument = lenientList(
  z.object({
    id: z.string(),
    attributes: z.object({
      status: z.string(),
      "created-at": z.string(),
      message: z.string().nullish(),
    }),
    relationships: z
      .object({
        "task-stages": lenientIds,
        "policy-checks": lenientIds,
        "tf-policy-evaluations": lenientIds,
      })
      .passthrough()
      .nullish(),
  }),
);
export const lenientTaskStageListDocument = lenientList(
  z.object({
    id: z.string(),
    relationships: z.object({ "policy-evaluations": lenientIds }).passthrough().nullish(),
  }),
);
/**
 * An evaluation's counts and status: where they say no advisory result failed or errored, nothing errored or came
 * back unknown, and nobody overrode it, its outcomes hold no run that a stricter level would stop.
 */
const lenientResultCount = z
  .object({
    "advisory-failed": z.number().nullish(),
    errored: z.number().nullish(),
    unknown: z.number().nullish(),
  })
  .passthrough()
  .nullish();
const lenientStatusTimestamps = z.record(z.string(), z.unknown()).nullish();
export const lenientPolicyEvaluationListDocument = lenientList(
  z.object({
    id: z.string(),
    attributes: z
      .object({
        "policy-kind": z.string().nullish(),
        status: z.string().nullish(),
        "result-count": lenientResultCount,
        "status-timestamps": lenientStatusTimestamps,
      })
      .passthrough(),
  }),
);
const lenientOutcome = z.object({
  enforcement_level: z.string().nullish(),
  status: z.string().nullish(),
  policy_name: z.string().nullish(),
  /** Terraform policy: the policy's file, and each enforce block's declaration. */
  file_name: z.string().nullish(),
  diagnostics: z.array(z.object({ context: z.string().nullish() }).passthrough()).nullish(),
});
export const lenientPolicySetOutcomeListDocument = lenientList(
  z.object({
    id: z.string(),
    attributes: z.object({
      outcomes: z.array(lenientOutcome).nullish(),
      "policy-set-name": z.string().nullish(),
    }),
  }),
);
export const lenientPolicyCheckListDocument = lenientList(
  z.object({
    id: z.string(),
    attributes: z.object({
      status: z.string().nullish(),
      "status-timestamps": lenientStatusTimestamps,
      result: z
        .object({
          sentinel: z
            .object({
              data: z
                .record(
                  z.string(),
                  z.object({
                    policies: z
                      .array(
                        z.object({
                          "allowed-failure": z.boolean().nullish(),
                          policy: z.string(),
                          result: z.boolean().nullish(),
                          error: z.string().nullish(),
                        }),
                      )
                      .nullish(),
                  }),
                )
                .nullish(),
            })
            .nullish(),
        })
        .nullish(),
    }),
  }),
);
export const lenientTfPolicyEvaluationListDocument = lenientList(
  z.object({
    id: z.string(),
    attributes: z
      .object({
        status: z.string().nullish(),
        "result-count": lenientResultCount,
        "status-timestamps": lenientStatusTimestamps,
      })
      .passthrough()
      .nullish(),
  }),
);
export const lenientTfPolicySetOutcomeListDocument = lenientPolicySetOutcomeListDocument;
