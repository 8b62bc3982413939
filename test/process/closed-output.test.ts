import { spawn } from "node:child_process";
import { connect, type Socket } from "node:net";
import { join } from "node:path";
import { request } from "undici";
import { describe, expect, it } from "vitest";
import { compiledCli, launchCli } from "../server/cli-process";
import { policyBody } from "../server/helpers";

const distFile = (...path: string[]) => join(compiledCli(), "..", "..", ...path);

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
  it.each([
    ["tfe-governance", "--help", ["cli", "tfe-governance.js"]],
    ["tfe-governance", "help impact", ["cli", "tfe-governance.js"]],
    // The plugin's command mode: `pulumi-resource-tfegov import ...` is `tfe-governance import ...`.
    ["pulumi-resource-tfegov", "help impact", ["plugin", "main.js"]],
  ])(
    "%s %s stops quietly with SIGPIPE's status (141), which pipefail reads as a failure",
    async (_bin, args, entry) => {
      const { status, stderr } = await runWithReaderGone(distFile(...entry), args.split(" "));
      expect(stderr).toBe("");
      expect(status).toBe(141);
    },
  );

  // What the server says on stderr (here the 503 of a full upload budget) goes with stdout under `2>&1 | head`.
  it.each([
    ["stdout's reader", false],
    ["stdout's and stderr's reader", true],
  ])(
    "%s gone: the server's log ends, and the server goes on answering, after saying a 503 too",
    async (_reader, stderrGone) => {
      const launched = await launchCli(distFile("server", "cli.js"), ["--seed", "quickstart"]);
      const sockets: Socket[] = [];
      try {
        const token = /^ {2}(\S+) {2}organizations: acme/m.exec(launched.output())![1]!;
        launched.child.stdout!.destroy();
        if (stderrGone) launched.child.stderr!.destroy();
        const headers = { authorization: `Bearer ${token}`, "content-type": "application/vnd.api+json" };
        const { hostname, port } = new URL(launched.url);
        const tenMegabytes = 10 * 1024 * 1024;
        // Six uploads of 10 MB held one byte short (60 MB of the 64 MB budget), then a seventh that passes it: 503.
        for (let i = 0; i < 7; i++) {
          const created = await request(`${launched.url}/api/v2/organizations/acme/policies`, {
            method: "POST",
            headers,
            body: JSON.stringify(policyBody(`budget-${i}`)),
          });
          expect(created.statusCode).toBe(201);
          const id = ((await created.body.json()) as { data: { id: string } }).data.id;
          const socket = connect(Number(port), hostname);
          socket.on("error", () => {});
          sockets.push(socket);
          socket.write(
            `PUT /api/v2/policies/${id}/upload HTTP/1.1\r\nhost: ${hostname}\r\nauthorization: Bearer ${token}\r\n` +
              `content-type: application/octet-stream\r\ncontent-length: ${tenMegabytes}\r\n\r\n`,
          );
          const sent = i < 6 ? tenMegabytes - 1 : tenMegabytes / 2;
          await new Promise<void>((resolve) => socket.write(Buffer.alloc(sent, 0x61), () => resolve()));
          await new Promise((resolve) => setTimeout(resolve, 150));
        }
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(launched.child.exitCode).toBeNull();
        // Without a token: an answer (401), and a line of the log that has no reader.
        const ping = await request(`${launched.url}/api/v2/ping`);
        await ping.body.dump();
        expect(ping.statusCode).toBe(401);
        expect(launched.child.exitCode).toBeNull();
      } finally {
        for (const socket of sockets) socket.destroy();
        launched.child.kill();
      }
    },
  );
});
