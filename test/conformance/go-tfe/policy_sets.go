package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	tfe "github.com/hashicorp/go-tfe"
)

// policySets drives every policy set call go-tfe has for what the local server serves: sets and their scope,
// versions uploaded from a folder (go-slug packs it, as the Terraform provider's tfe_slug does), and parameters.
// CONFORMANCE_WORKSPACE and CONFORMANCE_PROJECT name a seeded workspace and project of the organization.
func (s *suite) policySets(stamp string) {
	ctx := s.ctx
	workspace := &tfe.Workspace{ID: os.Getenv("CONFORMANCE_WORKSPACE")}
	project := &tfe.Project{ID: os.Getenv("CONFORMANCE_PROJECT")}
	name := "gotfe-set-" + stamp
	created, err := s.client.PolicySets.Create(ctx, s.organization, tfe.PolicySetCreateOptions{
		Name:        tfe.String(name),
		Description: tfe.String("made by go-tfe"),
		Kind:        tfe.Sentinel,
		Workspaces:  []*tfe.Workspace{workspace},
	})
	s.check("PolicySets.Create", "sentinel, scoped to a workspace", guarded(err, func() error {
		return all(
			expect(created.Name == name && created.Kind == tfe.Sentinel && !created.Global, "got %+v", *created),
			expect(created.WorkspaceCount == 1 && len(created.Workspaces) == 1, "workspaces %d", created.WorkspaceCount),
			expect(created.Overridable == nil, "overridable %v on a Sentinel set outside the agent", created.Overridable),
		)
	}))
	if err != nil {
		return
	}
	opa, err := s.client.PolicySets.Create(ctx, s.organization, tfe.PolicySetCreateOptions{
		Name: tfe.String(name + "-opa"), Kind: tfe.OPA, Global: tfe.Bool(true), Overridable: tfe.Bool(true),
	})
	s.check("PolicySets.Create", "opa, global, overridable", guarded(err, func() error {
		return expect(opa.Kind == tfe.OPA && opa.Global && opa.Overridable != nil && *opa.Overridable, "got %+v", *opa)
	}))
	_, err = s.client.PolicySets.Create(ctx, s.organization, tfe.PolicySetCreateOptions{Name: tfe.String(name)})
	s.check("PolicySets.Create", "a taken name: refused", expect(err != nil, "created a second set named %s", name))

	read, err := s.client.PolicySets.ReadWithOptions(ctx, created.ID, &tfe.PolicySetReadOptions{
		Include: []tfe.PolicySetIncludeOpt{tfe.PolicySetWorkspaces, tfe.PolicySetCurrentVersion},
	})
	s.check("PolicySets.ReadWithOptions", "include workspaces", guarded(err, func() error {
		return expect(len(read.Workspaces) == 1 && read.Workspaces[0].ID == workspace.ID, "workspaces %v", read.Workspaces)
	}))
	list, err := s.client.PolicySets.List(ctx, s.organization, &tfe.PolicySetListOptions{Search: name, Kind: tfe.OPA})
	s.check("PolicySets.List", "search[name] and filter[kind]", guarded(err, func() error {
		return expect(len(list.Items) == 1 && list.Items[0].ID == opa.ID && list.TotalCount == 1, "got %d sets", len(list.Items))
	}))
	updated, err := s.client.PolicySets.Update(ctx, created.ID, tfe.PolicySetUpdateOptions{Description: tfe.String("changed")})
	s.check("PolicySets.Update", "description; the rest kept", guarded(err, func() error {
		return expect(updated.Description == "changed" && updated.Name == name && updated.WorkspaceCount == 1, "got %+v", *updated)
	}))

	s.scope(created.ID, workspace, project)
	s.versions(created.ID)
	s.parameters(created.ID)

	for _, id := range []string{created.ID, opa.ID} {
		err = s.client.PolicySets.Delete(ctx, id)
		s.check("PolicySets.Delete", "gone after", guarded(err, func() error {
			_, err := s.client.PolicySets.Read(ctx, id)
			return expect(errors.Is(err, tfe.ErrResourceNotFound), "read after delete: %v", err)
		}))
	}
}

// scope: workspaces, projects and exclusions join and leave a set through its relationships.
func (s *suite) scope(setID string, workspace *tfe.Workspace, project *tfe.Project) {
	ctx := s.ctx
	counts := func(workspaces, projects int) error {
		set, err := s.client.PolicySets.Read(ctx, setID)
		if err != nil {
			return err
		}
		return expect(set.WorkspaceCount == workspaces && set.ProjectCount == projects,
			"workspace-count %d, project-count %d; want %d, %d", set.WorkspaceCount, set.ProjectCount, workspaces, projects)
	}
	err := s.client.PolicySets.RemoveWorkspaces(ctx, setID, tfe.PolicySetRemoveWorkspacesOptions{Workspaces: []*tfe.Workspace{workspace}})
	s.check("PolicySets.RemoveWorkspaces", "the workspace leaves", guarded(err, func() error { return counts(0, 0) }))
	err = s.client.PolicySets.AddWorkspaces(ctx, setID, tfe.PolicySetAddWorkspacesOptions{Workspaces: []*tfe.Workspace{workspace}})
	s.check("PolicySets.AddWorkspaces", "the workspace joins", guarded(err, func() error { return counts(1, 0) }))
	err = s.client.PolicySets.AddProjects(ctx, setID, tfe.PolicySetAddProjectsOptions{Projects: []*tfe.Project{project}})
	s.check("PolicySets.AddProjects", "the project joins", guarded(err, func() error { return counts(1, 1) }))
	err = s.client.PolicySets.RemoveProjects(ctx, setID, tfe.PolicySetRemoveProjectsOptions{Projects: []*tfe.Project{project}})
	s.check("PolicySets.RemoveProjects", "the project leaves", guarded(err, func() error { return counts(1, 0) }))
	exclusions := func(want int) error {
		set, err := s.client.PolicySets.ReadWithOptions(ctx, setID, &tfe.PolicySetReadOptions{
			Include: []tfe.PolicySetIncludeOpt{tfe.PolicySetWorkspaceExclusions},
		})
		if err != nil {
			return err
		}
		return expect(len(set.WorkspaceExclusions) == want, "%d exclusions, want %d", len(set.WorkspaceExclusions), want)
	}
	err = s.client.PolicySets.AddWorkspaceExclusions(ctx, setID, tfe.PolicySetAddWorkspaceExclusionsOptions{WorkspaceExclusions: []*tfe.Workspace{workspace}})
	s.check("PolicySets.AddWorkspaceExclusions", "the workspace is excluded", guarded(err, func() error { return exclusions(1) }))
	err = s.client.PolicySets.RemoveWorkspaceExclusions(ctx, setID, tfe.PolicySetRemoveWorkspaceExclusionsOptions{WorkspaceExclusions: []*tfe.Workspace{workspace}})
	s.check("PolicySets.RemoveWorkspaceExclusions", "the exclusion is lifted", guarded(err, func() error { return exclusions(0) }))
}

// versions: a folder uploaded as go-tfe packs it becomes ready and current; a broken one errors and leaves the
// ready one current.
// uploadVersion makes a version of the set, uploads the folder of files (go-slug packs it) and waits until it
// settles.
func (s *suite) uploadVersion(setID string, files map[string]string) (*tfe.PolicySetVersion, error) {
	ctx := s.ctx
	version, err := s.client.PolicySetVersions.Create(ctx, setID)
	s.check("PolicySetVersions.Create", "pending, with an upload link", guarded(err, func() error {
		return expect(version.Status == tfe.PolicySetVersionPending && version.Links["upload"] != nil, "got %+v", *version)
	}))
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "gotfe-policy-set-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	for path, content := range files {
		full := filepath.Join(dir, path)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			return nil, err
		}
	}
	err = s.client.PolicySetVersions.Upload(ctx, *version, dir)
	s.check("PolicySetVersions.Upload", fmt.Sprintf("%d files, packed by go-slug, to the link", len(files)), err)
	if err != nil {
		return nil, err
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		version, err = s.client.PolicySetVersions.Read(ctx, version.ID)
		if err != nil || version.Status == tfe.PolicySetVersionReady || version.Status == tfe.PolicySetVersionErrored {
			return version, err
		}
	}
	return version, fmt.Errorf("still %s after 10s", version.Status)
}

func (s *suite) versions(setID string) {
	ctx := s.ctx
	upload := func(files map[string]string) (*tfe.PolicySetVersion, error) { return s.uploadVersion(setID, files) }
	ready, err := upload(map[string]string{
		"sentinel.hcl":                      "module \"functions\" {\n  source = \"./modules/functions.sentinel\"\n}\n\npolicy \"check\" {\n  enforcement_level = \"hard-mandatory\"\n}\n",
		"check.sentinel":                    "import \"functions\"\nmain = rule { true }\n",
		"modules/functions.sentinel":        "ok = func() { return true }\n",
		".terraform/ignored-by-go-slug.txt": "left out of the archive",
	})
	s.check("PolicySetVersions.Read", "ready, and the set's current version", guarded(err, func() error {
		set, err := s.client.PolicySets.Read(ctx, setID)
		if err != nil {
			return err
		}
		return all(
			expect(ready.Status == tfe.PolicySetVersionReady, "status %s: %s", ready.Status, ready.ErrorMessage),
			expect(set.CurrentVersion != nil && set.CurrentVersion.ID == ready.ID, "current-version %v", set.CurrentVersion),
		)
	}))
	errored, err := upload(map[string]string{"policy.sentinel": "main = rule { true }\n"})
	s.check("PolicySetVersions.Read", "errored for a folder without sentinel.hcl, with its reason", guarded(err, func() error {
		set, err := s.client.PolicySets.Read(ctx, setID)
		if err != nil {
			return err
		}
		return all(
			expect(errored.Status == tfe.PolicySetVersionErrored, "status %s", errored.Status),
			expect(errored.ErrorMessage != "", "no error-message"),
			expect(ready != nil && set.CurrentVersion != nil && set.CurrentVersion.ID == ready.ID, "current-version moved to %v", set.CurrentVersion),
			expect(set.NewestVersion != nil && set.NewestVersion.ID == errored.ID, "newest-version %v", set.NewestVersion),
		)
	}))
}

// parameters: created, listed, read, updated and deleted; a sensitive value never reads back.
func (s *suite) parameters(setID string) {
	ctx := s.ctx
	category := tfe.CategoryPolicySet
	plain, err := s.client.PolicySetParameters.Create(ctx, setID, tfe.PolicySetParameterCreateOptions{
		Key: tfe.String("limit"), Value: tfe.String("5"), Category: &category,
	})
	s.check("PolicySetParameters.Create", "plain", guarded(err, func() error {
		return expect(plain.Key == "limit" && plain.Value == "5" && !plain.Sensitive, "got %+v", *plain)
	}))
	secret, err := s.client.PolicySetParameters.Create(ctx, setID, tfe.PolicySetParameterCreateOptions{
		Key: tfe.String("token"), Value: tfe.String("s3cr3t"), Category: &category, Sensitive: tfe.Bool(true),
	})
	s.check("PolicySetParameters.Create", "sensitive: the value does not come back", guarded(err, func() error {
		return expect(secret.Sensitive && secret.Value == "", "got %+v", *secret)
	}))
	if plain == nil || secret == nil {
		return
	}
	list, err := s.client.PolicySetParameters.List(ctx, setID, nil)
	s.check("PolicySetParameters.List", "both, the sensitive one empty", guarded(err, func() error {
		return expect(len(list.Items) == 2 && list.Items[1].Value == "", "got %d", len(list.Items))
	}))
	read, err := s.client.PolicySetParameters.Read(ctx, setID, secret.ID)
	s.check("PolicySetParameters.Read", "sensitive reads back empty", guarded(err, func() error {
		return expect(read.Key == "token" && read.Value == "", "got %+v", *read)
	}))
	updated, err := s.client.PolicySetParameters.Update(ctx, setID, plain.ID, tfe.PolicySetParameterUpdateOptions{Value: tfe.String("6")})
	s.check("PolicySetParameters.Update", "value", guarded(err, func() error {
		return expect(updated.Value == "6" && updated.Key == "limit", "got %+v", *updated)
	}))
	err = s.client.PolicySetParameters.Delete(ctx, setID, plain.ID)
	s.check("PolicySetParameters.Delete", "gone after", guarded(err, func() error {
		_, err := s.client.PolicySetParameters.Read(ctx, setID, plain.ID)
		return expect(errors.Is(err, tfe.ErrResourceNotFound), "read after delete: %v", err)
	}))
}

// terraformPolicy: a set of the third kind (go-tfe's TFPolicy), listed by kind, with a version uploaded from a folder
// of a policy file and its test, read back ready.
func (s *suite) terraformPolicy(stamp string) {
	ctx := s.ctx
	name := "gotfe-tfpolicy-" + stamp
	created, err := s.client.PolicySets.Create(ctx, s.organization, tfe.PolicySetCreateOptions{
		Name: tfe.String(name), Kind: tfe.TFPolicy,
	})
	s.check("PolicySets.Create", "tfpolicy", guarded(err, func() error {
		return expect(created.Kind == tfe.TFPolicy && created.Overridable == nil, "got %+v", *created)
	}))
	if err != nil {
		return
	}
	list, err := s.client.PolicySets.List(ctx, s.organization, &tfe.PolicySetListOptions{Search: "gotfe-", Kind: tfe.TFPolicy})
	s.check("PolicySets.List", "filter[kind]=tfpolicy", guarded(err, func() error {
		return expect(len(list.Items) == 1 && list.Items[0].ID == created.ID, "got %d sets", len(list.Items))
	}))
	version, err := s.uploadVersion(created.ID, map[string]string{
		"require-tags.policy.hcl":     "resource_policy \"aws_s3_bucket\" \"owner\" {\n  enforcement_level = \"advisory\"\n  enforce {\n    condition = core::try(attrs.tags.Owner, \"\") != \"\"\n  }\n}\n",
		"require-tags.policytest.hcl": "resource \"aws_s3_bucket\" \"tagged\" {\n  attrs = { tags = { Owner = \"x\" } }\n}\n",
	})
	s.check("PolicySetVersions.Read", "a Terraform policy folder: ready", guarded(err, func() error {
		read, err := s.client.PolicySetVersions.Read(ctx, version.ID)
		if err != nil {
			return err
		}
		return expect(read.Status == tfe.PolicySetVersionReady, "status %s: %s", read.Status, read.ErrorMessage)
	}))
	err = s.client.PolicySets.Delete(ctx, created.ID)
	s.check("PolicySets.Delete", "tfpolicy", err)
}
