export const impactUsage = `Usage: tfe-governance impact [--address URL | --hostname HOST] [--organization ORG] [--workspace ID]...
       [--policy NAME [--level LEVEL [--kind KIND]]] [--policy-set NAME] [--days N] [--budget N] [--json]
       [--html FILE]

Reads the service's own recent policy results: every workspace of the organization (or those named), its runs of
the last --days (default 30), and what each run recorded of its policies (task stages' Sentinel and OPA outcomes,
the older policy checks, Terraform policy evaluations). Prints, for each workspace and policy, how many runs passed
it, failed it at advisory (the run went on) and failed it at a level that stopped the run. With --policy and
--level (and --kind, default sentinel), the runs a raise of that policy to that level would have blocked, and the
answer pulumi preview gives under the resource when a program raises it: blocked (these runs), none (every
workspace read whole, and the policy ran there), or not known (and why).

Options:
  --address URL       The service (default: TFE_ADDRESS, else https://app.terraform.io).
  --hostname HOST     The same, as a host name (TFE_HOSTNAME).
  --organization ORG  The organization (default: TFE_ORGANIZATION).
  --workspace ID      Only this workspace (repeat for more).
  --policy NAME       Only this policy; --policy-set NAME only the results of this set.
  --level LEVEL       With --policy: count the runs a raise to LEVEL would have blocked (a level of --kind
                      that blocks: sentinel soft-mandatory, hard-mandatory; opa mandatory; tfpolicy
                      mandatory_overridable, mandatory).
  --kind KIND         sentinel (default), opa or tfpolicy.
  --days N            The window, in days (default 30).
  --budget N          Requests it may send (default 1000); what it did not read is said.
  --json              The matrix as JSON instead of a table.
  --html FILE         Also write a self-contained page: workspaces by policy, coloured by result, the failing runs
                      linked to the service's run page.
  --help              Show this text.

The token comes from TFE_TOKEN, else the credentials file of terraform login. It reads, and changes nothing.`;
