#!/usr/bin/env node
// The server command's entry. Node.js is checked before the server (node:sqlite, undici) loads, so that an older
// Node gets one line that says what to do (and --help still answers), not a stack trace.
import { onReaderGone } from "../process/closed-output";
import { nodeRequirement, nodeTooOld } from "../process/node-requirement";
import { serverUsage } from "./usage";

// The server's output is its banner, request log and the errors it answered, a courtesy: a reader that goes
// (`tfe-governance-server 2>&1 | head`) ends what it is told, not the server, which clients (a `pulumi up` under
// way) still rely on. cli-main writes the log only while stdout is writable.
onReaderGone(process.stdout, () => {});
onReaderGone(process.stderr, () => {});

if (!nodeTooOld()) {
  (require("./cli-main") as typeof import("./cli-main")).run();
} else if (process.argv.slice(2).includes("--help")) {
  process.stdout.write(`${serverUsage}\n\n${nodeRequirement("tfe-governance-server")}.\n`);
} else {
  process.stderr.write(`${nodeRequirement("tfe-governance-server")}.\n`);
  process.exitCode = 1;
}
