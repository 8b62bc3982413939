import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { cp } from "node:fs/promises";
import { join, resolve } from "node:path";
import { expect } from "vitest";

// What the recipe tests share: the documentation's fenced blocks, and running them as a user types them.

export const repoRoot = resolve(__dirname, "..", "..");

/** The documentation whose recipes the tests run: README.md and every page under docs/. */
export function documentationFiles(): string[] {
  return ["README.md", ...readdirSync(join(repoRoot, "docs")).map((name) => `docs/${name}`)].sort();
}

/**
 * The fenced blocks of one language in a documentation file's section under `heading` (up to the next heading of
 * its level). Tests call it with literal arguments: the recipes test reads those calls to know which blocks run.
 */
export function docBlocks(file: string, heading: string, language: string): string[] {
  const text = `\n${readFileSync(join(repoRoot, file), "utf8")}`;
  const start = text.indexOf(`\n${heading}\n`);
  expect(start, `${file} has no section "${heading}"`).toBeGreaterThanOrEqual(0);
  const level = heading.split(" ")[0] as string;
  const rest = text.slice(start + heading.length + 2);
  const end = rest.search(new RegExp(`^#{1,${level.length}} `, "m"));
  const section = end === -1 ? rest : rest.slice(0, end);
  return fencedBlocks(section, language);
}

export function fencedBlocks(text: string, language: string): string[] {
  return [...text.matchAll(new RegExp(`^\`\`\`${language}\\n([\\s\\S]*?)^\`\`\`$`, "gm"))].map(
    (match) => match[1] as string,
  );
}

/** Replaces `from`, which must occur exactly once, so that a changed recipe fails here instead of running halfway. */
export function substitute(text: string, from: string, to: string): string {
  expect(text.split(from), `"${from}" once in:\n${text}`).toHaveLength(2);
  return text.replace(from, to);
}

export interface Run {
  code: number;
  output: string;
}

export function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((done) => {
    execFile(command, args, { cwd, env, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) =>
      done({ code: error ? Number(error.code ?? 1) : 0, output: `${stdout}\n${stderr}` }),
    );
  });
}

export async function succeeds(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<string> {
  const result = await run(command, args, cwd, env);
  expect(result.code, `${command} ${args.join(" ")}:\n${result.output}`).toBe(0);
  return result.output;
}

/** A shell script as a user types it: every line runs, in order, and the first failing one stops it. */
export function script(lines: string, cwd: string, env: NodeJS.ProcessEnv): Promise<string> {
  return succeeds("bash", ["-euo", "pipefail", "-c", lines], cwd, env);
}

/** The environment of a fresh shell: nothing of Pulumi's or HCP Terraform's settings from the one running the tests. */
export function freshEnv(extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !/^(PULUMI_|TFE_|TF_CLI_CONFIG_FILE$|QUICKSTART_)/.test(key)),
  );
  return {
    ...env,
    // The offline settings every Pulumi run of this project uses (README, "The two commands").
    PULUMI_SKIP_UPDATE_CHECK: "true",
    PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
    ...extra,
  };
}

/** A copy of the repository as a fresh clone has it: the files git tracks or would (not node_modules, dist, .tfe). */
export async function freshClone(into: string): Promise<void> {
  const listed = await succeeds(
    "git",
    ["ls-files", "--cached", "--others", "--exclude-standard"],
    repoRoot,
    process.env,
  );
  for (const path of listed.split("\n").filter((line) => line !== "")) {
    if (existsSync(join(repoRoot, path))) await cp(join(repoRoot, path), join(into, path));
  }
}

/** Processes still running whose environment names `marker` (a directory only this test uses). */
export function processesWith(marker: string): string[] {
  if (!existsSync("/proc")) return [];
  const found: string[] = [];
  for (const pid of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    try {
      if (readFileSync(`/proc/${pid}/environ`, "utf8").includes(marker)) {
        found.push(`${pid} ${readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ")}`);
      }
    } catch {
      // Gone already, or not ours to read.
    }
  }
  return found;
}
