#!/usr/bin/env node
import { importMain, importUsage, StreamProgress } from "../importer/command";
import { pendingCreatesMain, pendingCreatesUsage } from "../recovery/pending-creates";

const usage = `Usage: tfe-governance <command> [options]

Commands:
  import    Write a Pulumi project that takes over an organization's existing policies (and module
            version deprecations) as they are.
  pending-creates
            After a killed "pulumi up": print the "pulumi refresh" that records what its creates left.

Run "tfe-governance <command> --help" for a command's options.

${importUsage}

${pendingCreatesUsage}`;

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
  if (command === undefined || command === "--help" || command === "help") {
    process.stdout.write(`${usage}\n`);
    return command === undefined ? 2 : 0;
  }
  process.stderr.write(`tfe-governance: unknown command "${command}": the commands are: import, pending-creates\n`);
  return 2;
}

main(process.argv.slice(2)).then(
  (status) => {
    process.exitCode = status;
  },
  (error: unknown) => {
    process.stderr.write(`tfe-governance: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 2;
  },
);
