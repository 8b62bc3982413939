import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TfeClient } from "../../src/client";
import { type RunningServer, startServer } from "../../src/server";
import { PulumiProject } from "./pulumi-project";
import { policiesOnService } from "./service-and-state";
import { expectNoTokenInPlainText } from "./token-scan";

// Pulumi configures the provider of `refresh` and `destroy` with the stack config it recorded at the last `up`
// (the default dynamic provider's inputs), not with the stack config of now. These scenarios rotate the token
// (the server then accepts only the new one) and move the server to another port, under the real engine.

const organization = "acme";
const oldToken = "rotation-old-token-0123456789";
const newToken = "rotation-new-token-9876543210";
const programSource = readFileSync(join(__dirname, "program", "index.js"), "utf8");
const spec = {
  policies: [
    { resource: "require-tags", enforcementLevel: "soft-mandatory", code: "main = rule { true }\n" },
    { resource: "restrict-types", enforcementLevel: "advisory", code: "main = rule { false }\n" },
  ],
  deprecations: [
    { resource: "vpc-1-0-0", moduleName: "vpc", moduleProvider: "aws", version: "1.0.0", reason: "Upgrade to 1.1.0" },
  ],
};

/** The local server on a data file, accepting only `token`; the same file keeps the data across restarts. */
function serve(dataFile: string, token: string, port = 0): Promise<RunningServer> {
  return startServer({
    data: dataFile,
    port,
    seed: {
      organizations: [{ name: organization, plus: true }],
      tokens: [{ token, organizations: [organization] }],
      modules: [{ organization, name: "vpc", provider: "aws", versions: ["1.0.0", "1.1.0"] }],
    },
  });
}

/** What an administrator does when rotating: the old token stops working. The server has no API for it. */
function revoke(dataFile: string, token: string): void {
  const database = new DatabaseSync(dataFile);
  try {
    database.exec("PRAGMA foreign_keys = ON");
    database.prepare("DELETE FROM tokens WHERE token = ?").run(token);
  } finally {
    database.close();
  }
}

function portOf(server: RunningServer): number {
  return Number(new URL(server.url).port);
}

async function serverHolds(server: RunningServer, token: string) {
  const client = new TfeClient({ address: server.url, token, rateLimit: false });
  try {
    const policies = (await policiesOnService(client, organization)).map((policy) => policy.name);
    const version = await client.registry.getModuleVersion({
      namespace: organization,
      name: "vpc",
      provider: "aws",
      version: "1.0.0",
    });
    return { policies: policies.sort(), deprecated: version.deprecation !== null };
  } finally {
    await client.close();
  }
}

describe.each([
  { where: "stack config (tfe:token, tfe:address)", viaEnvironment: false },
  { where: "the environment (TFE_TOKEN, TFE_ADDRESS)", viaEnvironment: true },
])("credentials in $where: a rotated token and a moved address", ({ viaEnvironment }) => {
  let dataDir: string;
  let dataFile: string;
  let project: PulumiProject;
  let server: RunningServer;
  const retired: RunningServer[] = [];

  const restart = async (token: string, port: number) => {
    retired.push(server);
    await server.close();
    server = await serve(dataFile, token, port);
  };
  const useCredentials = async (credentials: { token?: string; address?: string }) => {
    if (viaEnvironment) {
      project.setEnv({
        ...(credentials.token ? { TFE_TOKEN: credentials.token } : {}),
        ...(credentials.address ? { TFE_ADDRESS: credentials.address } : {}),
      });
      return;
    }
    if (credentials.token) await project.run(["config", "set", "--secret", "tfe:token", credentials.token]);
    if (credentials.address) await project.run(["config", "set", "tfe:address", credentials.address]);
  };

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "rotation-data-"));
    dataFile = join(dataDir, "server.sqlite");
    server = await serve(dataFile, oldToken);
    project = await PulumiProject.create({
      name: "tfe-rotation",
      files: { "index.js": programSource, "spec.json": JSON.stringify(spec) },
      config: { "tfe:organization": organization },
    });
    await useCredentials({ token: oldToken, address: server.url });
    await project.up();
    expect(await serverHolds(server, oldToken)).toEqual({
      policies: ["require-tags", "restrict-types"],
      deprecated: true,
    });
  }, 180_000);

  afterAll(async () => {
    await server?.close();
    await project?.dispose();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it("after a token rotation, refresh and preview --refresh use the new token", async () => {
    revoke(dataFile, oldToken);
    await restart(newToken, portOf(server));
    await useCredentials({ token: newToken });

    if (!viaEnvironment) {
      // The recorded config still holds the old token: the failure says what to run.
      const stale = await project.run(["refresh", "--yes"], { allowFailure: true });
      expect(stale.code).not.toBe(0);
      expect(stale.output).toContain("the token was not accepted (401)");
      expect(stale.output).toContain("pulumi refresh --run-program");
      const stalePreview = await project.run(["preview", "--refresh"], { allowFailure: true });
      expect(stalePreview.code).not.toBe(0);
      expect(stalePreview.output).toContain("pulumi preview --refresh --run-program");

      await project.run(["preview", "--refresh", "--run-program", "--expect-no-changes"]);
      await project.run(["refresh", "--yes", "--run-program"]);
    }
    // From here on the recorded config holds the new token (or never held one): no flag is needed.
    await project.run(["refresh", "--yes", "--expect-no-changes"]);
    await project.run(["preview", "--refresh", "--expect-no-changes"]);
  }, 240_000);

  it("after the server moved, up takes the new address at once and records it for refresh and preview --refresh", async () => {
    const before = server.url;
    await restart(newToken, 0);
    await useCredentials({ address: server.url });

    if (!viaEnvironment) {
      // Refresh configures the provider as the last up recorded it: it fails in seconds, naming the address, the
      // setting it came from and what to run, instead of retrying for a minute.
      const stale = await project.run(["refresh", "--yes"], { allowFailure: true });
      expect(stale.code).not.toBe(0);
      expect(stale.output).toContain(`${new URL(before).origin} (the address from stack config tfe:address) refused`);
      expect(stale.output).toMatch(/failed after [1-9] attempts?/);
      expect(stale.output).toContain("PULUMI_RUN_PROGRAM=true");
      // A command that runs the program takes the stack config of now.
      await project.run(["refresh", "--yes", "--expect-no-changes"], { env: { PULUMI_RUN_PROGRAM: "true" } });
    }
    // Preview and up run the program: the new address at once, and up records it (its output says no change).
    await project.run(["preview", "--expect-no-changes"]);
    await project.run(["up", "--yes"]);
    await project.run(["refresh", "--yes", "--expect-no-changes"]);
    await project.run(["preview", "--refresh", "--expect-no-changes"]);
  }, 240_000);

  it("after the server moved again, destroy reaches the new address", async () => {
    await restart(newToken, 0);
    await useCredentials({ address: server.url });

    if (!viaEnvironment) {
      const stale = await project.run(["destroy", "--yes"], { allowFailure: true });
      expect(stale.code).not.toBe(0);
      expect(stale.output).toContain("ECONNREFUSED");
      expect(stale.output).toContain("pulumi destroy --run-program");
      expect(await serverHolds(server, newToken)).toMatchObject({ deprecated: true });
      await project.run(["destroy", "--yes", "--run-program"]);
    } else {
      await project.run(["refresh", "--yes", "--expect-no-changes"]);
      await project.run(["destroy", "--yes"]);
    }
    expect(await serverHolds(server, newToken)).toEqual({ policies: [], deprecated: false });
  }, 240_000);

  it("neither token is anywhere in plain text, but in the -v=9 engine log of a stack config token", async () => {
    await expectNoTokenInPlainText([oldToken, newToken], project, [...retired, server], {
      storedAs: viaEnvironment ? "nothing" : "stack config secret",
    });
    // What docs/configuration.md warns of: the engine logs each provider's configuration, secrets decrypted, at -v=9.
    const loggedToken = project.engineLogs.some((log) => log.includes(oldToken) || log.includes(newToken));
    expect(loggedToken).toBe(!viaEnvironment);
  }, 60_000);
});
