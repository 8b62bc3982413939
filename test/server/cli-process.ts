import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

const repo = join(__dirname, "..", "..");

function newestSource(folder: string): number {
  return Math.max(
    ...readdirSync(folder, { withFileTypes: true }).map((entry) => {
      const path = join(folder, entry.name);
      return entry.isDirectory() ? newestSource(path) : statSync(path).mtimeMs;
    }),
  );
}

/** The compiled bin, as users run it; built first when the sources are newer. */
export function compiledCli(): string {
  const cli = join(repo, "dist", "server", "cli.js");
  let built = 0;
  try {
    built = statSync(cli).mtimeMs;
  } catch {}
  if (built < newestSource(join(repo, "src"))) {
    execFileSync(
      process.execPath,
      [join(repo, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.build.json"],
      {
        cwd: repo,
      },
    );
  }
  return cli;
}

export interface LaunchedCli {
  child: ChildProcess;
  url: string;
  output: () => string;
}

/** Starts the bin with `args`; resolves once its banner (URL and tokens) is out. Kill the child when done. */
export function launchCli(cli: string, args: string[]): Promise<LaunchedCli> {
  const child = spawn(process.execPath, [cli, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  return new Promise((resolve, reject) => {
    child.stdout!.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on (https?:\/\/\S+)/.exec(output);
      if (match && output.includes("tokens:")) resolve({ child, url: match[1]!, output: () => output });
    });
    child.stderr!.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.on("exit", (code) => reject(new Error(`exited with ${code}: ${output}`)));
  });
}
