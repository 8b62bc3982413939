// The import command's help, apart from the command so that it shows even where the command cannot load.

export const importUsage = `Usage: tfe-governance import --organization ORG --out DIR [options]

Writes a Pulumi project that declares the organization's policies, policy sets (scope, parameters, where their
content comes from) and, on request, module version deprecations as they are, with the policies' code in files,
ready for "pulumi up" to take them over (adoptExisting) without changing them. Every adopted resource is
protected, so "pulumi destroy" cannot delete what existed before the project.

Options:
  --organization ORG   The organization (default: TFE_ORGANIZATION).
  --out DIR            Directory to write the project into; created when missing.
  --search TEXT        Only policies whose name contains TEXT.
  --kind KIND          Only "sentinel", only "opa" or only "tfpolicy" (Terraform policy: sets only) policies and sets.
  --policy-set ID      Only this policy set, and the policies in it (repeatable: in any of them).
  --exclude NAME|ID    Leave out a policy or policy set (by name or id) or a deprecation (name/provider/version);
                       repeatable. The project's README lists what was left out and why.
  --project NAME       The Pulumi project's name (default: tfe-governance-ORG-LAYOUT, and -LANGUAGE but for
                       TypeScript: one per organization, layout and language, so two imports on one backend never
                       share stacks).
  --module NS/NAME/PROVIDER
                       Also declare the deprecated versions of this private-registry module (repeatable); NS is
                       the organization.
  --layout LAYOUT      "program" (default): a program with one Policy per policy. "folder": the service's
                       policy-set folders (sentinel.hcl / policies.hcl beside the code files), named after their
                       policy sets, and a program declaring one PolicyFolder per folder.
  --language LANGUAGE  "typescript" (default) on this library, or "yaml" or "python" on the plugin for other
                       languages (pulumi-resource-tfegov and its SDK; README.md there says how to install them).
  --force              Overwrite files that differ from what the import writes (edited since the last run).
  --address URL        The service's address (default: TFE_ADDRESS, TFE_HOSTNAME, else https://app.terraform.io).
  --hostname HOST      The service's host name instead of an address.
  --library SPEC       Where the project's package.json installs pulumi-tfe-governance from (npm's spec: a
                       tarball, a git URL, a directory). Default: where this copy was installed from; the package
                       is on no registry yet.
  --help               Show this text.

The token is read as the library reads it: TFE_TOKEN, else the Terraform CLI credentials file for the host
(TF_CLI_CONFIG_FILE, ~/.terraform.d/credentials.tfrc.json, as "terraform login" writes it). It is never written
to the project. Progress goes to stderr, the summary to stdout. Exit status: 0 done, 1 refused to overwrite
changed files, 2 anything else.`;
