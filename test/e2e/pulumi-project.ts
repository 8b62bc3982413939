import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
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
  private constructor(
    readonly dir: string,
    readonly stack: string,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  static async create(options: {
    name: string;
    files: Record<string, string>;
    config: Record<string, string>;
    secrets?: Record<string, string>;
  }): Promise<PulumiProject> {
    const dir = await mkdtemp(join(tmpdir(), `${options.name}-`));
    await symlink(join(repoRoot, "node_modules"), join(dir, "node_modules"), "dir");
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
    const project = new PulumiProject(dir, "e2e", env);
    await project.writeFile(
      "Pulumi.yaml",
      `name: ${options.name}\nruntime:\n  name: nodejs\n  options:\n    typescript: false\nmain: index.js\n`,
    );
    for (const [path, content] of Object.entries(options.files)) await project.writeFile(path, content);
    await project.run(["stack", "init"]);
    for (const [key, value] of Object.entries(options.config)) await project.run(["config", "set", key, value]);
    for (const [key, value] of Object.entries(options.secrets ?? {})) {
      await project.run(["config", "set", "--secret", key, value]);
    }
    return project;
  }

  async writeFile(path: string, content: string): Promise<void> {
    await mkdir(dirname(join(this.dir, path)), { recursive: true });
    await writeFile(join(this.dir, path), content);
  }

  /**
   * Runs `pulumi <args>` with the engine's log on, and reads from it which language host ran the program: a run
   * under anything but Pulumi's own Node.js host throws. Throws with the output unless it exits 0 or
   * `allowFailure` is set.
   */
  async run(args: string[], options: { allowFailure?: boolean; env?: NodeJS.ProcessEnv } = {}): Promise<PulumiRun> {
    const { code, stdout, stderr } = await new Promise<{ code: number; stdout: string; stderr: string }>((done) => {
      execFile(
        "pulumi",
        [...args, "--non-interactive", "--stack", this.stack, ...engineLogArgs],
        { cwd: this.dir, env: { ...this.env, ...options.env }, maxBuffer: 256 * 1024 * 1024 },
        (error, stdout, stderr) => done({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
      );
    });
    const { engineLog, userStderr } = splitEngineLog(stderr);
    const output = `${stdout}\n${userStderr}`;
    if (code !== 0 && !options.allowFailure) throw new Error(`pulumi ${args.join(" ")} exited ${code}:\n${output}`);
    const languageHost = await launchedLanguageHost(engineLog);
    return { code, stdout, stderr: userStderr, output, engineLog, languageHost };
  }

  up(): Promise<PulumiRun> {
    return this.run(["up", "--yes", "--skip-preview", "--diff"]);
  }

  /** The raw state file of the stack, as it sits on disk. */
  async stateText(): Promise<string> {
    const stacksDir = join(this.dir, ".state", ".pulumi", "stacks");
    const [projectDir] = await readdir(stacksDir);
    return readFile(join(stacksDir, projectDir as string, `${this.stack}.json`), "utf8");
  }

  async dispose(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true });
  }
}

/** Counts the steps of a `pulumi preview --json` or `up --json` run by operation (`create`, `update`, `replace`...). */
export function changeSummary(run: PulumiRun): Record<string, number> {
  const document = JSON.parse(run.stdout) as { changeSummary?: Record<string, number> };
  return document.changeSummary ?? {};
}
