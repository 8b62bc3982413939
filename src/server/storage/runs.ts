// The local server's table of runs: seeded, never made by a request. Each run holds the policy results it recorded,
// from which the routes answer its task stages, policy evaluations, outcomes, policy checks and Terraform policy
// evaluations (src/server/routes/runs.ts).

import { Table } from "./database";
import type { PolicyResultRecord, RunRecord } from "./records";

export class RunsTable extends Table {
  addRun(run: RunRecord): void {
    this.transaction(() =>
      this.run(
        `INSERT INTO runs (id, workspace, created_at, status, message, results, overridden)
         VALUES (?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (id) DO UPDATE SET workspace = excluded.workspace, created_at = excluded.created_at,
           status = excluded.status, message = excluded.message, results = excluded.results,
           overridden = excluded.overridden`,
        run.id,
        run.workspace,
        run.createdAt,
        run.status,
        run.message,
        JSON.stringify(run.results),
        run.overridden ? 1 : 0,
      ),
    );
  }

  /**
   * One page of a workspace's runs, newest first: by the time each names, not by its text (`...:00Z` sorts after
   * `...:00.500Z`, though it is half a second earlier), so that a reader stopping at the first run older than its
   * window misses none.
   */
  listRuns(query: { workspace: string; limit: number; offset: number }): { items: RunRecord[]; totalCount: number } {
    const rows = this.all(
      "SELECT * FROM runs WHERE workspace = ? ORDER BY julianday(created_at) DESC, id DESC LIMIT ? OFFSET ?",
      query.workspace,
      query.limit,
      query.offset,
    );
    const count = this.get("SELECT COUNT(*) AS count FROM runs WHERE workspace = ?", query.workspace);
    return { items: rows.map(runOf), totalCount: Number(count?.count ?? 0) };
  }

  runById(id: string): RunRecord | undefined {
    const row = this.get("SELECT * FROM runs WHERE id = ?", id);
    return row && runOf(row);
  }
}

function runOf(row: Record<string, unknown>): RunRecord {
  return {
    id: String(row.id),
    workspace: String(row.workspace),
    createdAt: String(row.created_at),
    status: String(row.status),
    message: String(row.message),
    results: JSON.parse(String(row.results)) as PolicyResultRecord[],
    overridden: Number(row.overridden) === 1,
  };
}
