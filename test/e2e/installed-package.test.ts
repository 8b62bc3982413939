import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { homedir, tmpdir } from "node:os";
import { join, posix } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TfeClient } from "../../src/client";
import { docBlocks, freshClone, freshEnv, repoRoot, run, script, substitute, succeeds } from "./doc-recipes";

const token = "quickstart-token-not-a-secret";

/**
 * README's "Use it in your project", as a team follows it: `npm ci && npm pack` in a copy of the tracked tree, then a
 * TypeScript project beside it, outside the repository, with the tarball installed next to the newest
 * `@pulumi/pulumi` 3.x from the registry; the local server started from that project with npx; `pulumi up`, the
 * drift recipe and docs/import.md's recipe, all from the installed package alone.
 */
describe('README\'s "Use it in your project", outside the repository', () => {
  let work: string;
  let project: string;
  let tarball: string;
  let server: LocalServer | undefined;
  let client: TfeClient;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), "installed-package-"));
    const clone = join(work, "pulumi-tfe-governance");
    await copyTrackedTree(clone);
    const [pack, install] = docBlocks("README.md", "## Use it in your project", "sh");
    expect(pack).toBe("npm ci && npm pack\n");
    await script(pack as string, clone, freshEnv({}));
    tarball = join(clone, "pulumi-tfe-governance-0.1.0.tgz");
    await script(install as string, work, freshEnv({}));
    project = join(work, "governance");
    const [pulumiYaml] = docBlocks("README.md", "## Use it in your project", "yaml");
    const [program] = docBlocks("README.md", "## Use it in your project", "ts");
    await writeFile(join(project, "Pulumi.yaml"), pulumiYaml as string);
    await writeFile(join(project, "index.ts"), program as string);
    await mkdir(join(work, "backend"));
    env = freshEnv({
      PULUMI_HOME: join(work, "pulumi-home"),
      // The answers a user types: the passphrase `pulumi stack init` asks for, and "yes" to up and destroy.
      PULUMI_CONFIG_PASSPHRASE: "installed-package",
      PULUMI_SKIP_CONFIRMATIONS: "true",
    });
  }, 600_000);

  afterAll(async () => {
    await client?.close();
    server?.child.kill();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it("packs dist/ with both bins and type declarations, and no source maps into files it does not ship", () => {
    const listing = execFileSync("tar", ["-tzf", tarball], { encoding: "utf8" }).split("\n");
    expect(listing).toEqual(
      expect.arrayContaining([
        "package/dist/index.js",
        "package/dist/index.d.ts",
        "package/dist/cli/tfe-governance.js",
        "package/dist/server/cli.js",
        "package/dist/resources/providers.js",
        "package/examples/quickstart/seed.json",
      ]),
    );
    expect(
      listing.filter((path) => /\.map$|^package\/(src|test|scripts)\/|^package\/bench\/[^/]+$/.test(path)),
    ).toEqual([]);
    // What README and docs/ link to is in the tarball: every relative link of a shipped page resolves in it.
    const pages = listing.filter((path) => /^package\/(README\.md|docs\/[^/]+\.md)$/.test(path));
    expect(pages.length).toBeGreaterThan(10);
    const shipped = new Set(listing.map((path) => path.replace(/\/$/, "")));
    const folders = new Set(
      listing.flatMap((path) =>
        path
          .split("/")
          .slice(0, -1)
          .map((_, i, parts) => parts.slice(0, i + 1).join("/")),
      ),
    );
    const broken: string[] = [];
    for (const page of pages) {
      const text = execFileSync("tar", ["-xzOf", tarball, page], { encoding: "utf8" });
      for (const [, target] of text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
        if (/^[a-z]+:/.test(target as string)) continue;
        const path = posix.normalize(posix.join(posix.dirname(page), target as string)).replace(/\/$/, "");
        if (!shipped.has(path) && !folders.has(path)) broken.push(`${page} -> ${target}`);
      }
    }
    expect(broken).toEqual([]);
    // Nothing runs at install: the packed manifest has no install script, although the checkout's has prepare.
    const manifest = JSON.parse(execFileSync("tar", ["-xzOf", tarball, "package/package.json"], { encoding: "utf8" }));
    for (const script of ["preinstall", "install", "postinstall", "prepare"])
      expect(manifest.scripts).not.toHaveProperty(script);
  });

  it("installs one @pulumi/pulumi, the newest 3.x, shared by the program and the package; the program type-checks", async () => {
    const copies = await findPackages(join(project, "node_modules"), "@pulumi/pulumi");
    expect(copies).toHaveLength(1);
    const published = await succeeds("npm", ["view", "@pulumi/pulumi@3", "version", "--json"], project, env);
    const numbers = (version: string) => version.split(".").map(Number);
    const newest = [JSON.parse(published)]
      .flat()
      .sort((a: string, b: string) => numbers(a).reduce((order, part, i) => order || part - (numbers(b)[i] ?? 0), 0))
      .at(-1);
    const installed = JSON.parse(await readFile(join(copies[0] as string, "package.json"), "utf8")).version;
    expect(installed).toBe(newest);
    await succeeds(
      join(project, "node_modules", ".bin", "tsc"),
      ["--noEmit", "--strict", "--module", "nodenext", "--target", "es2022", "index.ts"],
      project,
      env,
    );
  });

  it("starts the local server with npx, then makes a stack and applies the program", async () => {
    const [start, apply] = docBlocks("README.md", "## Use it in your project", "sh").slice(2);
    server = await startServer(substitute((start as string).trim(), "--port 8080", "--port 0"), project, env);
    client = new TfeClient({ address: server.url, token, rateLimit: false });
    let recipe = substitute(apply as string, "pulumi login --local", `pulumi login file://${join(work, "backend")}`);
    recipe = substitute(recipe, "http://127.0.0.1:8080", server.url);
    const output = await script(recipe, project, env);
    expect(output).toMatch(/\+ 3 created/);
    expect(await levelOf("require-tags")).toBe("hard-mandatory");
    expect((await deprecationOf("1.0.0"))?.reason).toMatch(/^Creates one NAT gateway per subnet/);
  }, 240_000);

  it("on a fresh CI runner: the project's repository cloned into an empty directory installs with npm ci and an empty npm cache, and previews no change", async () => {
    // The team's repository: what README says to commit, not node_modules.
    await writeFile(join(project, ".gitignore"), "node_modules/\n");
    const git = (args: string[], cwd: string) =>
      succeeds("git", ["-c", "user.name=CI", "-c", "user.email=ci@example.com", ...args], cwd, env);
    await git(["init", "--quiet"], project);
    await git(["add", "--all"], project);
    await git(["commit", "--quiet", "-m", "governance"], project);
    const tracked = (await git(["ls-files"], project)).split("\n");
    expect(tracked).toContain("vendor/pulumi-tfe-governance-0.1.0.tgz");
    const manifest = JSON.parse(await readFile(join(project, "package.json"), "utf8"));
    expect(manifest.dependencies["pulumi-tfe-governance"]).toBe("file:vendor/pulumi-tfe-governance-0.1.0.tgz");

    const runner = join(work, "runner");
    await git(["clone", "--quiet", project, runner], work);
    const emptyCache = join(work, "runner-npm-cache");
    await mkdir(emptyCache);
    const runnerEnv = { ...env, npm_config_cache: emptyCache };
    await succeeds("npm", ["ci", "--no-audit", "--no-fund"], runner, runnerEnv);
    expect(await findPackages(join(runner, "node_modules"), "@pulumi/pulumi")).toHaveLength(1);
    // The stack README's recipe made, from the clone: its config is committed, its state in the shared backend.
    await succeeds(
      "pulumi",
      ["preview", "--stack", "dev", "--expect-no-changes", "--non-interactive"],
      runner,
      runnerEnv,
    );
  }, 600_000);

  it("docs/import.md's recipe writes a project that installs the same tarball and adopts with no change", async () => {
    const [block] = docBlocks("docs/import.md", "# Adopting an existing organization: `tfe-governance import`", "sh");
    let recipe = substitute(block as string, "--out governance", "--out ../imported");
    recipe = substitute(recipe, "cd governance", "cd ../imported");
    const running = server as LocalServer;
    const logged = running.output().length;
    const output = await script(recipe, project, { ...env, TFE_TOKEN: token, TFE_ADDRESS: running.url });
    expect(output).toMatch(/1 policy \(1 Sentinel, 0 OPA\)\n\s+1 policy set\n/);
    // The stack, and the policy, the set and the deprecation adopted as they are: nothing but reads reach the server.
    expect(output).toMatch(/\+ 4 created/);
    const requests = running
      .output()
      .slice(logged)
      .split("\n")
      .filter((line) => / (GET|POST|PATCH|DELETE) \//.test(line));
    expect(requests.length).toBeGreaterThan(0);
    expect(requests.filter((line) => !/ GET \//.test(line))).toEqual([]);
    // The tarball this project installed, copied into the imported project: a path outside it would fail npm ci.
    const manifest = JSON.parse(await readFile(join(work, "imported", "package.json"), "utf8"));
    expect(manifest.dependencies["pulumi-tfe-governance"]).toBe("file:vendor/pulumi-tfe-governance-0.1.0.tgz");
    const vendored = await readFile(join(work, "imported", "vendor", "pulumi-tfe-governance-0.1.0.tgz"));
    expect(vendored.equals(await readFile(tarball))).toBe(true);
    expect(await findPackages(join(work, "imported", "node_modules"), "@pulumi/pulumi")).toHaveLength(1);
  }, 300_000);

  it("README's drift recipe: the check fails on a change made outside Pulumi, up --refresh puts it back, destroy", async () => {
    const [block] = docBlocks("README.md", "### Drift: changes made outside Pulumi", "sh");
    const [check, fix, destroy] = (block as string).trim().split("\n") as [string, string, string];
    await script(check, project, env);
    const [policy] = await client.policies.list("acme", { search: "require-tags" }).then((page) => page.items);
    await client.policies.update(policy?.id as string, { enforcementLevel: "advisory" });
    const failed = await run("bash", ["-c", check], project, env);
    expect(failed.code).not.toBe(0);
    expect(failed.output).toMatch(/enforcementLevel/);
    await script(fix, project, env);
    expect(await levelOf("require-tags")).toBe("hard-mandatory");
    await script(check, project, env);
    await script(destroy, project, env);
    expect(await levelOf("require-tags")).toBeUndefined();
    expect(await deprecationOf("1.0.0")).toBeNull();
  }, 240_000);

  it("on Node 20, npx tfe-governance --help and npx tfe-governance-server --help answer, with no stack trace", async () => {
    const olderPath = { ...env, PATH: `${await olderNodeDirectory()}:${env.PATH}` };
    for (const bin of ["tfe-governance", "tfe-governance-server"]) {
      const help = await run("npx", [bin, "--help"], project, olderPath);
      expect(help.code, help.output).toBe(0);
      expect(help.output).toMatch(/^Usage: /m);
      expect(help.output).toMatch(new RegExp(`${bin} needs Node\\.js 22\\.19\\.0 or newer; this is Node\\.js v20\\.`));
      expect(help.output).not.toMatch(/^\s+at /m);
    }
    // The server's help names its docs page where the package put it: a path the user can open.
    const serverHelp = await run("npx", ["tfe-governance-server", "--help"], project, env);
    const page = /\(see (\S+local-server\.md)\)/.exec(serverHelp.output)?.[1];
    expect(page).toBe(join("node_modules", "pulumi-tfe-governance", "docs", "local-server.md"));
    expect(existsSync(join(project, page as string))).toBe(true);
    const refused = await run("npx", ["tfe-governance-server", "--port", "0"], project, olderPath);
    expect(refused.code).not.toBe(0);
    expect(refused.output.trim()).toMatch(
      /^tfe-governance-server needs Node\.js 22\.19\.0 or newer; this is Node\.js v20\.[^\n]*$/,
    );
  }, 120_000);

  it("a SIGTERM to the npx that started the server stops the server too", async () => {
    const running = server as LocalServer;
    const exited = new Promise((done) => running.child.once("exit", done));
    running.child.kill("SIGTERM");
    await exited;
    await expect.poll(() => reachable(running.url), { timeout: 10_000 }).toBe(false);
    server = undefined;
  });

  async function levelOf(name: string): Promise<string | undefined> {
    const page = await client.policies.list("acme", { search: name });
    return page.items.find((policy) => policy.name === name)?.enforcementLevel ?? undefined;
  }

  async function deprecationOf(version: string) {
    const versions = await client.registry.listModuleVersions({ namespace: "acme", name: "vpc", provider: "aws" });
    return versions.find((held) => held.version === version)?.deprecation ?? null;
  }
});

describe("other ways a team installs it", () => {
  it.each([["a git URL (npm clones it and runs its prepare)", () => `git+file://${repoRoot}#${headCommit()}`, []]])(
    "from %s: dist/ and one @pulumi/pulumi",
    async (_way, spec, flags) => {
      const dir = await mkdtemp(join(tmpdir(), "installed-package-"));
      try {
        await writeFile(join(dir, "package.json"), JSON.stringify({ name: "governance", private: true }));
        await succeeds("npm", ["install", "--no-audit", "--no-fund", ...flags, spec(), "@pulumi/pulumi@3"], dir, {
          ...process.env,
          // The cache is warm from the installs before this one: npm need not ask the registry again about each of
          // the clone's 380 dependencies (its own install in the clone reads this setting too). What is tested,
          // npm's prepare of a git dependency and one @pulumi/pulumi, is the same.
          npm_config_prefer_offline: "true",
        });
        expect(await findPackages(join(dir, "node_modules"), "@pulumi/pulumi")).toHaveLength(1);
        const exported = await succeeds(
          process.execPath,
          ["-p", 'Object.keys(require("pulumi-tfe-governance")).filter((name) => /^Policy|^Module/.test(name)).join()'],
          dir,
          process.env,
        );
        expect(exported.trim()).toBe("ModuleVersionDeprecation,Policy,PolicyFolder,PolicySet");
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
    300_000,
  );
});

describe("publishing to a private registry, as README says", () => {
  it("npm publish --dry-run: no warning, and exactly the files npm pack puts in the tarball", async () => {
    const dir = await mkdtemp(join(tmpdir(), "publish-"));
    try {
      // A registry that takes a token: the dry run contacts none, and says what it would publish.
      const userconfig = join(dir, ".npmrc");
      await writeFile(userconfig, "//127.0.0.1:9/:_authToken=dry-run\n");
      // --offline: a dry run against an address that answers nothing would wait out npm's retries of a version check.
      const flags = ["--dry-run", "--json", "--ignore-scripts", "--offline"];
      const publish = ["publish", ...flags, "--registry", "http://127.0.0.1:9/", "--userconfig", userconfig];
      const published = await run("npm", publish, repoRoot, process.env);
      expect(published.code, published.output).toBe(0);
      expect(published.output).not.toMatch(/npm warn/i);
      const stdout = (args: string[]) => execFileSync("npm", args, { cwd: repoRoot, encoding: "utf8", stdio: "pipe" });
      const publishedFiles = (Object.values(JSON.parse(stdout(publish)))[0] as { files: { path: string }[] }).files;
      const packed = JSON.parse(stdout(["pack", ...flags])) as { files: { path: string }[] }[];
      const listed = packed[0]?.files.map((file) => file.path).sort();
      expect(publishedFiles.map((file) => file.path).sort()).toEqual(listed);
      expect(listed).toContain("dist/index.js");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);

  // Issue 52 item 11: a quickstart leaves stack settings (with that machine's passphrase salt) in examples/; git
  // ignores them, and so must the package. One is made here, as the quickstart makes them, in case none is there.
  // Review of issue 52: a file git neither tracks nor ignores (a stray .env with a token) is no file of the
  // repository's either. The pack runs as npm runs it, prepack and postpack around it (prepare, the build, left out).
  it("packs only what git tracks besides dist/: no file git ignores, none it does not track, no stack's salt", async () => {
    // In a copy of the checkout made a repository of its own: prepack rewrites package.json, which the tests running
    // beside this one read in the checkout.
    const checkout = await mkdtemp(join(tmpdir(), "pack-check-"));
    try {
      await freshClone(checkout);
      await cp(join(repoRoot, "dist"), join(checkout, "dist"), { recursive: true });
      const git = (args: string[]) => execFileSync("git", args, { cwd: checkout, encoding: "utf8" });
      git(["init", "--quiet"]);
      git(["add", "--all"]);
      git(["-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "--quiet", "-m", "checkout"]);
      await writeFile(
        join(checkout, "examples", "policy-folders", "Pulumi.pack-check.yaml"),
        "encryptionsalt: v1:pack-check:v1:not-a-real-salt\n",
      );
      await writeFile(
        join(checkout, "examples", "quickstart", ".env-pack-check"),
        "TFE_TOKEN=pack-check-not-a-real-token\n",
      );
      const manifestBefore = readFileSync(join(checkout, "package.json"), "utf8");
      // The stray file is one git shows as untracked, not ignored: what the check is about.
      expect(git(["ls-files", "--others", "--exclude-standard", "--", "examples"])).toContain(
        "examples/quickstart/.env-pack-check",
      );
      const flags = ["--dry-run", "--json", "--ignore-scripts", "--offline"];
      execFileSync(process.execPath, ["scripts/pack-manifest.mjs", "prepack"], { cwd: checkout });
      let packed: { files: { path: string }[] }[];
      try {
        packed = JSON.parse(execFileSync("npm", ["pack", ...flags], { cwd: checkout, encoding: "utf8" }));
      } finally {
        execFileSync(process.execPath, ["scripts/pack-manifest.mjs", "postpack"], { cwd: checkout });
      }
      expect(readFileSync(join(checkout, "package.json"), "utf8")).toBe(manifestBefore);
      const listed = (packed[0]?.files ?? []).map((file) => file.path);
      expect(listed).toContain("examples/policy-folders/Pulumi.yaml");
      expect(listed).toContain("dist/index.js");
      // dist/ is built, and ignored by git for that reason: everything else packed is a file git tracks.
      const tracked = new Set(git(["ls-files", "-z"]).split("\0"));
      const outsideDist = listed.filter((path) => !path.startsWith("dist/"));
      expect(outsideDist.filter((path) => !tracked.has(path))).toEqual([]);
      const salted = outsideDist.filter((path) =>
        readFileSync(join(checkout, path), "utf8").includes("encryptionsalt"),
      );
      expect(salted).toEqual([]);
    } finally {
      await rm(checkout, { recursive: true, force: true });
    }
  }, 120_000);
});

/**
 * A directory whose `node` is Node.js 20: the system's when it is that old (as on this project's machines),
 * else Node 20 from the npm registry, installed once beside the toolchain's Node.
 */
async function olderNodeDirectory(): Promise<string> {
  const system = "/usr/bin/node";
  const version = await run(system, ["-p", "process.versions.node"], repoRoot, process.env);
  if (version.code === 0 && version.output.trim().startsWith("20.")) return "/usr/bin";
  const cache = process.env.PULUMI_TFE_GOVERNANCE_CACHE ?? join(homedir(), ".cache", "pulumi-tfe-governance");
  const prefix = join(cache, `node-20-${process.platform}-${process.arch}`);
  const bin = join(prefix, "node_modules", `node-${process.platform}-${process.arch}`, "bin");
  if (!existsSync(join(bin, "node"))) {
    await succeeds(
      "npm",
      ["install", "--no-save", "--prefix", prefix, `node-${process.platform}-${process.arch}@20`],
      repoRoot,
      process.env,
    );
  }
  return bin;
}

function headCommit(): string {
  return execFileSync("git", ["rev-parse", "HEAD"], { cwd: repoRoot, encoding: "utf8" }).trim();
}

/** The files git tracks (and new ones it would), as a clone has them, without node_modules or dist/. */
async function copyTrackedTree(into: string): Promise<void> {
  const files = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], {
    cwd: repoRoot,
    encoding: "utf8",
  })
    .split("\0")
    .filter((path) => path !== "");
  for (const path of files) {
    await cp(join(repoRoot, path), join(into, path)).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== "ENOENT") throw error; // deleted in the work tree, not yet in the index
    });
  }
}

interface LocalServer {
  child: ChildProcess;
  url: string;
  /** What it printed so far: the banner, then a line per request. */
  output(): string;
}

/** Runs a command that starts a server in its own process group; resolves once its banner is out. */
function startServer(command: string, cwd: string, env: NodeJS.ProcessEnv): Promise<LocalServer> {
  const child = spawn("bash", ["-c", `exec ${command}`], { cwd, env, detached: true });
  let printed = "";
  child.stderr.on("data", (chunk) => (printed += chunk));
  return new Promise((found, failed) => {
    child.stdout.on("data", (chunk) => {
      printed += chunk;
      const url = /listening on (http:\/\/\S+)/.exec(printed)?.[1];
      if (url && printed.includes("manage-modules")) found({ child, url, output: () => printed });
    });
    child.on("exit", (code) => failed(new Error(`the server exited ${code}:\n${printed}`)));
  });
}

async function reachable(url: string): Promise<boolean> {
  return fetch(`${url}/api/v2/ping`).then(
    () => true,
    () => false,
  );
}

/** Every copy of package `name` under a node_modules tree, nested ones included. */
async function findPackages(nodeModules: string, name: string): Promise<string[]> {
  const found: string[] = [];
  const visit = async (dir: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
      if (!entry.isDirectory()) continue;
      const names = entry.name.startsWith("@")
        ? (await readdir(join(dir, entry.name))).map((inner) => `${entry.name}/${inner}`)
        : [entry.name];
      for (const packageName of names) {
        if (packageName === name) found.push(join(dir, packageName));
        await visit(join(dir, packageName, "node_modules"));
      }
    }
  };
  await visit(nodeModules);
  return found;
}
