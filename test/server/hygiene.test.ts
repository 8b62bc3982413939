import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RequestLogEntry, RunningServer } from "../../src/server";
import { call, organization, start } from "./helpers";

const versionPath = `/api/v2/organizations/${organization}/registry-modules/private/${organization}/vpc/aws/1.0.0`;
const deprecation = (reason: string) => ({
  data: { type: "module-versions", attributes: { deprecation: { "deprecated-status": "Deprecated", reason } } },
});
const reinstatement = {
  data: { type: "module-versions", attributes: { deprecation: { "deprecated-status": "Undeprecated" } } },
};

describe("storage keeps no orphan deprecation", () => {
  let directory: string;
  let server: RunningServer;
  beforeAll(async () => {
    directory = mkdtempSync(join(tmpdir(), "tfe-hygiene-"));
    server = await start({ data: join(directory, "data.sqlite") });
  });
  afterAll(async () => {
    await server.close();
    rmSync(directory, { recursive: true, force: true });
  });

  const deprecationRows = () => {
    const db = new DatabaseSync(join(directory, "data.sqlite"), { readOnly: true });
    try {
      return Number((db.prepare("SELECT COUNT(*) AS count FROM deprecations").get() as { count: number }).count);
    } finally {
      db.close();
    }
  };

  it("re-deprecating replaces the row, reinstating removes it", async () => {
    for (const reason of ["first", "second", "third"]) {
      expect((await call(server, "PATCH", versionPath, { body: deprecation(reason) })).status).toBe(200);
    }
    expect(deprecationRows()).toBe(1);
    const registry = await call(server, "GET", `/api/registry/v1/modules/${organization}/vpc/aws/1.0.0`);
    expect(registry.body.deprecation.reason).toMatch(/^third/);
    expect((await call(server, "PATCH", versionPath, { body: reinstatement })).status).toBe(200);
    expect(deprecationRows()).toBe(0);
  });
});

describe("the request log is bounded", () => {
  it("keeps the newest entries up to requestLogSize", async () => {
    const server = await start({ requestLogSize: 5 });
    try {
      for (let index = 0; index < 8; index++) await call(server, "GET", `/api/v2/ping?n=${index}`);
      const entries = server.requestLog.entries();
      expect(entries.map((entry) => entry.path)).toEqual([3, 4, 5, 6, 7].map((index) => `/api/v2/ping?n=${index}`));
      server.requestLog.clear();
      await call(server, "GET", "/api/v2/ping?n=8");
      expect(server.requestLog.entries().map((entry) => entry.path)).toEqual(["/api/v2/ping?n=8"]);
    } finally {
      await server.close();
    }
  });

  it("holds 10,000 entries by default", async () => {
    const server = await start();
    try {
      const entry: RequestLogEntry = {
        origin: "api",
        method: "GET",
        path: "/",
        route: undefined,
        status: 200,
        durationMs: 0,
        at: "",
      };
      for (let index = 0; index < 10_050; index++) server.requestLog.add({ ...entry, path: `/${index}` });
      const entries = server.requestLog.entries();
      expect(entries).toHaveLength(10_000);
      expect(entries[0]?.path).toBe("/50");
      expect(entries.at(-1)?.path).toBe("/10049");
    } finally {
      await server.close();
    }
  });
});
