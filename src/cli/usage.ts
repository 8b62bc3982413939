// The command's whole help, apart from the commands so that it shows even where they cannot load (an older Node).
import { importUsage } from "../importer/usage";
import { pendingCreatesUsage } from "../recovery/usage";
import { checkFolderUsage } from "./check-folder-usage";
import { impactUsage } from "./impact-usage";
import { policyTestUsage } from "./policy-test-usage";

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

Run "tfe-governance <command> --help" for a command's options.

${importUsage}

${pendingCreatesUsage}

${checkFolderUsage}

${impactUsage}

${policyTestUsage}`;
