// The help of `tfe-governance check-folder`, apart from the command so that it shows on any Node.

export const checkFolderUsage = `Usage: tfe-governance check-folder <folder> --against <folder> [options]

Compares a policy-set folder (sentinel.hcl, policies.hcl, or .policy.hcl files) with the folder it replaces, as
PolicySet compares them at preview: a policy removed, a level lowered, for Terraform policy an enforce removed, an
operation dropped or a filter added, and what cannot be compared (a level written as an expression, a kind
change). Exits 1 naming each, 0 when nothing weakens, 2 when a folder cannot be read.

Options:
  --against <folder>       the folder as it is now (a checkout of the target branch)
  --kind <kind>            sentinel, opa or tfpolicy; default: what the folders hold
  --parameter <key=value>  a parameter of the set (repeatable): Terraform policy levels read from inputs
  --allow-weakening        print the weakenings, and exit 0
  --help                   this text`;
