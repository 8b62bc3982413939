#!/usr/bin/env node
// The server command's entry. Node.js is checked before the server (node:sqlite, undici) loads, so that an older
// Node gets one line that says what to do (and --help still answers), not a stack trace.
import { nodeRequirement, nodeTooOld } from "../process/node-requirement";
import { serverUsage } from "./usage";

if (!nodeTooOld()) {
  (require("./cli-main") as typeof import("./cli-main")).run();
} else if (process.argv.slice(2).includes("--help")) {
  process.stdout.write(`${serverUsage}\n\n${nodeRequirement("tfe-governance-server")}.\n`);
} else {
  process.stderr.write(`${nodeRequirement("tfe-governance-server")}.\n`);
  process.exitCode = 1;
}
