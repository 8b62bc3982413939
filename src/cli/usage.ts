// The command's help, apart from the commands so that it shows even where they cannot load (an older Node).
import { importUsage } from "../importer/usage";
import { pendingCreatesUsage } from "../recovery/usage";
import { checkFolderUsage } from "./check-folder-usage";
import { impactUsage } from "./impact-usage";
import { policyTestUsage } from "./policy-test-usage";

/** Each command's own help, as `tfe-governance <command> --help` prints it. */
export const commandUsages: Readonly<Record<string, string>> = {
  import: importUsage,
  "pending-creates": pendingCreatesUsage,
  "check-folder": checkFolderUsage,
  impact: impactUsage,
  test: policyTestUsage,
};

export const tfeGovernanceUsage = `Usage: tfe-governance <command> [options]

Commands:
  import    Write a Pulumi project that takes over an organization's existing policies (and module
            version deprecations) as they are.
  pending-creates
            After a killed "pulumi up": print the "pulumi refresh" that records what its creates left.
  check-folder
            Compare a policy-set folder with the one it replaces, as PolicySet does at preview: for a
            library's CI, before a push reaches a set read from version control.
  impact    The service's recent policy results of an organization, by workspace and policy: whom a
            stricter level would block.
  test      Run a policy-set folder's own tests (Sentinel test cases, with no Sentinel binary; Rego tests
            with opa): for a library's CI, and what tfe:requirePolicyTests runs at preview.

Each command's options: tfe-governance import --help, tfe-governance pending-creates --help,
tfe-governance check-folder --help, tfe-governance impact --help, tfe-governance test --help.`;
