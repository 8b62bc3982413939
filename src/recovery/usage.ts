// The pending-creates command's help, apart from the command so that it shows even where the command cannot load.

export const pendingCreatesUsage = `Usage: tfe-governance pending-creates [--stack STACK] [--apply]

After a "pulumi up" was killed hard, the stack's state lists the creates that were under way as pending, without
ids. This command finds, for each pending Policy and ModuleVersionDeprecation, what that create left on the service
(a policy of its name, the version deprecated) and prints it. With --apply it records each in the state as the
resource it belongs to ("pulumi stack export", then "pulumi stack import"); then run
"pulumi refresh --yes --clear-pending-creates", which reads them from the service and drops the creates that left
nothing, and "pulumi up". Run it in the project's directory: the service's address and token come from the stack
config, as the program's do, else from TFE_ADDRESS, TFE_TOKEN and the Terraform credentials file.

Options:
  --stack STACK   The stack (default: the selected one).
  --apply         Record what was found in the state (without it, only print it).
  --help          Show this text.

A policy already held by another resource of the state is left pending and named: two resources would own it.
("pulumi refresh --import-pending-creates" would be Pulumi's own way, but Pulumi 3.259's refresh drops the creates
it marks instead of recording them.)`;
