// The commands themselves, loaded by tfe-governance.ts once Node.js is new enough.
import { importMain, StreamProgress } from "../importer/command";
import { stopWhenReaderGoes } from "../process/closed-output";
import { pendingCreatesMain } from "../recovery/pending-creates";
import { checkFolderMain } from "./check-folder";
import { impactMain } from "./impact";
import { policyTestMain } from "./policy-test";
import { commandUsages, tfeGovernanceUsage as usage } from "./usage";

async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  if (command === "import") {
    return importMain(args, {
      env: process.env,
      progress: new StreamProgress(process.stderr),
      out: process.stdout,
      log: (line) => process.stderr.write(`${line}\n`),
    });
  }
  if (command === "pending-creates") {
    return pendingCreatesMain(args, {
      out: process.stdout,
      log: (line) => process.stderr.write(`${line}\n`),
    });
  }
  if (command === "impact") {
    return impactMain(args, { out: process.stdout, log: (line) => process.stderr.write(`${line}\n`) });
  }
  if (command === "check-folder") {
    return checkFolderMain(args, { out: process.stdout, log: (line) => process.stderr.write(`${line}\n`) });
  }
  if (command === "test") {
    return policyTestMain(args, { out: process.stdout, log: (line) => process.stderr.write(`${line}\n`) });
  }
  // `tfe-governance help impact`, as git and npm take it: that command's own help.
  const named = command === "help" ? commandUsages[args[0] ?? ""] : undefined;
  if (named !== undefined) {
    process.stdout.write(`${named}\n`);
    return 0;
  }
  if (command === undefined || command === "--help" || command === "help") {
    process.stdout.write(`${usage}\n`);
    return command === undefined ? 2 : 0;
  }
  process.stderr.write(
    `tfe-governance: unknown command "${command}": the commands are: import, pending-creates, check-folder, impact, test\n`,
  );
  return 2;
}

/** Runs the command line `argv` and sets the exit status. */
export function run(argv: string[]): void {
  // Here as well as in tfe-governance.ts: the plugin's command mode (`pulumi-resource-tfegov import ...`) comes in here.
  stopWhenReaderGoes();
  main(argv).then(
    (status) => {
      process.exitCode = status;
    },
    (error: unknown) => {
      process.stderr.write(`tfe-governance: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 2;
    },
  );
}
