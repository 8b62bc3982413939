// The imports every Sentinel runtime of HCP Terraform and Terraform Enterprise provides without the set declaring
// them: the standard imports and Terraform's own. A policy may import these; anything else needs a module, static
// or plugin import in the set's sentinel.hcl. No I/O.

/** Terraform's imports: their data comes from a run, so a test case gives them as mocks. */
export const terraformImports: ReadonlySet<string> = new Set([
  "tfconfig",
  "tfconfig/v2",
  "tfplan",
  "tfplan/v2",
  "tfrun",
  "tfstate",
  "tfstate/v2",
]);

export const standardSentinelImports: ReadonlySet<string> = new Set([
  "base64",
  "collection",
  "collection/lists",
  "collection/maps",
  "decimal",
  "http",
  "json",
  "runtime",
  "sockaddr",
  "strings",
  "time",
  "types",
  "units",
  "uuid",
  "version",
  ...terraformImports,
]);
