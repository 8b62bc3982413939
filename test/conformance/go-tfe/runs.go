package main

import (
	"os"

	tfe "github.com/hashicorp/go-tfe"
)

// runs reads the seeded runs of CONFORMANCE_WORKSPACE and the policy results they recorded, every way go-tfe reads
// them: a run's task stages, their policy evaluations and policy-set outcomes; its policy checks; its Terraform
// policy evaluations (from the run's relationship: go-tfe has no call that lists them) and their outcomes. The seed
// (go-tfe.test.ts) gives the newest run one result of each kind.
func (s *suite) runs() {
	ctx := s.ctx
	workspace := os.Getenv("CONFORMANCE_WORKSPACE")
	list, err := s.client.Runs.List(ctx, workspace, &tfe.RunListOptions{ListOptions: tfe.ListOptions{PageSize: 1}})
	s.check("Runs.List", "newest first, one per page", guarded(err, func() error {
		return all(
			expect(len(list.Items) == 1 && list.Items[0].ID == "run-Conformance00002", "first page: %v", list.Items),
			expect(list.Pagination != nil && list.Pagination.TotalCount == 2 && list.Pagination.NextPage == 2,
				"pagination: %+v", list.Pagination),
			expect(list.Items[0].Status == tfe.RunApplied, "status %q", list.Items[0].Status),
			expect(len(list.Items[0].TaskStages) == 1 && len(list.Items[0].PolicyChecks) == 1 &&
				len(list.Items[0].TFPolicyEvaluations) == 1, "relationships of the newest run"),
		)
	}))
	if err != nil || len(list.Items) != 1 {
		return
	}
	run := list.Items[0]

	stages, err := s.client.TaskStages.List(ctx, run.ID, nil)
	s.check("TaskStages.List", "a run's post-plan stage, an evaluation per framework", guarded(err, func() error {
		return expect(len(stages.Items) == 1 && stages.Items[0].Stage == tfe.PostPlan &&
			len(stages.Items[0].PolicyEvaluations) == 2, "stages: %+v", stages.Items)
	}))
	if err != nil || len(stages.Items) != 1 {
		return
	}
	evaluations, err := s.client.PolicyEvaluations.List(ctx, stages.Items[0].ID, nil)
	var sentinel *tfe.PolicyEvaluation
	for _, evaluation := range evaluationsOf(evaluations) {
		if evaluation.PolicyKind == tfe.Sentinel {
			sentinel = evaluation
		}
	}
	s.check("PolicyEvaluations.List", "one evaluation per framework, the Sentinel one's result count", guarded(err, func() error {
		return expect(len(evaluations.Items) == 2 && sentinel != nil && sentinel.ResultCount != nil &&
			sentinel.ResultCount.AdvisoryFailed == 1 && sentinel.ResultCount.Passed == 1, "evaluations: %+v", evaluations.Items)
	}))
	if sentinel == nil {
		return
	}
	outcomes, err := s.client.PolicySetOutcomes.List(ctx, sentinel.ID, nil)
	s.check("PolicySetOutcomes.List", "each policy's name, level and status", guarded(err, func() error {
		if len(outcomes.Items) != 1 || len(outcomes.Items[0].Outcomes) != 2 {
			return expect(false, "outcomes: %+v", outcomes.Items)
		}
		first, second := outcomes.Items[0].Outcomes[0], outcomes.Items[0].Outcomes[1]
		return all(
			expect(outcomes.Items[0].PolicySetName == "baseline", "set %q", outcomes.Items[0].PolicySetName),
			expect(first.PolicyName == "require-tags" && first.EnforcementLevel == tfe.EnforcementAdvisory &&
				first.Status == "failed", "outcome %+v", first),
			expect(second.PolicyName == "restrict-regions" && second.EnforcementLevel == tfe.EnforcementMandatory &&
				second.Status == "passed", "outcome %+v", second),
		)
	}))

	checks, err := s.client.PolicyChecks.List(ctx, run.ID, nil)
	s.check("PolicyChecks.List", "the older policy check, its counts", guarded(err, func() error {
		return expect(len(checks.Items) == 1 && checks.Items[0].Result != nil && checks.Items[0].Result.SoftFailed == 1 &&
			checks.Items[0].Status == tfe.PolicySoftFailed, "checks: %+v", checks.Items)
	}))

	tfOutcomes, err := s.client.TFPolicyEvaluationOutcomes.List(ctx, run.TFPolicyEvaluations[0].ID, nil)
	s.check("TFPolicyEvaluationOutcomes.List", "Terraform policy's levels and statuses", guarded(err, func() error {
		if len(tfOutcomes.Items) != 1 || len(tfOutcomes.Items[0].Outcomes) != 1 {
			return expect(false, "outcomes: %+v", tfOutcomes.Items)
		}
		outcome := tfOutcomes.Items[0].Outcomes[0]
		return expect(outcome.PolicyName == "s3-encrypted" &&
			outcome.EnforcementLevel == tfe.TFPolicyEvaluationOutcomeEnforcementLevelMandatoryOverridable &&
			outcome.Status == "failed", "outcome %+v", outcome)
	}))
}

func evaluationsOf(list *tfe.PolicyEvaluationList) []*tfe.PolicyEvaluation {
	if list == nil {
		return nil
	}
	return list.Items
}
