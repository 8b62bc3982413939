import type { FastifyInstance } from "fastify";
import type { AppContext } from "../context";
import { ApiError } from "../errors";
import { loopbackOnly } from "./vcs";

// What a run's link opens: the service's run page (`/app/<organization>/workspaces/<workspace>/runs/<run>`), where a
// user reads a run's policy results. The local server has no user interface, so it serves a plain page of the run
// and what it recorded, on loopback only and with no token (a browser following a link carries none), so that the
// links `tfe-governance impact --html` writes lead somewhere here too.

const escaped = (text: string) => text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);

export function registerRunPages(app: FastifyInstance, { storage }: AppContext): void {
  app.get<{ Params: { organization: string; workspace: string; run: string } }>(
    "/app/:organization/workspaces/:workspace/runs/:run",
    async (request, reply) => {
      loopbackOnly(request);
      const { organization, workspace, run: runId } = request.params;
      const run = storage.runById(runId);
      const target = run && storage.scopeTarget("workspaces", run.workspace);
      if (!run || !target || target.organization !== organization || target.name !== workspace) {
        throw ApiError.single(404, "not found", `No run ${runId} of workspace "${workspace}" in "${organization}".`);
      }
      const rows = run.results
        .map(
          (result) =>
            `<tr><td>${escaped(result.policySet)}</td><td>${escaped(result.policy)}</td><td>${escaped(result.kind)}</td>` +
            `<td>${escaped(result.level)}</td><td>${escaped(result.status)}</td></tr>`,
        )
        .join("\n");
      return reply.type("text/html; charset=utf-8").send(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escaped(run.id)} of ${escaped(workspace)}</title></head>
<body><h1>Run ${escaped(run.id)}</h1>
<p>Workspace ${escaped(workspace)} of ${escaped(organization)}, made ${escaped(run.createdAt)}, status ${escaped(run.status)}${run.overridden ? ", its failures overridden" : ""}.
This is the local server's page of the run; the service's own shows the same results, with its plan and logs.</p>
<table><thead><tr><th>policy set</th><th>policy</th><th>kind</th><th>level</th><th>result</th></tr></thead>
<tbody>
${rows}
</tbody></table>
</body></html>
`);
    },
  );
}
