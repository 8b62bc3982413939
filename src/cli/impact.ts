import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { TfeClient } from "../client";
import { type PolicySetKind, policySetKinds } from "../contract/policies";
import { readResults, type WorkspaceResults, workspacesToRead, wouldBlock } from "../resources/impact";
import { impactUsage } from "./impact-usage";

// `tfe-governance impact`: the service's own recent policy results of an organization (or some of its workspaces),
// as a matrix of workspaces by policy: how many runs of the window passed each policy, failed it at a level that
// let them go on, failed it at one that stopped them. With --policy and --level, the runs a raise to that level
// would have blocked, as preview says it under the resource. A table, --json, or a self-contained HTML page.

interface Cell {
  passed: number;
  /** Failed at a level that let the run go on (advisory). */
  failedAdvisory: number;
  /** Failed at a level that stopped it (or made it ask for an override). */
  failedBlocking: number;
  errored: number;
  /** The runs that failed it, newest first. */
  failures: { runId: string; createdAt: string; level: string }[];
  /** With --level: the runs the raise would have blocked. */
  wouldBlock: string[];
}

export interface ImpactReport {
  organization: string;
  windowDays: number;
  address: string;
  /** `policy (set)`, as the columns of the matrix. */
  policies: string[];
  workspaces: { id: string; name: string; runs: number; cells: Record<string, Cell> }[];
  notRead: string[];
  requests: number;
}

export async function impactMain(
  args: string[],
  io: { out: NodeJS.WritableStream; log: (line: string) => void; env?: NodeJS.ProcessEnv },
): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      organization: { type: "string" },
      workspace: { type: "string", multiple: true },
      policy: { type: "string" },
      "policy-set": { type: "string" },
      level: { type: "string" },
      kind: { type: "string", default: "sentinel" },
      days: { type: "string", default: "30" },
      budget: { type: "string", default: "1000" },
      json: { type: "boolean" },
      html: { type: "string" },
      help: { type: "boolean" },
    },
    strict: true,
  });
  if (values.help) {
    io.out.write(`${impactUsage}\n`);
    return 0;
  }
  const env = io.env ?? process.env;
  const organization = values.organization ?? env.TFE_ORGANIZATION;
  if (!organization) {
    io.log("impact needs an organization: --organization ORG, or TFE_ORGANIZATION");
    return 2;
  }
  for (const [flag, text] of [
    ["--days", values.days],
    ["--budget", values.budget],
  ] as const) {
    if (!/^\d+$/.test(text) || Number(text) === 0) {
      io.log(`${flag} ${text}: give a whole number above 0`);
      return 2;
    }
  }
  if (!policySetKinds.includes(values.kind as PolicySetKind)) {
    io.log(`--kind ${values.kind}: use ${policySetKinds.join(", ")}`);
    return 2;
  }
  if (values.level !== undefined && values.policy === undefined) {
    io.log("--level says what a raise of one policy would block: give --policy NAME too");
    return 2;
  }
  const client = TfeClient.fromConfig({
    tokenWays: "the TFE_TOKEN environment variable, or the credentials file of terraform login",
    env,
  });
  try {
    const read = await readResults(
      client,
      await workspacesToRead(client, { organization, ...(values.workspace ? { workspaceIds: values.workspace } : {}) }),
      { windowDays: Number(values.days), requestBudget: Number(values.budget) },
      "raise --budget to read them",
    );
    const report = reportOf(read, {
      organization,
      address: client.address,
      windowDays: Number(values.days),
      policy: values.policy,
      policySet: values["policy-set"],
      raise: values.level === undefined ? undefined : { level: values.level, kind: values.kind as PolicySetKind },
    });
    if (values.html !== undefined) {
      writeFileSync(values.html, htmlOf(report));
      io.log(`wrote ${values.html}`);
    }
    io.out.write(values.json ? `${JSON.stringify(report, null, 2)}\n` : tableOf(report));
    for (const line of report.notRead) io.log(`not read: ${line}`);
    return 0;
  } finally {
    await client.close();
  }
}

/** The matrix of what was read, the columns filtered by --policy and --policy-set. */
export function reportOf(
  read: { workspaces: WorkspaceResults[]; notRead: string[]; requests: number },
  options: {
    organization: string;
    address: string;
    windowDays: number;
    policy?: string | undefined;
    policySet?: string | undefined;
    raise?: { level: string; kind: PolicySetKind } | undefined;
  },
): ImpactReport {
  const columns = new Set<string>();
  const workspaces = read.workspaces.map((workspace) => {
    const cells: Record<string, Cell> = {};
    for (const run of workspace.runs) {
      for (const result of run.results) {
        if (options.policy !== undefined && result.policy !== options.policy) continue;
        if (options.policySet !== undefined && result.policySet !== options.policySet) continue;
        const column = `${result.policy} (${result.policySet})`;
        columns.add(column);
        cells[column] ??= { passed: 0, failedAdvisory: 0, failedBlocking: 0, errored: 0, failures: [], wouldBlock: [] };
        const cell = cells[column];
        if (result.status === "passed") cell.passed++;
        else if (result.status === "errored") cell.errored++;
        else if (result.status === "failed") {
          if (result.level === "advisory") cell.failedAdvisory++;
          else cell.failedBlocking++;
          cell.failures.push({ runId: run.id, createdAt: run.createdAt.toISOString(), level: result.level });
          if (options.raise && wouldBlock(result, options.raise.kind, options.raise.level))
            cell.wouldBlock.push(run.id);
        }
      }
    }
    return { id: workspace.workspaceId, name: workspace.workspaceName, runs: workspace.runs.length, cells };
  });
  return {
    organization: options.organization,
    windowDays: options.windowDays,
    address: options.address,
    policies: [...columns].sort(),
    workspaces,
    notRead: read.notRead,
    requests: read.requests,
  };
}

export function tableOf(report: ImpactReport): string {
  const rows = [
    ["workspace", "policy (set)", "passed", "failed, advisory", "failed, blocking", "would block", "last failure"],
  ];
  for (const workspace of report.workspaces) {
    for (const policy of report.policies) {
      const cell = workspace.cells[policy];
      if (!cell) continue;
      const last = cell.failures[0];
      rows.push([
        workspace.name,
        policy,
        String(cell.passed),
        String(cell.failedAdvisory),
        String(cell.failedBlocking),
        String(cell.wouldBlock.length),
        last ? `${last.runId} ${last.createdAt.slice(0, 10)}` : "",
      ]);
    }
  }
  const widths = (rows[0] as string[]).map((_, column) =>
    Math.max(...rows.map((row) => (row[column] as string).length)),
  );
  const lines = rows.map((row) =>
    row
      .map((text, column) => text.padEnd(widths[column] as number))
      .join("  ")
      .trimEnd(),
  );
  return `${report.organization}, runs of the last ${report.windowDays} days (${report.requests} requests)\n${lines.join("\n")}\n`;
}

const escaped = (text: string) => text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);

/** A page that needs nothing else: the matrix, each cell coloured by its worst result, failing runs linked. */
export function htmlOf(report: ImpactReport): string {
  const runLink = (workspace: string, runId: string) =>
    `${report.address}/app/${encodeURIComponent(report.organization)}/workspaces/${encodeURIComponent(workspace)}/runs/${encodeURIComponent(runId)}`;
  const header = report.policies.map((policy) => `<th scope="col">${escaped(policy)}</th>`).join("");
  const rows = report.workspaces
    .map((workspace) => {
      const cells = report.policies
        .map((policy) => {
          const cell = workspace.cells[policy];
          if (!cell) return '<td class="none" data-result="none">–</td>';
          const result =
            cell.failedBlocking > 0
              ? "blocked"
              : cell.failedAdvisory > 0
                ? "advisory"
                : cell.errored > 0
                  ? "errored"
                  : "passed";
          const links = cell.failures
            .map(
              (failure) => `<a href="${escaped(runLink(workspace.name, failure.runId))}">${escaped(failure.runId)}</a>`,
            )
            .join(" ");
          const counts = `${cell.passed} passed, ${cell.failedAdvisory + cell.failedBlocking} failed`;
          return `<td class="${result}" data-result="${result}" data-would-block="${cell.wouldBlock.length}">${counts}${links ? `<br>${links}` : ""}</td>`;
        })
        .join("");
      return `<tr><th scope="row">${escaped(workspace.name)}</th>${cells}</tr>`;
    })
    .join("\n");
  const notRead = report.notRead.map((line) => `<li>${escaped(line)}</li>`).join("");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Policy results of ${escaped(report.organization)}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2rem; }
table { border-collapse: collapse; } th, td { border: 1px solid #ccc; padding: .4rem .6rem; vertical-align: top; }
td.passed { background: #d9f2d9; } td.advisory { background: #ffe8b3; } td.blocked { background: #f5b7b1; }
td.errored { background: #e0d4f5; } td.none { color: #999; text-align: center; }
</style></head>
<body><h1>Policy results of ${escaped(report.organization)}</h1>
<p>Runs of the last ${report.windowDays} days, read with ${report.requests} requests. Green: passed; amber: failed at
advisory (the run went on); red: failed at a level that stopped it; purple: errored.</p>
<table><thead><tr><th scope="col">workspace</th>${header}</tr></thead>
<tbody>
${rows}
</tbody></table>
${notRead ? `<h2>Not read</h2><ul>${notRead}</ul>` : ""}
</body></html>
`;
}
