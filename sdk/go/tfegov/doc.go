// HCP Terraform / Terraform Enterprise policies, policy sets and private-registry module version deprecations, checked at preview, guarded against weakening, with drift found by refresh.
package tfegov
