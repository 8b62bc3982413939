import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs, promisify } from "node:util";
import { TfeClient } from "../client/client";
import { TfeApiError } from "../client/errors";
import { deprecationId } from "../resources/module-version-deprecation";
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

const policyType = "pulumi-nodejs:dynamic/tfe:Policy";
const policySetType = "pulumi-nodejs:dynamic/tfe:PolicySet";
const deprecationType = "pulumi-nodejs:dynamic/tfe:ModuleVersionDeprecation";

export interface PendingCreatesPlan {
  /** URN and id pairs to record in state. */
  imports: { urn: string; id: string }[];
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
      plan.imports.push({ urn: resource.urn, id: found.id });
    }
  }
  return plan;
}

async function leftBehind(resource: PendingCreate, client: TfeClient): Promise<Found | undefined> {
  const inputs = resource.inputs;
  if (resource.type === policyType) {
    const { organization, name } = inputs as { organization: string; name: string };
    const policy = await client.policies.findByName(organization, name);
    return policy && { id: policy.id, differs: await policyDifference(client, policy, inputs) };
  }
  if (resource.type === policySetType) {
    const { organization, name } = inputs as { organization: string; name: string };
    const policySet = await client.policySets.findByName(organization, name);
    if (!policySet) return undefined;
    const sent = {
      kind: inputs.kind ?? "sentinel",
      global: inputs.global === true,
      description: inputs.description ?? null,
      vcs: (inputs.vcsRepo as { identifier?: string } | null | undefined)?.identifier ?? null,
    };
    const held = {
      kind: policySet.kind,
      global: policySet.global,
      description: policySet.description,
      vcs: policySet.vcs?.vcsRepo.identifier ?? null,
    };
    const differs = Object.keys(sent)
      .filter(
        (key) => JSON.stringify(sent[key as keyof typeof sent]) !== JSON.stringify(held[key as keyof typeof held]),
      )
      .map((key) => `${key} is ${JSON.stringify(held[key as keyof typeof held])}`);
    return { id: policySet.id, differs };
  }
  if (resource.type === deprecationType) {
    const { organization, moduleName, moduleProvider, version } = inputs as Record<
      "organization" | "moduleName" | "moduleProvider" | "version",
      string
    >;
    try {
      const record = await client.registry.getModuleVersion({
        namespace: organization,
        name: moduleName,
        provider: moduleProvider,
        version,
      });
      if (record.deprecation === null) return undefined;
    } catch (error) {
      if (error instanceof TfeApiError && error.status === 404) return undefined;
      throw error;
    }
    return { id: deprecationId({ organization, name: moduleName, provider: moduleProvider, version }), differs: [] };
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
      outputs: { ...resource.inputs, ...recoveredOutputs[resource.type] },
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
const recoveredOutputs: Record<string, Record<string, unknown>> = {
  [policyType]: { codeHash: null },
  [policySetType]: {
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
    tokenWays: 'the stack\'s own "pulumi config set --secret tfe:token ..."; the TFE_TOKEN environment variable',
    stackConfig: {
      get: (key) => {
        const value = config[`tfe:${key}`]?.value;
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
