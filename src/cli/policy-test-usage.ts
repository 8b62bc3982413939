// The help of `tfe-governance test`, apart from the command so that it shows on any Node.

export const policyTestUsage = `Usage: tfe-governance test [FOLDER | POLICY.sentinel] [options]

Runs a policy-set folder's own tests, with no Sentinel binary: every Sentinel test case (test/<policy>/*.hcl or
*.json beside <policy>.sentinel, as "sentinel test" lays them out) with its mocks, modules and parameters, each rule
it names compared with the value it expects; and, where the folder has *_test.rego files, "opa test" with the opa on
PATH. A case this library cannot run (an import of http, a plugin, a construct it does not implement) is "not run"
with the reason, never passed. FOLDER defaults to the current directory; a .sentinel file runs that policy's cases.

Exits 1 when a case fails (0 when none does; with --fail-on-not-run, also 1 when one was not run), 2 when the
folder cannot be read.

Options:
  --json                one JSON record per line and case: its file, the policy, each rule's expected and
                        computed value, the verdict (pass, fail, not-run), the reason, and what it printed
  --run <regexp>        only the cases whose file matches
  --fail-on-not-run     a case that could not be run fails the command
  --rego-version <v>    v0 (default, the service's "latest" OPA runtime) or v1, for *_test.rego
  --opa <path>          the opa to run Rego tests with (default: opa on PATH)
  --help                this text`;
