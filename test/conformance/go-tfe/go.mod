module pulumi-tfe-governance/test/conformance/go-tfe

go 1.25.0

require (
	github.com/hashicorp/go-cleanhttp v0.5.2
	github.com/hashicorp/go-slug v0.16.8
	github.com/hashicorp/go-tfe v1.111.2
	github.com/hashicorp/terraform-svchost v0.2.1
)

require (
	github.com/apparentlymart/go-textseg/v15 v15.0.0 // indirect
	github.com/google/go-querystring v1.2.0 // indirect
	github.com/hashicorp/go-retryablehttp v0.7.8 // indirect
	github.com/hashicorp/go-version v1.9.0 // indirect
	github.com/hashicorp/jsonapi v1.4.3-0.20250220162346-81a76b606f3e // indirect
	github.com/zclconf/go-cty v1.16.4 // indirect
	golang.org/x/net v0.43.0 // indirect
	golang.org/x/oauth2 v0.30.0 // indirect
	golang.org/x/sync v0.19.0 // indirect
	golang.org/x/sys v0.35.0 // indirect
	golang.org/x/text v0.28.0 // indirect
	golang.org/x/time v0.14.0 // indirect
)
