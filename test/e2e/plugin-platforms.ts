import { spawn } from "node:child_process";
import { credentials } from "@grpc/grpc-js";
import { ResourceProviderClient } from "@pulumi/pulumi/proto/provider_grpc_pb";
import { GetSchemaRequest } from "@pulumi/pulumi/proto/provider_pb";

// The plugin of another platform, run on this machine (linux-amd64) where something here can run it: linux-arm64's
// under Debian's qemu-user-static, with the arm64 loader and libc of Debian's cross packages; its start, its port,
// and its answers read as the engine reads them.

/** The arm64 root (loader, libc, libstdc++) qemu loads the executable with: what toolchain.sh installed. */
export const arm64Root = process.env.TFEGOV_ARM64_ROOT ?? "/usr/aarch64-linux-gnu";

/**
 * The command that runs `executable`, the plugin of `platform`, here; undefined where nothing here can: macOS (no
 * Mach-O runs on Linux) and Windows (Debian 12's wine 8.0 cannot start Node 24: docs/other-languages.md).
 */
export function commandHere(platform: string, executable: string): [string, string[]] | undefined {
  if (platform === "linux-amd64") return [executable, []];
  if (platform === "linux-arm64") return ["qemu-aarch64-static", ["-L", arm64Root, executable]];
  return undefined;
}

export interface StartedPlugin {
  port: number;
  /** From spawn to the port on stdout. */
  startMs: number;
  stop(): void;
}

/** Starts a plugin with no engine (one attaches later) and resolves once it printed its port. */
export function startPlugin(command: string, args: readonly string[], env = process.env): Promise<StartedPlugin> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(command, args, { env, stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    child.stdout.once("data", (chunk) => {
      const port = Number(String(chunk).trim());
      if (!Number.isInteger(port) || port <= 0) reject(new Error(`${command} printed ${chunk} for its port`));
      resolve({ port, startMs: performance.now() - started, stop: () => child.kill("SIGKILL") });
    });
    child.on("error", reject);
    child.on("exit", (code, signal) =>
      reject(new Error(`${command} ${args.join(" ")} ended (${code ?? signal}) before a port:\n${stderr}`)),
    );
  });
}

/** The schema the plugin on `port` answers to GetSchema, as the engine asks for it. */
export function schemaOf(port: number): Promise<string> {
  const client = new ResourceProviderClient(`127.0.0.1:${port}`, credentials.createInsecure());
  return new Promise<string>((resolve, reject) =>
    client.getSchema(new GetSchemaRequest(), (error, response) =>
      error ? reject(error) : resolve(response.getSchema()),
    ),
  ).finally(() => client.close());
}
