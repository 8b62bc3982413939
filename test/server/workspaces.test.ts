import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TfeClient } from "../../src/client";
import { type RunningServer, startServer } from "../../src/server";
import { call, organization, otherToken, start, token } from "./helpers";

// Workspaces and projects, read-only: what a policy set's scope may name, shown by id and listed by organization.

let server: RunningServer;
beforeAll(async () => {
  server = await start();
});
afterAll(() => server.close());

describe("workspaces and projects", () => {
  it("lists an organization's workspaces and projects by name, in pages", async () => {
    const workspaces = await call(server, "GET", `/api/v2/organizations/${organization}/workspaces?page[size]=1`);
    expect(workspaces.status).toBe(200);
    expect(workspaces.body.data.map((item: { attributes: { name: string } }) => item.attributes.name)).toEqual([
      "production",
    ]);
    expect(workspaces.body.meta.pagination).toMatchObject({ "total-count": 2, "next-page": 2 });
    const projects = await call(server, "GET", `/api/v2/organizations/${organization}/projects`);
    expect(projects.body.data).toEqual([
      expect.objectContaining({ id: "prj-platform00000001", type: "projects", attributes: { name: "platform" } }),
    ]);
  });

  it("shows one by id, and answers 404 for an unknown id or one of another organization", async () => {
    const shown = await call(server, "GET", "/api/v2/workspaces/ws-staging000000001");
    expect(shown.body.data).toMatchObject({
      id: "ws-staging000000001",
      attributes: { name: "staging" },
      relationships: { project: { data: { id: "prj-platform00000001", type: "projects" } } },
    });
    expect((await call(server, "GET", "/api/v2/workspaces/ws-missing00000001")).status).toBe(404);
    expect((await call(server, "GET", "/api/v2/workspaces/ws-globex0000000001")).status).toBe(404);
    expect((await call(server, "GET", "/api/v2/projects/prj-platform00000001", { auth: otherToken })).status).toBe(404);
  });

  it("are read by the client: one workspace by id, every project of an organization", async () => {
    const client = new TfeClient({ address: server.url, token, rateLimit: false });
    try {
      expect(await client.workspaces.read("ws-production0000001")).toEqual({
        id: "ws-production0000001",
        name: "production",
      });
      // A workspace in a project names it: a set scoped to the project reaches it.
      const workspaces = [];
      for await (const workspace of client.workspaces.listAll(organization)) workspaces.push(workspace);
      expect(workspaces).toEqual([
        { id: "ws-production0000001", name: "production" },
        { id: "ws-staging000000001", name: "staging", projectId: "prj-platform00000001" },
      ]);
      const projects = [];
      for await (const project of client.projects.listAll(organization)) projects.push(project);
      expect(projects).toEqual([{ id: "prj-platform00000001", name: "platform" }]);
      await expect(client.workspaces.read("ws-missing00000001")).rejects.toMatchObject({ status: 404 });
    } finally {
      await client.close();
    }
  });

  it("refuses a seed whose workspace names a project the organization does not have", async () => {
    await expect(
      startServer({
        seed: {
          organizations: [{ name: "acme", plus: true }],
          workspaces: [
            { id: "ws-Orphan0000000001", organization: "acme", name: "orphan", project: "prj-Missing00000001" },
          ],
        },
      }),
    ).rejects.toThrow(
      "seed: workspaces[0].project names prj-Missing00000001, which is not a project of acme: add it to projects",
    );
  });
});
