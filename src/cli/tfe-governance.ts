#!/usr/bin/env node
// The command's entry. Node.js is checked before anything that needs a newer one loads, so that an older Node gets
// one line that says what to do (and --help still answers), not a stack trace from a dependency.
import { stopWhenReaderGoes } from "../process/closed-output";
import { nodeRequirement, nodeTooOld } from "../process/node-requirement";
import { commandUsages, tfeGovernanceUsage } from "./usage";

stopWhenReaderGoes();
const argv = process.argv.slice(2);
if (!nodeTooOld()) {
  (require("./tfe-governance-main") as typeof import("./tfe-governance-main")).run(argv);
} else if (argv.includes("--help") || argv[0] === "help") {
  const usage = commandUsages[(argv[0] === "help" ? argv[1] : argv[0]) ?? ""] ?? tfeGovernanceUsage;
  process.stdout.write(`${usage}\n\n${nodeRequirement("tfe-governance")}.\n`);
} else {
  process.stderr.write(`${nodeRequirement("tfe-governance")}.\n`);
  process.exitCode = 1;
}
