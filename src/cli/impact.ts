import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { TfeClient } from "../client";
import { resolveClientConfig } from "../client/config";
import { TfeApiError, tokenRefusedByCommand } from "../client/errors";
import { enforcementLevelsByKind, type PolicySetKind, policySetKinds, tfPolicyLevels } from "../contract/policies";
import {
  type Answer,
  answerOf,
  type BlockedRun,
  blocks,
  describeAnswer,
  isResultOf,
  type PolicyAtLevel,
  type ResultsRead,
  readResults,
  tfPolicySpellings,
  workspacesToRead,
  wouldStop,
} from "../impact";
import { impactUsage } from "./impact-usage";

// `tfe-governance impact`: the service's own recent policy results of an organization (or some of its workspaces),
// as a matrix of workspaces by policy: how many runs of the window passed each policy, failed it at a level that
// let them go on, failed it at one that stopped them. With --policy and --level, the runs a raise to that level
// would have stopped, and the one answer preview gives under the resource (src/impact/): blocked, none, or not
// known (and why). A table, --json, or a self-contained HTML page.

interface Cell {
  passed: number;
  /** Failed at a level that let the run go on (advisory). */
  failedAdvisory: number;
  /** Failed at a level that stopped it, or made it ask for an override (overridden ones included). */
  failedBlocking: number;
  /** Of those, the runs a user overrode: they went on. */
  overridden: number;
  errored: number;
  /** The runs that failed or errored it, newest first. */
  failures: { runId: string; createdAt: string; level: string; status: string; overridden: boolean }[];
  /** With --level: the runs the raise would have stopped, and how each went on; null without --level. */
  wouldBlock: { runId: string; createdAt: string; wentOn: string }[] | null;
}

export interface ImpactReport {
  organization: string;
  windowDays: number;
  address: string;
  /** With --policy and --level: the raise asked about, and its answer. */
  raise: {
    policy: string;
    policySet: string | null;
    kind: PolicySetKind;
    level: string;
    verdict: Answer["verdict"];
    /** The sentence preview says under the resource. */
    said: string;
    why: string[];
  } | null;
  /** `policy (set)`, as the columns of the matrix. */
  policies: string[];
  workspaces: {
    id: string;
    name: string;
    runs: number;
    /** Whether every run of the window was read: where not, what it would block there is not known. */
    readWhole: boolean;
    cells: Record<string, Cell>;
  }[];
  notRead: string[];
  requests: number;
}

/** Each kind's levels, from the weakest. */
const levelsOf = (kind: PolicySetKind): readonly string[] =>
  kind === "tfpolicy" ? tfPolicyLevels : [...enforcementLevelsByKind[kind]].reverse();

type ImpactIo = { out: NodeJS.WritableStream; log: (line: string) => void; env?: NodeJS.ProcessEnv };

/** The prefix of every failure of this command, as `tfe-governance import` says its own. */
const failurePrefix = "tfe-governance impact: ";

/** The `impact` subcommand: returns the exit status; a failure is one line on `io.log`, in a command line's words. */
export async function impactMain(args: string[], io: ImpactIo): Promise<number> {
  try {
    return await impact(args, io);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    // node:util's parseArgs says "Unknown option '--x'" and no more: say where the options are.
    const hint =
      (error as { code?: unknown }).code === "ERR_PARSE_ARGS_UNKNOWN_OPTION"
        ? "; see tfe-governance impact --help"
        : "";
    io.log(`${failurePrefix}${message}${hint}`);
    return 2;
  }
}

async function impact(args: string[], io: ImpactIo): Promise<number> {
  const refuse = (line: string) => {
    io.log(`${failurePrefix}${line}`);
    return 2;
  };
  const { values } = parseArgs({
    args,
    options: {
      organization: { type: "string" },
      address: { type: "string" },
      hostname: { type: "string" },
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
    return refuse("impact needs an organization: --organization ORG, or TFE_ORGANIZATION");
  }
  if (values.address !== undefined && values.hostname !== undefined) {
    return refuse("--address and --hostname name the same thing: give one of them");
  }
  for (const [flag, text] of [
    ["--days", values.days],
    ["--budget", values.budget],
  ] as const) {
    if (!/^\d+$/.test(text) || Number(text) === 0) {
      return refuse(`${flag} ${text}: give a whole number above 0`);
    }
  }
  const kind = values.kind as PolicySetKind;
  if (!policySetKinds.includes(kind)) {
    return refuse(`--kind ${values.kind}: use ${policySetKinds.join(", ")}`);
  }
  if (values.level !== undefined && values.policy === undefined) {
    return refuse("--level says what a raise of one policy would block: give --policy NAME too");
  }
  if (values.level !== undefined && !levelsOf(kind).includes(values.level)) {
    return refuse(
      `--level ${values.level} is no level of a ${kind} policy: use ${levelsOf(kind).join(", ")} (--kind names the kind)`,
    );
  }
  if (values.level !== undefined && !blocks(kind, values.level)) {
    return refuse(
      `--level ${values.level} blocks no run: give a level that does (${levelsOf(kind).slice(1).join(", ")})`,
    );
  }
  const settings = {
    ...(values.address !== undefined ? { address: values.address } : {}),
    ...(values.hostname !== undefined ? { hostname: values.hostname } : {}),
    tokenWays: "the TFE_TOKEN environment variable, or the credentials file of terraform login",
    env,
  };
  const { tokenSource } = resolveClientConfig(settings);
  const client = TfeClient.fromConfig(settings);
  try {
    let targets: Awaited<ReturnType<typeof workspacesToRead>>;
    try {
      targets = await workspacesToRead(client, {
        organization,
        ...(values.workspace ? { workspaceIds: values.workspace } : {}),
      });
    } catch (error) {
      // The organization's own list answered 404: the organization is what to check, as this command takes it.
      if (error instanceof TfeApiError && error.status === 404 && /organization "/.test(error.message)) {
        return refuse(`${error.message}: check --organization (or TFE_ORGANIZATION) and the token`);
      }
      throw error;
    }
    const read = await readResults(
      client,
      targets,
      { windowDays: Number(values.days), requestBudget: Number(values.budget) },
      "raise --budget to read them",
    );
    const report = reportOf(read, {
      organization,
      address: client.address,
      windowDays: Number(values.days),
      policy: values.policy,
      policySet: values["policy-set"],
      kind,
      raise:
        values.level === undefined || values.policy === undefined
          ? undefined
          : {
              kind,
              policy: {
                name: values.policy,
                sets: values["policy-set"] === undefined ? [] : [values["policy-set"]],
                level: values.level,
                // A Terraform policy block, named by its address, comes back under any of its spellings.
                ...(kind === "tfpolicy" ? { spellings: tfPolicySpellings(values.policy) } : {}),
              },
            },
    });
    if (values.html !== undefined) {
      writeFileSync(values.html, htmlOf(report));
      io.log(`wrote ${values.html}`);
    }
    io.out.write(values.json ? `${JSON.stringify(report, null, 2)}\n` : tableOf(report));
    for (const line of report.notRead) io.log(`not read: ${line}`);
    return 0;
  } catch (error) {
    if (error instanceof TfeApiError && error.status === 401)
      return refuse(tokenRefusedByCommand(error, client.address, tokenSource));
    throw error;
  } finally {
    await client.close();
  }
}

/** The matrix of what was read, the columns filtered by --policy and --policy-set, and the raise's answer. */
export function reportOf(
  read: ResultsRead,
  options: {
    organization: string;
    address: string;
    windowDays: number;
    policy?: string | undefined;
    policySet?: string | undefined;
    /** The kind --policy names: a Terraform policy's block matches each of its spellings. */
    kind?: PolicySetKind;
    raise?: { kind: PolicySetKind; policy: PolicyAtLevel } | undefined;
  },
): ImpactReport {
  const columns = new Set<string>();
  const names =
    options.policy === undefined
      ? undefined
      : options.kind === "tfpolicy"
        ? tfPolicySpellings(options.policy)
        : [options.policy];
  const named = (result: { policy: string; declarations?: string[] }) =>
    names === undefined ||
    names.includes(result.policy) ||
    (result.declarations ?? []).some((declaration) => names.includes(declaration));
  const raise = options.raise;
  const blocked: BlockedRun[] = [];
  let [evaluated, unevaluated, readWhole] = [0, 0, 0];
  const workspaces = read.workspaces.map((workspace) => {
    const cells: Record<string, Cell> = {};
    let evaluating = 0;
    for (const run of workspace.runs) {
      let evaluatedHere = false;
      for (const result of run.results) {
        if (!named(result)) continue;
        if (options.policySet !== undefined && result.policySet !== options.policySet) continue;
        const column = `${result.policy} (${result.policySet})`;
        columns.add(column);
        cells[column] ??= {
          passed: 0,
          failedAdvisory: 0,
          failedBlocking: 0,
          overridden: 0,
          errored: 0,
          failures: [],
          wouldBlock: raise ? [] : null,
        };
        const cell = cells[column];
        if (result.status === "passed") cell.passed++;
        else if (result.status === "errored") cell.errored++;
        else if (result.status === "failed") {
          if (result.level === "advisory") cell.failedAdvisory++;
          else cell.failedBlocking++;
          if (result.overridden && result.level !== "advisory") cell.overridden++;
        }
        if (result.status !== "passed") {
          cell.failures.push({
            runId: run.id,
            createdAt: run.createdAt.toISOString(),
            level: result.level,
            status: result.status,
            overridden: result.overridden,
          });
        }
        if (!raise || !isResultOf(result, raise.policy, raise.kind)) continue;
        evaluatedHere = true;
        const wentOn = wouldStop(result, raise.policy, raise.kind);
        if (!wentOn) continue;
        cell.wouldBlock?.push({ runId: run.id, createdAt: run.createdAt.toISOString(), wentOn });
        if (!blocked.some((known) => known.runId === run.id)) {
          blocked.push({
            workspaceId: workspace.workspaceId,
            workspaceName: workspace.workspaceName,
            runId: run.id,
            createdAt: run.createdAt,
            policy: result.policy,
            wentOn,
          });
        }
      }
      if (evaluatedHere) evaluating++;
    }
    evaluated += evaluating;
    if (workspace.complete) {
      readWhole++;
      if (workspace.runs.length > 0 && evaluating === 0) unevaluated++;
    }
    return {
      id: workspace.workspaceId,
      name: workspace.workspaceName,
      runs: workspace.runs.length,
      readWhole: workspace.complete,
      cells,
    };
  });
  let raised: ImpactReport["raise"] = null;
  if (raise) {
    const answer = answerOf({
      windowDays: options.windowDays,
      policies: 1,
      reached: read.targets,
      readWhole,
      unevaluated,
      blocked,
      evaluated,
      notRead: read.notRead,
      requests: read.requests,
    });
    raised = {
      policy: raise.policy.name,
      policySet: raise.policy.sets[0] ?? null,
      kind: raise.kind,
      level: raise.policy.level,
      verdict: answer.verdict,
      said: describeAnswer(`policy "${raise.policy.name}" at ${raise.policy.level}`, answer),
      why: answer.verdict === "not known" ? answer.why : [],
    };
  }
  return {
    organization: options.organization,
    windowDays: options.windowDays,
    address: options.address,
    raise: raised,
    policies: [...columns].sort(),
    workspaces,
    notRead: read.notRead,
    requests: read.requests,
  };
}

/** What a cell says a raise would block: a number, `not known` where the workspace was not read whole, or `–`. */
function wouldBlockText(cell: Cell, readWhole: boolean): string {
  if (cell.wouldBlock === null) return "–";
  if (!readWhole && cell.wouldBlock.length === 0) return "not known";
  return String(cell.wouldBlock.length);
}

export function tableOf(report: ImpactReport): string {
  const wouldBlockAt = report.raise ? `would block at ${report.raise.level}` : "would block";
  const rows = [
    ["workspace", "policy (set)", "passed", "failed, advisory", "failed, blocking", wouldBlockAt, "last failure"],
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
        wouldBlockText(cell, workspace.readWhole),
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
  const answer = report.raise ? `${report.raise.said}\n` : "";
  return `${report.organization}, runs of the last ${report.windowDays} days (${report.requests} requests)\n${lines.join("\n")}\n${answer}`;
}

const escaped = (text: string) => text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);

/**
 * A page that needs nothing else: the matrix, each cell coloured by its worst result, each failing run linked with
 * its date, and with --level a column of what the raise would block in each workspace and the answer above it.
 */
export function htmlOf(report: ImpactReport): string {
  const runLink = (workspace: string, runId: string) =>
    `${report.address}/app/${encodeURIComponent(report.organization)}/workspaces/${encodeURIComponent(workspace)}/runs/${encodeURIComponent(runId)}`;
  const raise = report.raise;
  const header =
    report.policies.map((policy) => `<th scope="col">${escaped(policy)}</th>`).join("") +
    (raise ? `<th scope="col">would block at ${escaped(raise.level)}</th>` : "");
  const rows = report.workspaces
    .map((workspace) => {
      const cells = report.policies
        .map((policy) => {
          const cell = workspace.cells[policy];
          if (!cell) return '<td class="none" data-result="none">–</td>';
          const result =
            cell.failedBlocking > cell.overridden
              ? "blocked"
              : cell.failedAdvisory > 0 || cell.overridden > 0
                ? "advisory"
                : cell.errored > 0
                  ? "errored"
                  : "passed";
          const links = cell.failures
            .map(
              (failure) =>
                `<a href="${escaped(runLink(workspace.name, failure.runId))}">${escaped(failure.runId)}</a> ` +
                `<time datetime="${escaped(failure.createdAt)}">${escaped(failure.createdAt.slice(0, 10))}</time>` +
                (failure.overridden ? " (overridden)" : ""),
            )
            .join("<br>");
          const counts = `${cell.passed} passed, ${cell.failedAdvisory + cell.failedBlocking} failed${cell.errored > 0 ? `, ${cell.errored} errored` : ""}`;
          return `<td class="${result}" data-result="${result}">${counts}${links ? `<br>${links}` : ""}</td>`;
        })
        .join("");
      const blocked = raise
        ? (() => {
            const inWorkspace = Object.values(workspace.cells).flatMap((cell) => cell.wouldBlock ?? []);
            const text = !workspace.readWhole && inWorkspace.length === 0 ? "not known" : String(inWorkspace.length);
            return `<td class="would-block" data-would-block="${escaped(text)}">${escaped(text)}</td>`;
          })()
        : "";
      return `<tr><th scope="row">${escaped(workspace.name)}</th>${cells}${blocked}</tr>`;
    })
    .join("\n");
  const notRead = report.notRead.map((line) => `<li>${escaped(line)}</li>`).join("");
  const answer = raise ? `<p class="answer" data-verdict="${escaped(raise.verdict)}">${escaped(raise.said)}</p>\n` : "";
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Policy results of ${escaped(report.organization)}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2rem; }
table { border-collapse: collapse; } th, td { border: 1px solid #ccc; padding: .4rem .6rem; vertical-align: top; }
td.passed { background: #d9f2d9; } td.advisory { background: #ffe8b3; } td.blocked { background: #f5b7b1; }
td.errored { background: #e0d4f5; } td.none { color: #999; text-align: center; } td.would-block { text-align: right; }
p.answer { font-weight: 600; }
</style></head>
<body><h1>Policy results of ${escaped(report.organization)}</h1>
<p>Runs of the last ${report.windowDays} days, read with ${report.requests} requests. Green: passed; amber: failed at
advisory, or overridden (the run went on); red: failed at a level that stopped it; purple: errored.</p>
${answer}<table><thead><tr><th scope="col">workspace</th>${header}</tr></thead>
<tbody>
${rows}
</tbody></table>
${notRead ? `<h2>Not read</h2><ul>${notRead}</ul>` : ""}
</body></html>
`;
}
