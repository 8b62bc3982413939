export const impactUsage = `Usage: tfe-governance impact [--organization ORG] [--workspace ID]... [--policy NAME [--level LEVEL
       [--kind KIND]]] [--policy-set NAME] [--days N] [--budget N] [--json] [--html FILE]

Reads the service's own recent policy results: every workspace of the organization (or those named), its runs of
the last --days (default 30), and what each run recorded of its policies (task stages' Sentinel and OPA outcomes,
the older policy checks, Terraform policy evaluations). Prints, for each workspace and policy, how many runs passed
it, failed it at advisory (the run went on) and failed it at a level that stopped the run. With --policy and
--level (and --kind, default sentinel), the runs a raise of that policy to that level would have blocked: what
pulumi preview says under the resource when a program raises it.

Options:
  --organization ORG  The organization (default: TFE_ORGANIZATION).
  --workspace ID      Only this workspace (repeat for more).
  --policy NAME       Only this policy; --policy-set NAME only the results of this set.
  --level LEVEL       With --policy: count the runs a raise to LEVEL would have blocked.
  --days N            The window, in days (default 30).
  --budget N          Requests it may send (default 1000); what it did not read is said.
  --json              The matrix as JSON instead of a table.
  --html FILE         Also write a self-contained page: workspaces by policy, coloured by result, the failing runs
                      linked to the service's run page.
  --help              Show this text.

The address and token come from TFE_ADDRESS (or TFE_HOSTNAME) and TFE_TOKEN, else the credentials file of
terraform login. It reads, and changes nothing.`;
