// Command conformance drives the local server with HashiCorp's official Go client, go-tfe, the way Go tools and
// the Terraform provider use it: every policy call, and the deprecation and registry reads through go-tfe's raw
// request helper. It prints one table row per call and exits 1 when any call did not behave as the service does.
//
// Configuration is go-tfe's own (TFE_ADDRESS, TFE_TOKEN) and Go's own (SSL_CERT_FILE to trust a certificate),
// plus CONFORMANCE_ORGANIZATION, CONFORMANCE_MODULE ("name/provider/version", a version not deprecated yet),
// CONFORMANCE_POLICY_SET, CONFORMANCE_WORKSPACE and CONFORMANCE_PROJECT (a seeded set, workspace and project) and
// CONFORMANCE_RATE_LIMIT (the server's enforced limit per second; empty for none).
package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"runtime/debug"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	cleanhttp "github.com/hashicorp/go-cleanhttp"
	tfe "github.com/hashicorp/go-tfe"
	svchost "github.com/hashicorp/terraform-svchost"
	"github.com/hashicorp/terraform-svchost/disco"
)

type row struct {
	call, detail string
	err          error
}

type suite struct {
	ctx          context.Context
	client       *tfe.Client
	address      *url.URL
	organization string
	rows         []row
	// Every redirect go-tfe's HTTP client followed, as it was about to be sent (headers already filtered by Go).
	redirects []*http.Request
}

// check records one call: err is the call's own error or a broken expectation about its result.
func (s *suite) check(call string, detail string, err error) {
	s.rows = append(s.rows, row{call, detail, err})
}

func expect(ok bool, format string, args ...any) error {
	if ok {
		return nil
	}
	return fmt.Errorf(format, args...)
}

// all joins the call error and the failed expectations; nil when there are none.
func all(errs ...error) error {
	return errors.Join(errs...)
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "slug" {
		os.Exit(slugMain(os.Args[2:]))
	}
	organization := os.Getenv("CONFORMANCE_ORGANIZATION")
	module := strings.Split(os.Getenv("CONFORMANCE_MODULE"), "/")
	if organization == "" || len(module) != 3 || os.Getenv("TFE_ADDRESS") == "" || os.Getenv("TFE_TOKEN") == "" {
		fmt.Fprintln(os.Stderr, "set TFE_ADDRESS, TFE_TOKEN, CONFORMANCE_ORGANIZATION and CONFORMANCE_MODULE=name/provider/version")
		os.Exit(2)
	}
	address, err := url.Parse(os.Getenv("TFE_ADDRESS"))
	if err != nil {
		fmt.Fprintf(os.Stderr, "TFE_ADDRESS: %v\n", err)
		os.Exit(2)
	}
	s := &suite{ctx: context.Background(), address: address, organization: organization}

	httpClient := cleanhttp.DefaultPooledClient()
	httpClient.Timeout = 30 * time.Second
	httpClient.CheckRedirect = func(request *http.Request, via []*http.Request) error {
		s.redirects = append(s.redirects, request)
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	// An empty Config takes TFE_ADDRESS and TFE_TOKEN from the environment, as go-tfe based tools do.
	s.client, err = tfe.NewClient(&tfe.Config{HTTPClient: httpClient})
	s.check("tfe.NewClient", "GET /api/v2/ping", err)
	if err == nil {
		s.rateLimitHeader(os.Getenv("CONFORMANCE_RATE_LIMIT"))
		s.policies()
		stamp := fmt.Sprintf("%d", time.Now().UnixNano())
		s.policySets(stamp)
		s.terraformPolicy(stamp)
		s.registry(module[0], module[1], module[2])
		s.discovery()
		s.runs()
	}
	if address.Scheme == "https" {
		s.untrusted()
	}
	os.Exit(s.report())
}

// rateLimitHeader: go-tfe paces itself by X-RateLimit-Limit (two thirds of it, a burst of a third), so the
// header must say the limit the server enforces (want), and be absent when it enforces none.
func (s *suite) rateLimitHeader(want string) {
	var limit []string
	ctx := tfe.ContextWithResponseHeaderHook(s.ctx, func(_ int, header http.Header) {
		limit = header.Values("X-RateLimit-Limit")
	})
	_, err := s.client.Policies.List(ctx, s.organization, nil)
	detail := "absent: no limit enforced"
	if want != "" {
		detail = "the enforced " + want
	}
	s.check("X-RateLimit-Limit", detail, guarded(err, func() error {
		if want == "" {
			return expect(len(limit) == 0, "sent %q", limit)
		}
		return expect(len(limit) == 1 && limit[0] == want, "sent %q", limit)
	}))
}

func (s *suite) policies() {
	ctx := s.ctx
	stamp := fmt.Sprintf("%d", time.Now().UnixNano())
	level := func(l tfe.EnforcementLevel) *tfe.EnforcementLevel { return &l }
	path := func(p string) *string { return &p }

	sentinelName := "gotfe-sentinel-" + stamp
	sentinel, err := s.client.Policies.Create(ctx, s.organization, tfe.PolicyCreateOptions{
		Name:             tfe.String(sentinelName),
		Description:      tfe.String("created by go-tfe"),
		EnforcementLevel: level(tfe.EnforcementSoft),
	})
	s.check("Policies.Create", "sentinel, enforcement-level soft-mandatory", guarded(err, func() error {
		return all(
			expect(sentinel.Kind == tfe.Sentinel, "kind %q", sentinel.Kind),
			expect(sentinel.EnforcementLevel == tfe.EnforcementSoft, "enforcement-level %q", sentinel.EnforcementLevel),
			expect(sentinel.Description == "created by go-tfe", "description %q", sentinel.Description),
			expect(sentinel.Organization != nil && sentinel.Organization.Name == s.organization, "organization relationship missing"),
		)
	}))
	if sentinel == nil {
		return
	}

	enforcedName := "gotfe-enforce-" + stamp
	enforced, err := s.client.Policies.Create(ctx, s.organization, tfe.PolicyCreateOptions{
		Name:    tfe.String(enforcedName),
		Enforce: []*tfe.EnforcementOptions{{Path: path(enforcedName + ".sentinel"), Mode: level(tfe.EnforcementHard)}},
	})
	s.check("Policies.Create", "sentinel, deprecated enforce hard-mandatory", guarded(err, func() error {
		return expect(enforced.EnforcementLevel == tfe.EnforcementHard, "enforcement-level %q", enforced.EnforcementLevel)
	}))

	opaName := "gotfe-opa-" + stamp
	opa, err := s.client.Policies.Create(ctx, s.organization, tfe.PolicyCreateOptions{
		Name:             tfe.String(opaName),
		Kind:             tfe.OPA,
		Query:            tfe.String("data.terraform.deny"),
		EnforcementLevel: level(tfe.EnforcementMandatory),
	})
	s.check("Policies.Create", "opa with query, enforcement-level mandatory", guarded(err, func() error {
		return all(
			expect(opa.Kind == tfe.OPA, "kind %q", opa.Kind),
			expect(opa.Query != nil && *opa.Query == "data.terraform.deny", "query %v", opa.Query),
			expect(opa.EnforcementLevel == tfe.EnforcementMandatory, "enforcement-level %q", opa.EnforcementLevel),
		)
	}))

	opaEnforcedName := "gotfe-opa-enforce-" + stamp
	opaEnforced, err := s.client.Policies.Create(ctx, s.organization, tfe.PolicyCreateOptions{
		Name:    tfe.String(opaEnforcedName),
		Kind:    tfe.OPA,
		Query:   tfe.String("data.terraform.warn"),
		Enforce: []*tfe.EnforcementOptions{{Path: path(opaEnforcedName + ".rego"), Mode: level(tfe.EnforcementAdvisory)}},
	})
	s.check("Policies.Create", "opa, deprecated enforce advisory", guarded(err, func() error {
		return expect(opaEnforced.EnforcementLevel == tfe.EnforcementAdvisory, "enforcement-level %q", opaEnforced.EnforcementLevel)
	}))

	_, err = s.client.Policies.Create(ctx, s.organization, tfe.PolicyCreateOptions{
		Name:             tfe.String(sentinelName),
		EnforcementLevel: level(tfe.EnforcementAdvisory),
	})
	s.check("Policies.Create", "a taken name is refused (422)", expect(err != nil && strings.Contains(err.Error(), "taken"),
		"want an error saying the name is taken, got %v", err))

	before, err := s.client.Policies.Read(ctx, sentinel.ID)
	s.check("Policies.Read", "before upload: no updated-at, enforce empty", guarded(err, func() error {
		return all(
			expect(before.UpdatedAt.IsZero(), "updated-at %v", before.UpdatedAt),
			expect(len(before.Enforce) == 0, "enforce has %d entries", len(before.Enforce)),
			expect(before.Name == sentinelName, "name %q", before.Name),
		)
	}))

	_, err = s.client.Policies.Download(ctx, sentinel.ID)
	s.check("Policies.Download", "before upload: not found", expect(errors.Is(err, tfe.ErrResourceNotFound), "want ErrResourceNotFound, got %v", err))

	sentinelCode := []byte("main = rule { true } # uploaded by go-tfe\n")
	s.check("Policies.Upload", "sentinel code", s.client.Policies.Upload(ctx, sentinel.ID, sentinelCode))

	after, err := s.client.Policies.Read(ctx, sentinel.ID)
	s.check("Policies.Read", "after upload: updated-at set, enforce names the file", guarded(err, func() error {
		return all(
			expect(!after.UpdatedAt.IsZero(), "updated-at still zero"),
			expect(len(after.Enforce) == 1 && after.Enforce[0].Path == sentinelName+".sentinel" &&
				after.Enforce[0].Mode == tfe.EnforcementSoft, "enforce %s", enforcement(after.Enforce)),
		)
	}))

	s.redirects = nil
	downloaded, err := s.client.Policies.Download(ctx, sentinel.ID)
	s.check("Policies.Download", "the uploaded bytes, through the redirect, without the token", guarded(err, func() error {
		return all(
			expect(bytes.Equal(downloaded, sentinelCode), "got %q", downloaded),
			s.redirectChecks(),
		)
	}))

	if opa != nil {
		opaCode := []byte("package terraform\n\ndeny[msg] { false; msg := \"never\" }\n")
		err = s.client.Policies.Upload(ctx, opa.ID, opaCode)
		var got []byte
		if err == nil {
			got, err = s.client.Policies.Download(ctx, opa.ID)
		}
		s.check("Policies.Upload+Download", "opa code round trip", all(err, expect(err != nil || bytes.Equal(got, opaCode), "got %q", got)))
	}
	if enforced != nil {
		err = s.client.Policies.Upload(ctx, enforced.ID, []byte{})
		var got []byte
		if err == nil {
			got, err = s.client.Policies.Download(ctx, enforced.ID)
		}
		s.check("Policies.Upload+Download", "empty code", all(err, expect(err != nil || len(got) == 0, "got %d bytes", len(got))))
	}

	s.updates(sentinel, opa)
	s.membership(sentinel)
	s.lists(stamp, 4)

	if opaEnforced == nil {
		return
	}
	err = s.client.Policies.Delete(ctx, opaEnforced.ID)
	s.check("Policies.Delete", "answers 204", err)
	_, err = s.client.Policies.Read(ctx, opaEnforced.ID)
	s.check("Policies.Read", "a deleted policy: not found", expect(errors.Is(err, tfe.ErrResourceNotFound), "want ErrResourceNotFound, got %v", err))
	err = s.client.Policies.Delete(ctx, opaEnforced.ID)
	s.check("Policies.Delete", "again: not found", expect(errors.Is(err, tfe.ErrResourceNotFound), "want ErrResourceNotFound, got %v", err))
}

// membership: a policy joins a policy set and leaves it through the set's relationships, keeping its id.
func (s *suite) membership(policy *tfe.Policy) {
	setID := os.Getenv("CONFORMANCE_POLICY_SET")
	countIs := func(want int) error {
		read, err := s.client.Policies.Read(s.ctx, policy.ID)
		if err != nil {
			return err
		}
		return expect(read.ID == policy.ID && read.PolicySetCount == want, "policy %s, policy-set-count %d, want %d", read.ID, read.PolicySetCount, want)
	}
	err := s.client.PolicySets.AddPolicies(s.ctx, setID, tfe.PolicySetAddPoliciesOptions{Policies: []*tfe.Policy{policy}})
	s.check("PolicySets.AddPolicies", "the policy joins the set, same id", guarded(err, func() error { return countIs(1) }))
	err = s.client.PolicySets.RemovePolicies(s.ctx, setID, tfe.PolicySetRemovePoliciesOptions{Policies: []*tfe.Policy{policy}})
	s.check("PolicySets.RemovePolicies", "the policy leaves the set", guarded(err, func() error { return countIs(0) }))
}

// guarded runs the expectations only when the call succeeded (go-tfe then returns a value), so a failed call
// reports its own error.
func guarded(err error, expectations func() error) error {
	if err != nil {
		return err
	}
	return expectations()
}

func (s *suite) updates(sentinel, opa *tfe.Policy) {
	ctx := s.ctx
	update := func(id, what string, options tfe.PolicyUpdateOptions, expectations func(*tfe.Policy) error) {
		updated, err := s.client.Policies.Update(ctx, id, options)
		s.check("Policies.Update", what, guarded(err, func() error { return expectations(updated) }))
	}
	update(sentinel.ID, "description", tfe.PolicyUpdateOptions{Description: tfe.String("changed by go-tfe")}, func(p *tfe.Policy) error {
		return all(
			expect(p.Description == "changed by go-tfe", "description %q", p.Description),
			expect(p.EnforcementLevel == tfe.EnforcementSoft, "enforcement-level changed to %q", p.EnforcementLevel),
		)
	})
	update(sentinel.ID, "description cleared", tfe.PolicyUpdateOptions{Description: tfe.String("")}, func(p *tfe.Policy) error {
		return expect(p.Description == "", "description %q", p.Description)
	})
	advisory := tfe.EnforcementAdvisory
	update(sentinel.ID, "enforcement-level", tfe.PolicyUpdateOptions{EnforcementLevel: &advisory}, func(p *tfe.Policy) error {
		return all(
			expect(p.EnforcementLevel == tfe.EnforcementAdvisory, "enforcement-level %q", p.EnforcementLevel),
			expect(len(p.Enforce) == 1 && p.Enforce[0].Mode == tfe.EnforcementAdvisory, "enforce %s", enforcement(p.Enforce)),
		)
	})
	hard := tfe.EnforcementHard
	path := sentinel.Name + ".sentinel"
	update(sentinel.ID, "deprecated enforce", tfe.PolicyUpdateOptions{Enforce: []*tfe.EnforcementOptions{{Path: &path, Mode: &hard}}},
		func(p *tfe.Policy) error {
			return expect(p.EnforcementLevel == tfe.EnforcementHard, "enforcement-level %q", p.EnforcementLevel)
		})
	before, err := s.client.Policies.Read(ctx, sentinel.ID)
	if err == nil {
		update(sentinel.ID, "nothing set: the policy unchanged", tfe.PolicyUpdateOptions{}, func(p *tfe.Policy) error {
			return expect(p.Description == before.Description && p.EnforcementLevel == before.EnforcementLevel &&
				p.UpdatedAt.Equal(before.UpdatedAt) && enforcement(p.Enforce) == enforcement(before.Enforce),
				"before %+v, after %+v", *before, *p)
		})
	}
	if opa != nil {
		update(opa.ID, "query", tfe.PolicyUpdateOptions{Query: tfe.String("data.terraform.violations")}, func(p *tfe.Policy) error {
			return expect(p.Query != nil && *p.Query == "data.terraform.violations", "query %v", p.Query)
		})
	}
}

// lists checks search, kind and paging over the policies this run made (names carry stamp; `made` of them).
func (s *suite) lists(stamp string, made int) {
	ctx := s.ctx
	found, err := s.client.Policies.List(ctx, s.organization, &tfe.PolicyListOptions{Search: "gotfe-opa-enforce-" + stamp})
	s.check("Policies.List", "search[name] finds exactly the match", guarded(err, func() error {
		return all(
			expect(len(found.Items) == 1 && found.Items[0].Name == "gotfe-opa-enforce-"+stamp, "got %s", names(found.Items)),
			expect(found.Pagination != nil && found.TotalCount == 1, "total-count %v", found.Pagination),
		)
	}))

	opa, err := s.client.Policies.List(ctx, s.organization, &tfe.PolicyListOptions{Search: stamp, Kind: tfe.OPA})
	s.check("Policies.List", "filter[kind]=opa", guarded(err, func() error {
		kinds := true
		for _, p := range opa.Items {
			kinds = kinds && p.Kind == tfe.OPA
		}
		return all(
			expect(kinds && len(opa.Items) == 2, "got %s", names(opa.Items)),
			expect(opa.TotalCount == 2, "total-count %d", opa.TotalCount),
		)
	}))

	const pageSize = 1
	seen := map[string]bool{}
	pages := 0
	var last *tfe.PolicyList
	for page := 1; page != 0 && pages < 10; pages++ {
		list, err := s.client.Policies.List(ctx, s.organization, &tfe.PolicyListOptions{
			ListOptions: tfe.ListOptions{PageNumber: page, PageSize: pageSize},
			Search:      stamp,
		})
		if err != nil {
			s.check("Policies.List", fmt.Sprintf("page %d of size %d", page, pageSize), err)
			return
		}
		for _, p := range list.Items {
			seen[p.ID] = true
		}
		last = list
		page = list.NextPage
	}
	wantPages := (made + pageSize - 1) / pageSize
	s.check("Policies.List", fmt.Sprintf("paging: %d policies in pages of %d", made, pageSize), all(
		expect(len(seen) == made, "saw %d distinct policies", len(seen)),
		expect(pages == wantPages, "followed next-page %d times, want %d", pages, wantPages),
		expect(last != nil && last.TotalPages == wantPages && last.TotalCount == made && last.CurrentPage == wantPages &&
			last.PreviousPage == wantPages-1, "last page's pagination %+v", paginationOf(last)),
	))

	beyond, err := s.client.Policies.List(ctx, s.organization, &tfe.PolicyListOptions{
		ListOptions: tfe.ListOptions{PageNumber: wantPages + 1, PageSize: pageSize},
		Search:      stamp,
	})
	s.check("Policies.List", "a page past the end is empty", guarded(err, func() error {
		return expect(len(beyond.Items) == 0 && beyond.TotalCount == made, "got %s, total-count %d", names(beyond.Items), beyond.TotalCount)
	}))
}

// redirectChecks: the download redirect keeps the API's scheme, and Go's client does not take the token along
// (it keeps Authorization on a redirect to the same host name, whatever the port).
func (s *suite) redirectChecks() error {
	if len(s.redirects) != 1 {
		return fmt.Errorf("followed %d redirects, want 1", len(s.redirects))
	}
	target := s.redirects[0].URL
	return all(
		expect(target.Scheme == s.address.Scheme, "redirected from %s to %s", s.address.Scheme, target.Scheme),
		expect(s.redirects[0].Header.Get("Authorization") == "", "the token went along to %s", target.Host),
	)
}

type moduleVersionDeprecation struct {
	ID          string       `jsonapi:"primary,module-versions"`
	Deprecation *deprecation `jsonapi:"relation,deprecation,omitempty"`
}

type deprecation struct {
	ID     string `jsonapi:"primary,deprecations"`
	Reason string `jsonapi:"attr,reason"`
	Link   string `jsonapi:"attr,link"`
}

type deprecationRequest struct {
	Type        string            `jsonapi:"primary,module-versions"`
	Deprecation map[string]string `jsonapi:"attr,deprecation"`
}

type registryDeprecation struct {
	Reason string `json:"reason"`
	Link   string `json:"link"`
}

type registryVersion struct {
	ID          string               `json:"id"`
	Version     string               `json:"version"`
	Deprecation *registryDeprecation `json:"deprecation"`
}

type registryVersions struct {
	Modules []struct {
		Source   string            `json:"source"`
		Versions []registryVersion `json:"versions"`
	} `json:"modules"`
}

// registry deprecates and reinstates a module version with PATCH through go-tfe's raw request helper, and reads the
// registry's record of it with go-tfe's registry call and its raw JSON helper.
func (s *suite) registry(name, provider, version string) {
	ctx := s.ctx
	org := s.organization
	id := tfe.RegistryModuleID{Organization: org, Namespace: org, Name: name, Provider: provider, RegistryName: tfe.PrivateRegistry}
	record, err := s.client.RegistryModules.ReadTerraformRegistryModule(ctx, id, version)
	s.check("RegistryModules.ReadTerraformRegistryModule", "GET /api/registry/v1/modules/... (plain JSON)", guarded(err, func() error {
		return all(
			expect(record.ID == fmt.Sprintf("%s/%s/%s/%s", org, name, provider, version), "id %q", record.ID),
			expect(record.Namespace == org && record.Name == name && record.Provider == provider && record.Version == version,
				"record %+v", record),
		)
	}))

	versionPath := fmt.Sprintf("organizations/%s/registry-modules/private/%s/%s/%s/%s",
		url.PathEscape(org), url.PathEscape(org), url.PathEscape(name), url.PathEscape(provider), url.PathEscape(version))
	registryPath := fmt.Sprintf("/api/registry/v1/modules/%s/%s/%s/%s", url.PathEscape(org), url.PathEscape(name), url.PathEscape(provider), url.PathEscape(version))
	reason := "Superseded; upgrade (go-tfe conformance)."
	link := "https://example.com/upgrade"

	deprecated := &moduleVersionDeprecation{}
	err = s.do("PATCH", versionPath, &deprecationRequest{Deprecation: map[string]string{
		"deprecated-status": "Deprecated", "reason": reason, "link": link,
	}}, deprecated)
	s.check("NewRequest PATCH module version", "Deprecated: deprecation record included", guarded(err, func() error {
		return expect(deprecated.Deprecation != nil && strings.HasPrefix(deprecated.Deprecation.Reason, reason) &&
			deprecated.Deprecation.Link == link, "deprecation %+v", deprecated.Deprecation)
	}))

	read := &registryVersion{}
	err = s.doJSON(registryPath, read)
	s.check("NewRequest GET registry version", "deprecation reason and link", guarded(err, func() error {
		return expect(read.Deprecation != nil && strings.HasPrefix(read.Deprecation.Reason, reason) && read.Deprecation.Link == link,
			"deprecation %+v", read.Deprecation)
	}))

	listing := &registryVersions{}
	err = s.doJSON(fmt.Sprintf("/api/registry/v1/modules/%s/%s/%s/versions", url.PathEscape(org), url.PathEscape(name), url.PathEscape(provider)), listing)
	s.check("NewRequest GET registry versions", "the version listed as deprecated", guarded(err, func() error {
		for _, m := range listing.Modules {
			for _, v := range m.Versions {
				if v.Version == version {
					return expect(v.Deprecation != nil && strings.HasPrefix(v.Deprecation.Reason, reason), "deprecation %+v", v.Deprecation)
				}
			}
		}
		return fmt.Errorf("version %s not listed", version)
	}))

	reinstated := &moduleVersionDeprecation{}
	err = s.do("PATCH", versionPath, &deprecationRequest{Deprecation: map[string]string{"deprecated-status": "Undeprecated"}}, reinstated)
	s.check("NewRequest PATCH module version", "Undeprecated", guarded(err, func() error {
		return expect(reinstated.ID != "", "no id in the answer")
	}))

	read = &registryVersion{}
	err = s.doJSON(registryPath, read)
	s.check("NewRequest GET registry version", "reinstated: deprecation null", guarded(err, func() error {
		return expect(read.Deprecation == nil, "deprecation %+v", read.Deprecation)
	}))

	err = s.doJSON(fmt.Sprintf("/api/registry/v1/modules/%s/%s/%s/0.0.0-missing", url.PathEscape(org), url.PathEscape(name), url.PathEscape(provider)), &registryVersion{})
	s.check("NewRequest GET registry version", "a missing version: 404", expect(err != nil && strings.Contains(err.Error(), "404"), "got %v", err))
}

// discovery finds the API as the Terraform tfe provider does: terraform-svchost's disco, the provider's own
// library, reads /.well-known/terraform.json (over https only) and the provider takes the tfe.v2.2 service URL
// as go-tfe's address. Over http the provider can only be pointed at the API by a host block of the Terraform
// CLI config, which disco takes through ForceHostServices.
func (s *suite) discovery() {
	response, err := http.Get(s.address.JoinPath("/.well-known/terraform.json").String())
	services := map[string]any{}
	if err == nil {
		defer response.Body.Close()
		err = all(
			expect(response.StatusCode == 200, "status %d", response.StatusCode),
			expect(response.Header.Get("Content-Type") == "application/json" ||
				strings.HasPrefix(response.Header.Get("Content-Type"), "application/json;"),
				"content-type %q", response.Header.Get("Content-Type")),
			json.NewDecoder(response.Body).Decode(&services),
		)
	}
	s.check("GET /.well-known/terraform.json", "tfe.v2, tfe.v2.1, tfe.v2.2 at /api/v2/", guarded(err, func() error {
		return all(
			expect(services["tfe.v2"] == "/api/v2/", "tfe.v2 %v", services["tfe.v2"]),
			expect(services["tfe.v2.1"] == "/api/v2/", "tfe.v2.1 %v", services["tfe.v2.1"]),
			expect(services["tfe.v2.2"] == "/api/v2/", "tfe.v2.2 %v", services["tfe.v2.2"]),
		)
	}))

	hostname, err := svchost.ForComparison(s.address.Host)
	if err != nil {
		s.check("svchost.ForComparison", s.address.Host, err)
		return
	}
	discoverer := disco.New()
	call := "disco.Discover"
	if s.address.Scheme == "http" {
		call = "disco.ForceHostServices"
		discoverer.ForceHostServices(hostname, map[string]any{"tfe.v2.2": s.address.JoinPath("/api/v2/").String()})
	}
	service, err := discoverer.DiscoverServiceURL(hostname, "tfe.v2.2")
	var policies *tfe.PolicyList
	if err == nil {
		var client *tfe.Client
		client, err = tfe.NewClient(&tfe.Config{Address: service.String()})
		if err == nil {
			policies, err = client.Policies.List(s.ctx, s.organization, nil)
		}
	}
	s.check(call, "tfe.v2.2 as the tfe provider finds it, then go-tfe at that address", guarded(err, func() error {
		return all(
			expect(service.String() == s.address.JoinPath("/api/v2/").String(), "service URL %s", service),
			expect(policies.TotalCount > 0, "listed %d policies", policies.TotalCount),
		)
	}))
}

func (s *suite) do(method, path string, body, model any) error {
	request, err := s.client.NewRequest(method, path, body)
	if err != nil {
		return err
	}
	return request.Do(s.ctx, model)
}

func (s *suite) doJSON(path string, model any) error {
	request, err := s.client.NewRequest("GET", path, nil)
	if err != nil {
		return err
	}
	return request.DoJSON(s.ctx, model)
}

// untrusted: without the server's certificate among its roots, go-tfe must refuse to talk to it.
func (s *suite) untrusted() {
	httpClient := cleanhttp.DefaultPooledClient()
	httpClient.Transport.(*http.Transport).TLSClientConfig = &tls.Config{RootCAs: x509.NewCertPool()}
	_, err := tfe.NewClient(&tfe.Config{HTTPClient: httpClient})
	var unknownAuthority x509.UnknownAuthorityError
	s.check("tfe.NewClient", "refused without the certificate trusted", expect(errors.As(err, &unknownAuthority),
		"want an unknown-authority error, got %v", err))
}

func (s *suite) report() int {
	version := "(unknown version)"
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dependency := range info.Deps {
			if dependency.Path == "github.com/hashicorp/go-tfe" {
				version = dependency.Version
			}
		}
	}
	fmt.Printf("go-tfe %s against %s\n", version, s.address)
	table := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(table, "#\tcall\tcheck\tresult")
	failed := 0
	for index, r := range s.rows {
		result := "ok"
		if r.err != nil {
			failed++
			result = "FAIL: " + strings.ReplaceAll(r.err.Error(), "\n", "; ")
		}
		fmt.Fprintf(table, "%d\t%s\t%s\t%s\n", index+1, r.call, r.detail, result)
	}
	table.Flush()
	fmt.Printf("go-tfe conformance: %d calls, %d failed\n", len(s.rows), failed)
	if failed > 0 {
		return 1
	}
	return 0
}

func enforcement(entries []*tfe.Enforcement) string {
	parts := []string{}
	for _, e := range entries {
		parts = append(parts, e.Path+"="+string(e.Mode))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func names(policies []*tfe.Policy) string {
	list := []string{}
	for _, p := range policies {
		list = append(list, p.Name)
	}
	sort.Strings(list)
	encoded, _ := json.Marshal(list)
	return string(encoded)
}

func paginationOf(list *tfe.PolicyList) any {
	if list == nil || list.Pagination == nil {
		return nil
	}
	return *list.Pagination
}
