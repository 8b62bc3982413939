// The command's whole help, apart from the commands so that it shows even where they cannot load (an older Node).
import { importUsage } from "../importer/usage";
import { pendingCreatesUsage } from "../recovery/usage";

export const tfeGovernanceUsage = `Usage: tfe-governance <command> [options]

Commands:
  import    Write a Pulumi project that takes over an organization's existing policies (and module
            version deprecations) as they are.
  pending-creates
            After a killed "pulumi up": print the "pulumi refresh" that records what its creates left.

Run "tfe-governance <command> --help" for a command's options.

${importUsage}

${pendingCreatesUsage}`;
