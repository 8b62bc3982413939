import { type ChildProcess, execFile, execFileSync } from "node:child_process";
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { engineLogArgs, type LanguageHost, launchedLanguageHost, splitEngineLog } from "./language-host";

const repoRoot = resolve(__dirname, "..", "..");

export interface PulumiRun {
  code: number;
  stdout: string;
  /** What the user sees on stderr; the engine's log is kept apart in `engineLog`. */
  stderr: string;
  /** stdout and stderr together, for messages and `toContain` checks. */
  output: string;
  engineLog: string;
  /** Pulumi's Node.js language host that the engine's log says ran the program, if the run ran it. */
  languageHost?: LanguageHost;
}

/**
 * A Pulumi project in a temporary directory, run with the real `pulumi` CLI on a local file backend, offline.
 * Its node_modules links to the repository's, so the program resolves `pulumi-tfe-governance` and
 * `@pulumi/pulumi` exactly as a user's program does, from one copy each.
 */
export class PulumiProject {
  /**
   * What every command so far showed the user, for scans of what Pulumi printed. Not the command lines (they hold
   * `config set --secret` values), and not the engine's `-v=9` log, which is in `engineLogs`.
   */
  readonly transcript: string[] = [];
  /** The engine log of every command so far: `-v=9` prints each provider's configuration, secrets decrypted. */
  readonly engineLogs: string[] = [];

  private constructor(
    readonly dir: string,
    readonly stack: string,
    private environment: NodeJS.ProcessEnv,
    private readonly logArgs: readonly string[] = engineLogArgs,
  ) {}

  static async create(options: {
    name: string;
    /** "linked" (default): the repository's node_modules. "own": none; the test installs the project's own. */
    nodeModules?: "linked" | "own";
    files: Record<string, string>;
    config: Record<string, string>;
    secrets?: Record<string, string>;
    /**
     * false: no `-v=9` engine log. A plugin's requests in that log print values with line breaks (policy code),
     * whose lines cannot be told apart from what the user sees; programs of other languages run without it.
     */
    engineLog?: boolean;
  }): Promise<PulumiProject> {
    const dir = await mkdtemp(join(tmpdir(), `${options.name}-`));
    if (options.nodeModules !== "own") await symlink(join(repoRoot, "node_modules"), join(dir, "node_modules"), "dir");
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      PULUMI_BACKEND_URL: `file://${join(dir, ".state")}`,
      PULUMI_CONFIG_PASSPHRASE: "end-to-end",
      PULUMI_SKIP_UPDATE_CHECK: "true",
      PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
      PULUMI_HOME: join(dir, ".pulumi-home"),
      TFE_TOKEN: "",
      TFE_ADDRESS: "",
      TFE_ORGANIZATION: "",
    };
    await mkdir(join(dir, ".state"));
    const project = new PulumiProject(dir, "e2e", env, options.engineLog === false ? [] : engineLogArgs);
    await project.writeFile(
      "Pulumi.yaml",
      `name: ${options.name}\nruntime:\n  name: nodejs\n  options:\n    typescript: false\nmain: index.js\n`,
    );
    for (const [path, content] of Object.entries(options.files)) await project.writeFile(path, content);
    await project.run(["stack", "init"]);
    // One command for them all: each `pulumi` started costs the engine's start.
    const settings = [
      ...Object.entries(options.config).flatMap(([key, value]) => ["--plaintext", `${key}=${value}`]),
      ...Object.entries(options.secrets ?? {}).flatMap(([key, value]) => ["--secret", `${key}=${value}`]),
    ];
    if (settings.length > 0) await project.run(["config", "set-all", ...settings]);
    return project;
  }

  async writeFile(path: string, content: string): Promise<void> {
    await mkdir(dirname(join(this.dir, path)), { recursive: true });
    await writeFile(join(this.dir, path), content);
  }

  /** The environment of later commands. */
  get env(): Readonly<NodeJS.ProcessEnv> {
    return this.environment;
  }

  /** Sets environment variables of later commands (e.g. `TFE_TOKEN`, `PULUMI_RUN_PROGRAM`). */
  setEnv(variables: Record<string, string>): void {
    this.environment = { ...this.environment, ...variables };
  }

  /**
   * Runs `pulumi <args>` with the engine's log on, and reads from it which language host ran the program: a run
   * under anything but Pulumi's own Node.js host throws. Throws with the output unless it exits 0 or
   * `allowFailure` is set.
   */
  run(args: string[], options: RunOptions = {}): Promise<PulumiRun> {
    return this.start(args, options).finished;
  }

  /** Starts `pulumi <args>` and returns at once: `finished` settles as `run` does; `kill` ends it abruptly. */
  start(args: string[], options: RunOptions = {}): StartedRun {
    let child: ChildProcess | undefined;
    const exited = new Promise<{ code: number; stdout: string; stderr: string }>((done) => {
      child = execFile(
        "pulumi",
        [...args, "--non-interactive", "--stack", this.stack, ...this.logArgs],
        { cwd: this.dir, env: { ...this.environment, ...options.env }, maxBuffer: 256 * 1024 * 1024 },
        (error, stdout, stderr) => done({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
      );
    });
    const finished = exited.then(async ({ code, stdout, stderr }) => {
      const { engineLog, userStderr } = splitEngineLog(stderr);
      const output = `${stdout}\n${userStderr}`;
      if (!options.decryptsSecrets) this.transcript.push(output);
      this.engineLogs.push(engineLog);
      if (code !== 0 && !options.allowFailure) throw new Error(`pulumi ${args.join(" ")} exited ${code}:\n${output}`);
      const languageHost = await launchedLanguageHost(engineLog);
      return { code, stdout, stderr: userStderr, output, engineLog, languageHost };
    });
    return { finished, kill: () => killProcessTree(child?.pid), interrupt: () => child?.kill("SIGINT") };
  }

  /**
   * Runs the installed package's `tfe-governance <args>` in the project's directory, with the project's
   * environment, as a user runs `npx tfe-governance` there. Returns its standard output.
   */
  tfeGovernance(args: string[]): Promise<string> {
    const bin = join(this.dir, "node_modules", "pulumi-tfe-governance", "dist", "cli", "tfe-governance.js");
    return new Promise((done, fail) => {
      execFile(process.execPath, [bin, ...args], { cwd: this.dir, env: this.environment }, (error, stdout, stderr) => {
        this.transcript.push(`${stdout}\n${stderr}`);
        if (error) fail(new Error(`tfe-governance ${args.join(" ")} failed: ${stderr}`));
        else done(stdout);
      });
    });
  }

  /**
   * Runs `pulumi <args>` outside the stack (`plugin install`, `plugin ls`) with the project's environment and its
   * own PULUMI_HOME. Returns the output; throws with it unless the command exits 0.
   */
  cli(args: string[]): Promise<string> {
    return new Promise((done, fail) => {
      execFile("pulumi", args, { cwd: this.dir, env: this.environment }, (error, stdout, stderr) => {
        this.transcript.push(`${stdout}\n${stderr}`);
        if (error) fail(new Error(`pulumi ${args.join(" ")} failed:\n${stdout}\n${stderr}`));
        else done(`${stdout}\n${stderr}`);
      });
    });
  }

  up(): Promise<PulumiRun> {
    return this.run(["up", "--yes", "--skip-preview", "--diff"]);
  }

  /** `pulumi stack export` as text: secrets stay ciphertext unless `showSecrets`. */
  async exportState(options: { showSecrets?: boolean } = {}): Promise<string> {
    const args = ["stack", "export", ...(options.showSecrets ? ["--show-secrets"] : [])];
    return (await this.run(args, { decryptsSecrets: options.showSecrets })).stdout;
  }

  /** The raw state file of the stack, as it sits on disk. */
  async stateText(): Promise<string> {
    const stacksDir = join(this.dir, ".state", ".pulumi", "stacks");
    const [projectDir] = await readdir(stacksDir);
    return readFile(join(stacksDir, projectDir as string, `${this.stack}.json`), "utf8");
  }

  /**
   * Puts the previous checkpoint back (`<stack>.json.bak`, which the file backend copies before each write), as
   * README's "After a cancelled run" tells a user whose checkpoint a hard kill left unreadable.
   */
  /**
   * The file backend keeps each blob's attributes in a sidecar (`<stack>.json.attrs`) written apart from the blob:
   * a kill in between leaves it empty, and the checkpoint no longer loads ("failed to load checkpoint: EOF").
   */
  async removeCheckpointAttributes(): Promise<void> {
    await rm(`${await this.checkpointPath()}.attrs`, { force: true });
  }

  /** What a kill at the wrong moment does to the sidecar (see {@link removeCheckpointAttributes}). */
  async emptyCheckpointAttributes(): Promise<void> {
    await writeFile(`${await this.checkpointPath()}.attrs`, "");
  }

  async restoreCheckpointBackup(): Promise<void> {
    const checkpoint = await this.checkpointPath();
    await copyFile(`${checkpoint}.bak`, checkpoint);
  }

  private async checkpointPath(): Promise<string> {
    const stacksDir = join(this.dir, ".state", ".pulumi", "stacks");
    const [projectDir] = await readdir(stacksDir);
    return join(stacksDir, projectDir as string, `${this.stack}.json`);
  }

  async dispose(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true });
  }
}

export interface RunOptions {
  allowFailure?: boolean;
  /** Environment variables of this run only, over the project's. */
  env?: NodeJS.ProcessEnv;
  /**
   * The output shows secrets decrypted on purpose (`stack export --show-secrets`): it stays out of `transcript`,
   * which stands for what a CI log shows and is scanned for tokens.
   */
  decryptsSecrets?: boolean;
}

export interface StartedRun {
  finished: Promise<PulumiRun>;
  /** SIGKILLs the CLI and every process under it at once, as a runner that dies or is killed does. */
  kill(): void;
  /** Sends the CLI SIGINT, as Ctrl-C in a terminal does: the engine cancels the run and asks its plugins to stop. */
  interrupt(): void;
}

/**
 * Pulumi starts its plugins (language host, providers) in process groups of their own, so killing the CLI's group
 * would leave them running on. Stop the whole tree first, so that no process starts another meanwhile, then kill it.
 */
function killProcessTree(root: number | undefined): void {
  if (root === undefined) return;
  const stopped = new Set<number>();
  for (let found = [root]; found.length > 0; ) {
    for (const pid of found) {
      stopped.add(pid);
      signal(pid, "SIGSTOP");
    }
    const table = execFileSync("ps", ["-A", "-o", "pid=", "-o", "ppid="], { encoding: "utf8" });
    found = table
      .trim()
      .split("\n")
      .map((line) => line.trim().split(/\s+/).map(Number))
      .filter(([pid, parent]) => stopped.has(parent!) && !stopped.has(pid!))
      .map(([pid]) => pid!);
  }
  for (const pid of stopped) signal(pid, "SIGKILL");
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // Gone already.
  }
}

/** Counts the steps of a `pulumi preview --json` or `up --json` run by operation (`create`, `update`, `replace`...). */
export function changeSummary(run: PulumiRun): Record<string, number> {
  const document = JSON.parse(run.stdout) as { changeSummary?: Record<string, number> };
  return document.changeSummary ?? {};
}
