import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { TfeClient } from "../client/client";
import { defaultAddress, resolveClientConfig } from "../client/config";
import { TfeApiError, tfeCause, tokenRefusedByCommand } from "../client/errors";
import type { RegistryModuleAddress } from "../client/registry";
import { type PolicySetKind, policySetKinds } from "../contract/policies";
import { collectDeprecations, collectPolicies, collectPolicySets, type ProgressReporter } from "./collect";
import { installedLibrarySpec, specIsDirectory, vendoredTarball } from "./library-spec";
import { type ImportSource, importedCounts, type Language, type Layout, languages, layouts, plural } from "./model";
import { planProject } from "./plan";
import { importUsage } from "./usage";
import { ChangedFilesError, writeProject } from "./write";

/** Bad flags or values: the message names the flag and the fix. */
export class UsageError extends Error {}

export interface ImportCommand {
  organization: string;
  out: string;
  search: string | undefined;
  kind: PolicySetKind | undefined;
  policySetIds: string[];
  modules: RegistryModuleAddress[];
  layout: Layout;
  /** The program's language: TypeScript on this library, YAML or Python on the plugin for other languages. */
  language: Language;
  force: boolean;
  address: string | undefined;
  hostname: string | undefined;
  /** npm's spec of this library for the project's package.json; by default where this copy was installed from. */
  librarySpec: string | undefined;
  /** Names or ids of objects to leave out: policies, policy sets, deprecations (`name/provider/version`). */
  exclude: string[];
  /** The Pulumi project's name; default `tfe-governance-<organization>-<layout>` (and `-<language>` but TypeScript). */
  project: string | undefined;
}

function parseModule(text: string, organization: string): RegistryModuleAddress {
  const parts = text.split("/");
  const [namespace, name, provider] = parts;
  if (parts.length !== 3 || !namespace || !name || !provider) {
    throw new UsageError(
      `--module "${text}" is not NAMESPACE/NAME/PROVIDER: use e.g. --module ${organization}/vpc/aws`,
    );
  }
  // Deprecation is a feature of the organization's private registry, whose namespace is the organization.
  if (namespace !== organization) {
    throw new UsageError(
      `--module "${text}": the namespace must be the organization "${organization}" (private-registry modules only): ` +
        `use --module ${organization}/${name}/${provider}`,
    );
  }
  return { namespace, name, provider };
}

/** Reads `import`'s flags; `null` when help was asked for. */
export function parseImportArguments(args: string[], env: NodeJS.ProcessEnv): ImportCommand | null {
  let values: ReturnType<typeof parse>["values"];
  try {
    values = parse(args).values;
  } catch (error) {
    throw new UsageError(`${(error as Error).message}; see tfe-governance import --help`);
  }
  if (values.help) return null;
  const organization = values.organization ?? env.TFE_ORGANIZATION;
  if (!organization) throw new UsageError("--organization is required (or set TFE_ORGANIZATION)");
  if (!values.out) throw new UsageError("--out is required: the directory to write the project into");
  const kind = values.kind;
  if (kind !== undefined && !policySetKinds.includes(kind as PolicySetKind)) {
    throw new UsageError(`--kind "${kind}" is not a policy kind: use sentinel, opa or tfpolicy`);
  }
  const layout = values.layout as Layout;
  if (!layouts.includes(layout)) throw new UsageError(`--layout "${layout}" is not a layout: use program or folder`);
  const language = values.language as Language;
  if (!languages.includes(language)) {
    throw new UsageError(`--language "${language}" is not a language the import writes: use ${languages.join(", ")}`);
  }
  const modules = (values.module ?? []).map((text) => parseModule(text, organization));
  if (values.address !== undefined && values.hostname !== undefined) {
    throw new UsageError("--address and --hostname name the same thing: give one of them");
  }
  return {
    organization,
    out: values.out,
    search: values.search,
    kind: kind as PolicySetKind | undefined,
    policySetIds: values["policy-set"] ?? [],
    modules,
    layout,
    language,
    force: values.force,
    address: values.address,
    hostname: values.hostname,
    librarySpec: values.library,
    exclude: values.exclude ?? [],
    project: checkedProjectName(values.project),
  };
}

/** A name Pulumi takes for a project: letters, digits, `-`, `_` and `.`. */
function checkedProjectName(name: string | undefined): string | undefined {
  if (name !== undefined && !/^[A-Za-z0-9_.-]+$/.test(name)) {
    throw new UsageError(`--project "${name}" is not a Pulumi project name: use letters, digits, '-', '_' and '.'`);
  }
  return name;
}

function parse(args: string[]) {
  return parseArgs({
    args,
    options: {
      organization: { type: "string" },
      out: { type: "string" },
      search: { type: "string" },
      kind: { type: "string" },
      "policy-set": { type: "string", multiple: true },
      module: { type: "string", multiple: true },
      layout: { type: "string", default: "program" },
      language: { type: "string", default: "typescript" },
      force: { type: "boolean", default: false },
      address: { type: "string" },
      hostname: { type: "string" },
      library: { type: "string" },
      exclude: { type: "string", multiple: true },
      project: { type: "string" },
      help: { type: "boolean", default: false },
    },
    strict: true,
    allowPositionals: false,
  });
}

/**
 * Progress on a stream: one line rewritten in place on a terminal; otherwise (CI logs, pipes) a line every tenth
 * of a step, so a long organization shows it is moving without flooding the log.
 */
export class StreamProgress implements ProgressReporter {
  constructor(private readonly stream: NodeJS.WritableStream & { isTTY?: boolean }) {}

  advance(step: string, done: number, total?: number): void {
    const text = `${step}: ${done}${total === undefined ? "" : `/${total}`}`;
    if (this.stream.isTTY) {
      this.stream.write(`\r\x1b[K${text}`);
      return;
    }
    const every = total === undefined ? 100 : Math.max(1, Math.ceil(total / 10));
    if (done % every === 0 && done !== total) this.stream.write(`${text}\n`);
  }

  finish(step: string, summary: string): void {
    this.stream.write(`${this.stream.isTTY ? "\r\x1b[K" : ""}${step}: ${summary}\n`);
  }
}

export interface ImportIo {
  env: NodeJS.ProcessEnv;
  progress: ProgressReporter;
  /** Where the summary goes. */
  out: NodeJS.WritableStream;
  log: (line: string) => void;
}

/**
 * The default project name: one per organization, layout and language, so that two imports (of two organizations,
 * of both layouts, in two languages) on one backend never select each other's stacks. TypeScript's has no suffix,
 * as before there were other languages.
 */
export function defaultProjectName(organization: string, layout: Layout, language: Language = "typescript"): string {
  const suffix = language === "typescript" ? "" : `-${language}`;
  return `tfe-governance-${organization}-${layout}${suffix}`.replace(/[^A-Za-z0-9_.-]/g, "-");
}

/**
 * The source without what `--exclude` names (a policy's or a set's name or id, a deprecation's
 * `name/provider/version`), each listed with the reason; an `--exclude` that names nothing fails, as a typo would.
 */
function excluding(exclude: readonly string[], source: ImportSource): ImportSource {
  if (exclude.length === 0) return source;
  const used = new Set<string>();
  const matches = (...keys: string[]) => {
    const hit = keys.find((key) => exclude.includes(key));
    if (hit !== undefined) used.add(hit);
    return hit !== undefined;
  };
  const excluded: ImportSource["excluded"] = [];
  const reason = "left out by --exclude: the project neither declares nor touches it";
  const policies = source.policies.filter((policy) => {
    if (!matches(policy.name, policy.id)) return true;
    excluded.push({ name: `policy ${policy.name}`, reason });
    return false;
  });
  const policySets = source.policySets.filter((policySet) => {
    if (!matches(policySet.name, policySet.id)) return true;
    excluded.push({ name: `policy set ${policySet.name}`, reason });
    return false;
  });
  const deprecations = source.deprecations.filter((deprecation) => {
    const address = `${deprecation.moduleName}/${deprecation.moduleProvider}/${deprecation.version}`;
    if (!matches(address, `${deprecation.organization}/${address}`)) return true;
    excluded.push({ name: `deprecation of ${address}`, reason });
    return false;
  });
  const unused = exclude.filter((entry) => !used.has(entry));
  if (unused.length > 0) {
    throw new UsageError(
      `--exclude ${unused.map((entry) => `"${entry}"`).join(", ")} names no policy, policy set or deprecation of ` +
        "the import: give a name or an id (a deprecation as name/provider/version)",
    );
  }
  return { ...source, policies, policySets, deprecations, excluded };
}

/** Runs the import; throws `UsageError`, `ChangedFilesError` or the failure of a request. */
export async function runImport(command: ImportCommand, io: ImportIo): Promise<void> {
  const resolved = resolveClientConfig({
    address: command.address,
    hostname: command.hostname,
    env: io.env,
    tokenWays: "the TFE_TOKEN environment variable (TFE_TOKEN=... npx tfe-governance import ...)",
  });
  io.log(
    `importing organization "${command.organization}" from ${resolved.address} ` +
      `(token from ${resolved.tokenSource}), ${command.layout} layout, ${command.language}`,
  );
  const client = new TfeClient({ address: resolved.address, token: resolved.token });
  let source: Parameters<typeof planProject>[0];
  try {
    const policies = await collectPolicies(
      client,
      {
        organization: command.organization,
        search: command.search,
        kind: command.kind,
        policySetIds: command.policySetIds,
      },
      io.progress,
    );
    const policySets = await collectPolicySets(
      client,
      { organization: command.organization, kind: command.kind, policySetIds: command.policySetIds },
      io.progress,
    );
    const deprecations = await collectDeprecations(client, command.modules, io.progress);
    source = excluding(command.exclude, {
      organization: command.organization,
      address: resolved.address,
      isDefaultAddress: resolved.address === defaultAddress,
      policies,
      policySets,
      deprecations,
      excluded: [],
      projectName: command.project ?? defaultProjectName(command.organization, command.layout, command.language),
    });
  } catch (error) {
    const cause = tfeCause(error);
    if (cause instanceof TfeApiError && cause.status === 401) {
      throw new Error(tokenRefusedByCommand(cause, client.address, resolved.tokenSource));
    }
    throw error;
  } finally {
    await client.close();
  }

  const directory = resolve(command.out);
  // Only a TypeScript project installs this library; the others use the plugin and its SDK.
  const typescript = command.language === "typescript";
  const installedFrom = typescript ? (command.librarySpec ?? installedLibrarySpec(directory)) : "";
  const vendored = typescript ? vendoredTarball(installedFrom, directory) : undefined;
  const librarySpec = vendored?.spec ?? installedFrom;
  const { files, report } = planProject(
    source,
    command.layout,
    { spec: librarySpec, isDirectory: typescript && specIsDirectory(librarySpec, directory) },
    command.language,
  );
  if (vendored) files.set(vendored.path, vendored.bytes);
  const outcome = await writeProject(directory, files, {
    force: command.force,
    onWritten: (done, total) => io.progress.advance("writing files", done, total),
  });
  const fileCounts =
    `${outcome.created.length} created, ${outcome.overwritten.length} overwritten, ` +
    `${outcome.unchanged.length} unchanged, ${outcome.removed.length} removed`;
  io.progress.finish("writing files", fileCounts);

  const lines = [
    `Imported organization "${command.organization}" into ${directory} (${command.layout} layout, ${command.language}):`,
    ...importedCounts(report).map((count) => `  ${count}`),
  ];
  if (command.layout === "folder") lines.push(`  ${plural(report.folders.length, "folder")} under policy-sets/`);
  if (report.skipped.length > 0) {
    lines.push(`  ${plural(report.skipped.length, "object")} left out:`);
    for (const skipped of report.skipped) lines.push(`    ${skipped.name}: ${skipped.reason}`);
  }
  if (report.notes.length > 0) {
    lines.push(`  ${plural(report.notes.length, "adjustment")}:`);
    for (const note of report.notes) lines.push(`    ${note.name}: ${note.note}`);
  }
  lines.push(
    `  files: ${fileCounts}${outcome.removed.length > 0 ? ` (${outcome.removed.join(", ")})` : ""}`,
    `Next: cd ${command.out} && ${nextSteps[command.language]} && pulumi stack init && pulumi up (README.md there says more).`,
  );
  io.out.write(`${lines.join("\n")}\n`);
}

/** What a project of each language installs before its first command (README.md there has each step). */
const nextSteps: Record<Language, string> = {
  typescript: "npm install",
  yaml: "pulumi plugin install resource tfegov <version> -f <tarball>",
  python: "pulumi plugin install resource tfegov <version> -f <tarball> && <a virtualenv with the SDK's wheel>",
};

/** The `import` subcommand: returns the exit status. */
export async function importMain(args: string[], io: ImportIo): Promise<number> {
  try {
    const command = parseImportArguments(args, io.env);
    if (command === null) {
      io.out.write(`${importUsage}\n`);
      return 0;
    }
    await runImport(command, io);
    return 0;
  } catch (error) {
    io.log(`tfe-governance import: ${(error as Error).message}`);
    return error instanceof ChangedFilesError ? 1 : 2;
  }
}
