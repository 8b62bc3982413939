import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs, promisify } from "node:util";
import { TfeClient } from "../client/client";
import { TfeApiError } from "../client/errors";
import { deprecationId, isAsDeclared } from "../resources/module-version-deprecation";
import { pendingCreatesUsage } from "./usage";

const run = promisify(execFile);

/** A create that the state lists as under way, as "pulumi stack export" shows it. */
export interface PendingCreate {
  urn: string;
  type: string;
  inputs: Record<string, unknown>;
}

interface ExportedDeployment {
  deployment?: {
    resources?: { urn: string; type: string; id?: string }[];
    pending_operations?: { type: string; resource: PendingCreate }[];
  };
}

type Kind = "Policy" | "PolicySet" | "ModuleVersionDeprecation";

/** This library's resources as state names their types: a Node.js program's dynamic ones, and the plugin's. */
const kinds: Readonly<Record<string, Kind>> = {
  "pulumi-nodejs:dynamic/tfe:Policy": "Policy",
  "pulumi-nodejs:dynamic/tfe:PolicySet": "PolicySet",
  "pulumi-nodejs:dynamic/tfe:ModuleVersionDeprecation": "ModuleVersionDeprecation",
  "tfegov:index:Policy": "Policy",
  "tfegov:index:PolicySet": "PolicySet",
  "tfegov:index:ModuleVersionDeprecation": "ModuleVersionDeprecation",
};

export interface PendingCreatesPlan {
  /** URN and id pairs to record in state, with the resource's type. */
  imports: { urn: string; id: string; type: string }[];
  /** Why each pending create that is not imported is left as it is. */
  notes: string[];
}

/**
 * What each pending create of this library left on the service: a policy of its declared name that no resource of
 * the state holds, a version deprecated. A create that left nothing is cleared by the refresh.
 */
export async function planPendingCreates(exported: ExportedDeployment, client: TfeClient): Promise<PendingCreatesPlan> {
  const deployment = exported.deployment ?? {};
  const held = new Set((deployment.resources ?? []).map((resource) => `${resource.type}\u0000${resource.id ?? ""}`));
  const plan: PendingCreatesPlan = { imports: [], notes: [] };
  const contested = new Set<string>();
  for (const { type, resource } of deployment.pending_operations ?? []) {
    if (type !== "creating") continue;
    const found = await leftBehind(resource, client);
    if (found === undefined) {
      plan.notes.push(`${resource.urn}: nothing on the service; the refresh clears its pending create`);
    } else if (found.differs.length > 0) {
      // Another object of the declared name: someone else's, or changed since. Identical content alone is not
      // ownership either, but what differs surely is not what the killed run made.
      plan.notes.push(
        `${resource.urn}: ${found.id} has the declared name, but ${found.differs.join("; ")}: not what the killed ` +
          "run sent, so it is left alone. If it is yours, declare adoptExisting: true on the resource",
      );
    } else if (held.has(`${resource.type}\u0000${found.id}`)) {
      plan.notes.push(`${resource.urn}: ${found.id} is held by another resource of the state; left pending`);
    } else {
      // Two pending creates of one name (a rename with the old create also pending): one object, one owner.
      const other = plan.imports.find((entry) => entry.id === found.id && entry.type === resource.type);
      if (other) {
        plan.notes.push(
          `${resource.urn}: ${found.id} is also what ${other.urn} left; an object has one owner, so neither is ` +
            "recorded: record the one that owns it with pulumi import, and clear the other's pending create",
        );
        plan.imports = plan.imports.filter((entry) => entry !== other);
        contested.add(found.id);
      } else if (contested.has(found.id)) {
        plan.notes.push(`${resource.urn}: ${found.id} is what other pending creates left too; not recorded`);
      } else {
        plan.imports.push({ urn: resource.urn, id: found.id, type: resource.type });
      }
    }
  }
  return plan;
}

async function leftBehind(resource: PendingCreate, client: TfeClient): Promise<Found | undefined> {
  const inputs = resource.inputs;
  const kind = kinds[resource.type];
  if (kind === "Policy") {
    const { organization, name } = inputs as { organization: string; name: string };
    const policy = await client.policies.findByName(organization, name);
    return policy && { id: policy.id, differs: await policyDifference(client, policy, inputs) };
  }
  if (kind === "PolicySet") {
    const { organization, name } = inputs as { organization: string; name: string };
    const policySet = await client.policySets.findByName(organization, name);
    if (!policySet) return undefined;
    return { id: policySet.id, differs: await policySetDifference(client, policySet, inputs) };
  }
  if (kind === "ModuleVersionDeprecation") {
    const { organization, moduleName, moduleProvider, version } = inputs as Record<
      "organization" | "moduleName" | "moduleProvider" | "version",
      string
    >;
    let deprecation: { reason: string; link: string | null } | null;
    try {
      const record = await client.registry.getModuleVersion({
        namespace: organization,
        name: moduleName,
        provider: moduleProvider,
        version,
      });
      deprecation = record.deprecation;
    } catch (error) {
      if (error instanceof TfeApiError && error.status === 404) return undefined;
      throw error;
    }
    if (deprecation === null) return undefined;
    // A deprecation of that version with another reason or link was made by someone else (in the UI, another stack).
    const sent = {
      reason: typeof inputs.reason === "string" ? inputs.reason : "",
      link: (inputs.link ?? null) as string | null,
    };
    const differs = isAsDeclared(deprecation, sent)
      ? []
      : [`its reason is ${JSON.stringify(deprecation.reason)} and its link ${JSON.stringify(deprecation.link)}`];
    return { id: deprecationId({ organization, name: moduleName, provider: moduleProvider, version }), differs };
  }
  return undefined;
}

/** What the killed run left, and where it differs from what that run sent. */
interface Found {
  id: string;
  differs: string[];
}

/**
 * Where a policy of the declared name differs from what the killed run sent: another level, kind, description or
 * query, or code other than the declared (a policy it made holds no code yet, or the declared code).
 */
async function policyDifference(
  client: TfeClient,
  policy: Awaited<ReturnType<TfeClient["policies"]["read"]>>,
  inputs: Record<string, unknown>,
): Promise<string[]> {
  const differs: string[] = [];
  if (policy.kind !== (inputs.kind ?? "sentinel")) differs.push(`its kind is ${policy.kind}`);
  if (inputs.enforcementLevel !== undefined && policy.enforcementLevel !== inputs.enforcementLevel) {
    differs.push(`its level is ${policy.enforcementLevel}`);
  }
  if ((policy.description ?? null) !== (inputs.description ?? null)) differs.push("its description differs");
  if ((policy.query ?? null) !== (inputs.query ?? null)) differs.push("its query differs");
  if (policy.updatedAt !== null && typeof inputs.codeHash === "string") {
    const code = await client.policies.download(policy.id).catch(() => undefined);
    if (!code || createHash("sha256").update(code).digest("hex") !== inputs.codeHash) {
      differs.push("it holds other code");
    }
  }
  return differs;
}

/**
 * Where a set of the declared name differs from what the killed run sent. Its settings were sent with the create, so
 * each must be as sent; its policies, scope and parameters are added one request after another, so the killed run may
 * have got through only some of them: the set may hold fewer than were sent, never one that was not (that one is
 * someone else's), and a plain parameter holds the value sent.
 */
async function policySetDifference(
  client: TfeClient,
  policySet: Awaited<ReturnType<TfeClient["policySets"]["read"]>>,
  inputs: Record<string, unknown>,
): Promise<string[]> {
  const differs: string[] = [];
  const vcsRepo = (inputs.vcsRepo ?? null) as { identifier?: string; branch?: string | null } | null;
  const settings: [string, unknown, unknown][] = [
    ["kind", inputs.kind ?? "sentinel", policySet.kind],
    ["description", inputs.description ?? null, policySet.description],
    ["global", inputs.global === true, policySet.global],
    ["repository", vcsRepo?.identifier ?? null, policySet.vcs?.vcsRepo.identifier ?? null],
    ["branch", vcsRepo ? vcsRepo.branch || null : null, policySet.vcs ? policySet.vcs.vcsRepo.branch || null : null],
    ["policiesPath", vcsRepo ? inputs.policiesPath || null : null, policySet.vcs?.policiesPath || null],
  ];
  if (typeof inputs.overridable === "boolean")
    settings.push(["overridable", inputs.overridable, policySet.overridable]);
  if (typeof inputs.agentEnabled === "boolean") {
    settings.push(["agentEnabled", inputs.agentEnabled, policySet.agentEnabled]);
  }
  for (const [setting, sent, held] of settings) {
    if (JSON.stringify(sent) !== JSON.stringify(held)) differs.push(`its ${setting} is ${JSON.stringify(held)}`);
  }
  const lists = ["policyIds", "workspaceIds", "projectIds", "excludedWorkspaceIds", "excludedProjectIds"] as const;
  for (const list of lists) {
    const sent = Array.isArray(inputs[list]) ? (inputs[list] as unknown[]) : [];
    const others = policySet[list].filter((id) => !sent.includes(id));
    if (others.length > 0) differs.push(`its ${list} hold ${others.join(", ")}, which the run did not send`);
  }
  const sentParameters = (inputs.parameters ?? {}) as Record<string, { value?: unknown; sensitive?: boolean }>;
  for (const parameter of await client.policySets.listParameters(policySet.id)) {
    const sent = Object.hasOwn(sentParameters, parameter.key) ? sentParameters[parameter.key] : undefined;
    if (!sent) differs.push(`it has parameter ${parameter.key}, which the run did not send`);
    else if (Boolean(sent.sensitive) !== parameter.sensitive) differs.push(`its parameter ${parameter.key} differs`);
    else if (!parameter.sensitive && sent.value !== parameter.value) {
      differs.push(`its parameter ${parameter.key} holds another value`);
    }
  }
  return differs;
}

/**
 * The exported deployment with each create of `plan` recorded as its resource: the id found, the create's inputs as
 * outputs too (they hold the provider the engine loads to read it), and for a policy no code hash, so that an `up`
 * run before the refresh still uploads code the killed run may not have. A policy set likewise records no content
 * hash, version or parameters: the next `up` uploads its folder and writes its parameters, whatever the killed run
 * got to, and no parameter value is copied into the outputs.
 */
export function withImports(exported: ExportedDeployment, plan: PendingCreatesPlan): ExportedDeployment {
  const deployment = exported.deployment ?? {};
  const ids = new Map(plan.imports.map(({ urn, id }) => [urn, id]));
  const pending = deployment.pending_operations ?? [];
  const recorded = pending
    .filter((op) => op.type === "creating" && ids.has(op.resource.urn))
    .map(({ resource }) => ({
      ...resource,
      id: ids.get(resource.urn) as string,
      outputs: { ...resource.inputs, ...recoveredOutputs[kinds[resource.type] as Kind] },
    }));
  return {
    ...exported,
    deployment: {
      ...deployment,
      resources: [...(deployment.resources ?? []), ...recorded],
      pending_operations: pending.filter((op) => !(op.type === "creating" && ids.has(op.resource.urn))),
    },
  };
}

/** What a recovered create's state must not claim: what the killed run may not have finished. */
const recoveredOutputs: Partial<Record<Kind, Record<string, unknown>>> = {
  Policy: { codeHash: null },
  PolicySet: {
    contentHash: null,
    currentVersionId: null,
    folderPolicies: {},
    // A set the killed run made enforced nothing before it: nothing of it can be weakened by the next up.
    policyBlocks: {},
    policiesUnknown: null,
    parameters: {},
    parameterIds: {},
  },
};

export interface PendingCreatesIo {
  out: NodeJS.WritableStream;
  log: (line: string) => void;
  /** Runs `pulumi` with these arguments and returns its standard output. */
  pulumi?: (args: string[]) => Promise<string>;
}

async function runPulumi(args: string[]): Promise<string> {
  return (await run("pulumi", args, { maxBuffer: 512 * 1024 * 1024 })).stdout;
}

export async function pendingCreatesMain(args: string[], io: PendingCreatesIo): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { stack: { type: "string" }, apply: { type: "boolean" }, help: { type: "boolean" } },
    strict: true,
  });
  if (values.help) {
    io.out.write(`${pendingCreatesUsage}\n`);
    return 0;
  }
  const pulumi = io.pulumi ?? runPulumi;
  const stackArgs = values.stack ? ["--stack", values.stack] : [];
  const exported = JSON.parse(await pulumi(["stack", "export", ...stackArgs])) as ExportedDeployment;
  // The program's own settings: the token is decrypted into this process only, and never printed.
  const config = JSON.parse(await pulumi(["config", "--json", "--show-secrets", ...stackArgs])) as Record<
    string,
    { value?: unknown }
  >;
  const client = TfeClient.fromConfig({
    tokenWays:
      'the stack\'s own "pulumi config set --secret tfe:token ..." (tfegov:token for a program of another language); ' +
      "the TFE_TOKEN environment variable",
    // A Node.js program's settings are `tfe:`, those of the plugin's programs (other languages) `tfegov:`.
    stackConfig: {
      get: (key) => {
        const value = config[`tfe:${key}`]?.value ?? config[`tfegov:${key}`]?.value;
        return typeof value === "string" ? value : undefined;
      },
    },
  });
  let plan: PendingCreatesPlan;
  try {
    plan = await planPendingCreates(exported, client);
  } finally {
    await client.close();
  }
  for (const note of plan.notes) io.log(note);
  for (const { urn, id } of plan.imports) io.out.write(`${urn} ${id}\n`);
  if (!values.apply) {
    io.log(`${plan.imports.length} pending creates left something on the service; --apply records them in the state`);
    return 0;
  }
  if (plan.imports.length > 0) {
    const directory = await mkdtemp(join(tmpdir(), "tfe-governance-"));
    try {
      const file = join(directory, "stack.json");
      await writeFile(file, JSON.stringify(withImports(exported, plan)));
      await pulumi(["stack", "import", "--file", file, ...stackArgs]);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  }
  io.log(
    `recorded ${plan.imports.length} pending creates in the state; now run ` +
      '"pulumi refresh --yes --clear-pending-creates", then "pulumi up"',
  );
  return 0;
}
