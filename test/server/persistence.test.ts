import { type ChildProcess, execFile, execFileSync } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer } from "../../src/server";
import { compiledCli, type LaunchedCli, launchCli } from "./cli-process";
import { call, createPolicy, organization, seed, token } from "./helpers";

let cli: string;
let directory: string;

beforeAll(() => {
  directory = mkdtempSync(join(tmpdir(), "tfe-server-"));
  cli = compiledCli();
});
afterAll(() => rmSync(directory, { recursive: true, force: true }));

describe("restart", () => {
  it("keeps policies, code, deprecations and created modules in a file database", async () => {
    const data = join(directory, "restart.sqlite");
    const first = await startServer({ data, seed });
    const policy = await createPolicy(first, "kept", { description: "survives" });
    await call(first, "PUT", `/api/v2/policies/${policy.id}/upload`, { raw: "main = rule { true }" });
    await call(
      first,
      "PATCH",
      `/api/v2/organizations/${organization}/registry-modules/private/${organization}/vpc/aws/1.0.0`,
      {
        body: {
          data: {
            type: "module-versions",
            attributes: { deprecation: { "deprecated-status": "Deprecated", reason: "Old." } },
          },
        },
      },
    );
    await first.close();

    const second = await startServer({ data, seed });
    try {
      const shown = await call(second, "GET", `/api/v2/policies/${policy.id}`);
      expect(shown.body.data.attributes).toMatchObject({ name: "kept", description: "survives" });
      const location = (await call(second, "GET", `/api/v2/policies/${policy.id}/download`)).headers.get("location")!;
      expect(await (await fetch(location)).text()).toBe("main = rule { true }");
      const version = await call(second, "GET", `/api/registry/v1/modules/${organization}/vpc/aws/1.0.0`);
      expect(version.body.deprecation.reason).toMatch(/^Old\./);
      expect(second.tokens.map((entry) => entry.token)).toContain(token);
    } finally {
      await second.close();
    }
  });

  it("keeps the generated token of an unseeded file database instead of making a new one", async () => {
    const data = join(directory, "unseeded.sqlite");
    const first = await startServer({ data });
    await first.close();
    const second = await startServer({ data });
    await second.close();
    expect(second.tokens).toEqual(first.tokens);
    expect(first.tokens).toHaveLength(1);
    expect(first.organizations).toEqual([{ name: "example-org", plus: true }]);
  });
});

describe("the tfe-governance-server bin", () => {
  const children: ChildProcess[] = [];
  afterAll(() => {
    for (const child of children) child.kill("SIGKILL");
  });

  async function launch(args: string[]): Promise<LaunchedCli> {
    const launched = await launchCli(cli, args);
    children.push(launched.child);
    return launched;
  }

  it("explains every flag with --help", () => {
    const help = execFileSync(process.execPath, [cli, "--help"]).toString();
    for (const flag of ["--port", "--host", "--data", "--seed", "--rate-limit", "--faults", "--help"]) {
      expect(help).toContain(flag);
    }
  });

  it("prints its URL and tokens, and keeps acknowledged data through kill -9 and a restart", async () => {
    const data = join(directory, "killed.sqlite");
    const seedFile = join(directory, "seed.json");
    writeFileSync(seedFile, JSON.stringify(seed));
    const args = ["--port", "0", "--data", data, "--seed", seedFile, "--quiet"];
    const first = await launch(args);
    expect(first.output()).toContain(token);
    expect(first.output()).toContain(`data ${data} (kept across restarts)`);
    const target = { url: first.url } as Parameters<typeof call>[0];
    const policy = await createPolicy(target, "acknowledged");
    const code = Buffer.alloc(200_000, "k");
    expect((await call(target, "PUT", `/api/v2/policies/${policy.id}/upload`, { raw: code })).status).toBe(204);
    const exited = new Promise((resolve) => first.child.once("exit", resolve));
    first.child.kill("SIGKILL");
    await exited;

    const second = await launch(args);
    const restarted = { url: second.url } as Parameters<typeof call>[0];
    const shown = await call(restarted, "GET", `/api/v2/policies/${policy.id}`);
    expect(shown.status).toBe(200);
    expect(shown.body.data.attributes.name).toBe("acknowledged");
    const location = (await call(restarted, "GET", `/api/v2/policies/${policy.id}/download`)).headers.get("location")!;
    expect(Buffer.from(await (await fetch(location)).arrayBuffer()).equals(code)).toBe(true);
    second.child.kill("SIGTERM");
  });

  it("says its data is in memory without --data, and prints each organization's sets, workspaces and projects", async () => {
    const started = await launch(["--port", "0", "--seed", "quickstart", "--quiet"]);
    try {
      const output = started.output();
      expect(output).toContain("data in memory: lost when the server stops (--data FILE keeps it across restarts)");
      expect(output).toContain("organization acme:");
      expect(output).toContain("policy sets: polset-QuickstartBase1 baseline (sentinel)");
      expect(output).toContain("workspaces: ws-QuickstartProd001 production");
      expect(output).toContain("projects: prj-QuickstartPlatform1 platform");
      expect(output).toContain("oauth tokens (vcs-repo oauth-token-id): ot-QuickstartGitHub01 (github)");
      expect(output).toMatch(/^ {2}acme\/policy-library {2}\/\S+$/m);
    } finally {
      started.child.kill("SIGTERM");
    }
  });

  it("makes the quickstart seed's repository on first start, under --data's folder, and keeps it across restarts", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "quickstart-repository-"));
    const args = ["--port", "0", "--seed", "quickstart", "--data", join(dataDir, "server.sqlite"), "--quiet"];
    const repository = join(dataDir, "repositories", "acme", "policy-library");
    try {
      const first = await launch(args);
      expect(first.output()).toContain(`  acme/policy-library  ${repository}`);
      const quickstartToken = /^ {2}(quickstart-\S+)/m.exec(first.output())?.[1] as string;
      const target = { url: first.url } as Parameters<typeof call>[0];
      // A set read from the repository with the seed's OAuth token: the folder's policies, ready.
      const created = await call(target, "POST", `/api/v2/organizations/${organization}/policy-sets`, {
        body: {
          data: {
            type: "policy-sets",
            attributes: {
              name: "from-the-library",
              "vcs-repo": {
                identifier: "acme/policy-library",
                branch: "main",
                "oauth-token-id": "ot-QuickstartGitHub01",
              },
            },
          },
        },
        auth: quickstartToken,
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const versionId = created.body.data.relationships["newest-version"].data.id;
      let version = (await call(target, "GET", `/api/v2/policy-set-versions/${versionId}`, { auth: quickstartToken }))
        .body.data;
      for (let attempt = 0; attempt < 200 && version.attributes.status !== "ready"; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        version = (await call(target, "GET", `/api/v2/policy-set-versions/${versionId}`, { auth: quickstartToken }))
          .body.data;
      }
      expect(version.attributes.status).toBe("ready");
      // The repository is the user's from now on: a commit made in it survives a restart.
      writeFileSync(join(repository, "NOTES.md"), "kept\n");
      const author = ["-c", "user.name=t", "-c", "user.email=t@localhost"];
      execFileSync("git", ["-C", repository, "add", "NOTES.md"]);
      execFileSync("git", ["-C", repository, ...author, "commit", "--quiet", "-m", "mine"]);
      first.child.kill("SIGTERM");
      const second = await launch(args);
      second.child.kill("SIGTERM");
      const log = execFileSync("git", ["-C", repository, "log", "--format=%s"], { encoding: "utf8" });
      expect(log.trim().split("\n")).toEqual([
        "mine",
        `Made by tfe-governance-server from ${join(__dirname, "..", "..", "examples", "quickstart", "policy-sets", "sentinel-baseline")}`,
      ]);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  // Issue 52: the quickstart's closing lines leave a server on 8080, and a quick start starts another there with `&`.
  it("a second server on a taken port says so in one line, naming the port and the server there, and exits", async () => {
    const first = await startServer({ seed });
    const other = createServer().listen(0, "127.0.0.1");
    await once(other, "listening");
    try {
      // Not spawnSync: the first server answers in this process, and the second asks it what it is.
      const taken = (port: string, flag = "--port") =>
        new Promise<{ status: number | null; stdout: string; stderr: string }>((done) => {
          execFile(
            process.execPath,
            [cli, flag, port, "--seed", "quickstart", "--quiet"],
            { timeout: 15_000 },
            (error, stdout, stderr) => done({ status: error ? Number(error.code) : 0, stdout, stderr }),
          );
        });
      const ourPort = new URL(first.url).port;
      const second = await taken(ourPort);
      expect(second.status).toBe(2);
      expect(second.stdout).toBe("");
      expect(second.stderr).toBe(
        `tfe-governance-server: cannot listen on 127.0.0.1 port ${ourPort} (--port): the port is taken (EADDRINUSE); ` +
          "another tfe-governance-server listens there, with data of its own (the quickstart's closing lines start " +
          "one): stop it first (kill %1 in the shell that started it, or Ctrl-C in its terminal), or give another " +
          "--port (0 picks a free one)\n",
      );
      const otherPort = String((other.address() as AddressInfo).port);
      const byOther = await taken(otherPort, "--download-port");
      expect(byOther.status).toBe(2);
      expect(byOther.stderr).toContain(
        `port ${otherPort} (--download-port): the port is taken (EADDRINUSE); another program listens there`,
      );
    } finally {
      other.close();
      await first.close();
    }
  });

  it("refuses a bad flag value with a message naming the flag", () => {
    expect(() => execFileSync(process.execPath, [cli, "--port", "abc"], { stdio: "pipe" })).toThrow(/--port must be/);
    for (const [flag, value] of [
      ["--port", "70000"],
      ["--download-port", ""],
      ["--rate-limit", " "],
    ]) {
      expect(
        () => execFileSync(process.execPath, [cli, flag!, value!], { stdio: "pipe", timeout: 5000 }),
        `${flag} "${value}"`,
      ).toThrow(new RegExp(`${flag} must be`));
    }
  });
});

describe("a database of an earlier server", () => {
  it("gets the policy set columns of this one, its sets keeping their names and memberships with the defaults", async () => {
    const data = join(directory, "earlier.sqlite");
    const { DatabaseSync } = await import("node:sqlite");
    const earlier = new DatabaseSync(data);
    earlier.exec(`
      CREATE TABLE organizations (name TEXT PRIMARY KEY, plus INTEGER NOT NULL);
      CREATE TABLE policy_sets (
        id TEXT PRIMARY KEY, organization TEXT NOT NULL REFERENCES organizations(name), name TEXT NOT NULL);
      INSERT INTO organizations VALUES ('${organization}', 1);
      INSERT INTO policy_sets VALUES ('polset-earlier00000001', '${organization}', 'from-before');
    `);
    earlier.close();
    const server = await startServer({ data, seed });
    try {
      const shown = await call(server, "GET", "/api/v2/policy-sets/polset-earlier00000001");
      expect(shown.status).toBe(200);
      expect(shown.body.data.attributes).toMatchObject({
        name: "from-before",
        kind: "sentinel",
        global: false,
        "policy-tool-version": "latest",
      });
      expect(Date.parse(shown.body.data.attributes["created-at"])).not.toBeNaN();
    } finally {
      await server.close();
    }
  });
});
