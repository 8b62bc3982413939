import { readFileSync } from "node:fs";
import { basename } from "node:path";

// Which `pulumi` command started this provider: the engine does not tell a provider, but on Linux /proc shows the
// command line of the `pulumi` process above it (its parent, or its grandparent through a launcher script such as
// pulumi-resource-pulumi-nodejs). Used for advice only: where it cannot be read, nothing is assumed.

/** How far up the process tree `pulumi` is looked for: the provider's parent, a launcher's, one more. */
const ancestorsLooked = 3;

function parentOf(pid: number): number | undefined {
  // /proc/<pid>/stat: "pid (comm) state ppid ...", where comm may hold spaces and parentheses.
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const ppid = Number(
    stat
      .slice(stat.lastIndexOf(")") + 1)
      .trim()
      .split(" ")[1],
  );
  return Number.isInteger(ppid) && ppid > 1 ? ppid : undefined;
}

/** The arguments of the `pulumi` command above this process, or undefined where none can be read. */
export function pulumiCommandLine(): string[] | undefined {
  try {
    let pid: number | undefined = process.ppid;
    for (let step = 0; step < ancestorsLooked && pid !== undefined; step++) {
      const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
      if (argv[0] !== undefined && basename(argv[0]) === "pulumi") return argv.slice(1);
      pid = parentOf(pid);
    }
  } catch {
    // No /proc (macOS, Windows), or not ours to read.
  }
  return undefined;
}

/**
 * Whether this command runs the program, so that the provider has the stack config of now: `--run-program` on its
 * command line, or PULUMI_RUN_PROGRAM=true in its environment (which the provider inherits).
 */
export function commandRunsProgram(
  env: NodeJS.ProcessEnv = process.env,
  commandLine: () => string[] | undefined = pulumiCommandLine,
): boolean {
  if (/^(true|1)$/i.test(env.PULUMI_RUN_PROGRAM ?? "")) return true;
  return (commandLine() ?? []).some((arg) => arg === "--run-program" || /^--run-program=(true|1)$/i.test(arg));
}
