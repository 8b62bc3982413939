import { spawn } from "node:child_process";
import { join } from "node:path";
import { request } from "undici";
import { describe, expect, it } from "vitest";
import { compiledCli, launchCli } from "../server/cli-process";

const commandCli = () => join(compiledCli(), "..", "..", "cli", "tfe-governance.js");

/** Runs a bin whose reader goes before it writes (`... | true`): its exit status and what it said on stderr. */
function runWithReaderGone(cli: string, args: string[]): Promise<{ status: number | null; stderr: string }> {
  const child = spawn(process.execPath, [cli, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  // Closed at once: the bin takes far longer to start than this takes to close.
  child.stdout.destroy();
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return new Promise((resolve) => child.on("close", (status) => resolve({ status, stderr })));
}

describe("when the reader of its output goes", () => {
  it("a command stops quietly with SIGPIPE's status (141), which pipefail reads as a failure", async () => {
    for (const args of [["help"], ["--help"], ["help", "impact"]]) {
      const { status, stderr } = await runWithReaderGone(commandCli(), args);
      expect(stderr, args.join(" ")).toBe("");
      expect(status, args.join(" ")).toBe(141);
    }
  });

  it("the server's request log ends, and the server goes on answering", async () => {
    const launched = await launchCli(compiledCli(), []);
    try {
      launched.child.stdout!.destroy();
      // Without a token: each answer (401) is a request, and so a line of the log.
      for (let i = 0; i < 5; i++) {
        const answer = await request(`${launched.url}/api/v2/ping`);
        await answer.body.dump();
        expect(answer.statusCode).toBe(401);
      }
      // A log line written after the reader went would have ended the process by now.
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(launched.child.exitCode).toBeNull();
      expect(launched.output()).not.toMatch(/EPIPE|Unhandled/);
    } finally {
      launched.child.kill();
    }
  });
});
