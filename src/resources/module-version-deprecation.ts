import type * as pulumi from "@pulumi/pulumi";
import type { TfeClient } from "../client/client";
import { TfeApiError } from "../client/errors";
import type { ModuleVersionAddress } from "../client/module-versions";
import { isWebLink, semanticVersionPattern } from "../contract/limits";
import { argumentFailures, outputSlots, propertiesThat, propertyTable } from "./property-table";
import {
  ContextProvider,
  changedProperties,
  checkOrganization,
  checkPathValue,
  defaultOrganization,
  isUnknown,
} from "./provider-context";
import { ShimResource } from "./shim";

export interface ModuleVersionDeprecationArgs {
  /** Organization that owns the private module; default: stack config `tfe:organization`, then `TFE_ORGANIZATION`. */
  organization?: pulumi.Input<string>;
  /** The module's name in the private registry, e.g. `vpc`. */
  moduleName: pulumi.Input<string>;
  /** The provider the module is for, e.g. `aws`. */
  moduleProvider: pulumi.Input<string>;
  /** The version to deprecate, e.g. `1.2.0`. */
  version: pulumi.Input<string>;
  /** Why the version is deprecated; shown on the registry page and in the run output of its users. */
  reason: pulumi.Input<string>;
  /** Where to read more, e.g. an upgrade guide. */
  link?: pulumi.Input<string>;
}

/** The inputs as the provider holds them once checked. */
export interface ModuleVersionDeprecationInputs {
  organization: string;
  moduleName: string;
  moduleProvider: string;
  version: string;
  reason: string;
  link: string | null;
}

export interface ModuleVersionDeprecationOutputs extends ModuleVersionDeprecationInputs {
  deprecationId: string | null;
  /** The reason as the service holds it: the one sent, plus the text the service appends. */
  effectiveReason: string;
}

/** Every property of a deprecation, once: the version's address replaces, the reason and link update. */
const deprecationProperties = propertyTable<ModuleVersionDeprecationArgs>()({
  organization: { argument: "string", change: "replaces", output: true },
  moduleName: { argument: "string", change: "replaces", output: true },
  moduleProvider: { argument: "string", change: "replaces", output: true },
  version: { argument: "string", change: "replaces", output: true },
  reason: { argument: "string", change: "updates", output: true },
  link: { argument: "string", change: "updates", output: true },
  deprecationId: { change: "none", output: true },
  effectiveReason: { change: "none", output: true },
});
const replacingProperties = propertiesThat(deprecationProperties, "replaces");
const updatableProperties = propertiesThat(deprecationProperties, "updates");

export function deprecationId(address: ModuleVersionAddress): string {
  return `${address.organization}/${address.name}/${address.provider}/${address.version}`;
}

function parseId(id: string): ModuleVersionAddress {
  const parts = id.split("/");
  const [organization, name, provider, version] = parts;
  if (parts.length !== 4 || !organization || !name || !provider || !version) {
    throw new Error(
      `"${id}" is not a module version deprecation id: use <organization>/<moduleName>/<moduleProvider>/<version>`,
    );
  }
  return { organization, name, provider, version };
}

function addressOf(inputs: ModuleVersionDeprecationInputs): ModuleVersionAddress {
  return {
    organization: inputs.organization,
    name: inputs.moduleName,
    provider: inputs.moduleProvider,
    version: inputs.version,
  };
}

/**
 * The service answers 404 for three different reasons it does not tell apart; the message names each, with its
 * fix. Other failures (500/503 after the client's retries included) keep the client's description.
 */
function describeFailure(action: string, address: ModuleVersionAddress, error: unknown): Error {
  const subject = `${action} module version ${deprecationId(address)}`;
  if (error instanceof TfeApiError && error.status === 404) {
    return new Error(
      `${subject} failed: the service answered 404, which means one of: ` +
        `the version does not exist in the private registry of "${address.organization}" (check moduleName, ` +
        "moduleProvider and version); the token is not authorized for the organization or its modules (check " +
        `tfe:token, TFE_TOKEN or the credentials file); or "${address.organization}" lacks the Plus edition, ` +
        "which module deprecation needs",
    );
  }
  if (error instanceof TfeApiError && error.status >= 500) {
    return new Error(
      `${subject} failed: the service kept failing (${error.status} after ${error.attempts} attempt` +
        `${error.attempts === 1 ? "" : "s"}); the change is not known to be saved, so run the operation again: ` +
        error.message,
    );
  }
  return new Error(`${subject} failed: ${(error as Error).message}`, { cause: error });
}

/**
 * Whether the service shows that `address` is not deprecated, even though it answered 404 for the version: the
 * version is no longer in its module's list of versions. A module that cannot be read at all proves nothing,
 * because 404 is also the answer to a token without access.
 */
async function isProvablyGone(client: TfeClient, address: ModuleVersionAddress): Promise<boolean> {
  try {
    const versions = await client.registry.listModuleVersions({
      namespace: address.organization,
      name: address.name,
      provider: address.provider,
    });
    return !versions.some((entry) => entry.version === address.version);
  } catch (error) {
    if (error instanceof TfeApiError && error.status === 404) return false;
    throw error;
  }
}

/**
 * The reason to keep in outputs. The service appends its own text (e.g. " Applies will be blocked in 15 days."),
 * so a held reason that starts with the one sent is what we sent, not drift. The price: an outside edit that only
 * appends words is not seen either. The comparison is with the sent reason trimmed, as the client sends it: a
 * reason ending in a newline (a YAML block, a template literal) would otherwise show as drift on every refresh.
 */
function reasonAsSent(sent: string | undefined, held: string): string {
  return sent !== undefined && held.startsWith(sent.trim()) ? sent : held;
}

/** Pulumi's provider for `ModuleVersionDeprecation`, run in the engine's dynamic-provider process through the shim. */
export class ModuleVersionDeprecationProvider extends ContextProvider implements pulumi.dynamic.ResourceProvider {
  /** Every input rule, before any request; unknown values (preview) pass. */
  async check(_olds: Record<string, unknown>, news: Record<string, unknown>): Promise<pulumi.dynamic.CheckResult> {
    const failures = argumentFailures(deprecationProperties, news, "ModuleVersionDeprecation");
    if (failures.length > 0) return { inputs: news, failures };
    checkOrganization(failures, news.organization);
    checkPathValue(failures, "moduleName", news.moduleName, 'use the module\'s name in the registry, e.g. "vpc"');
    checkPathValue(failures, "moduleProvider", news.moduleProvider, 'use the module\'s provider, e.g. "aws"');

    const { version, reason, link } = news;
    if (!isUnknown(version) && (typeof version !== "string" || !semanticVersionPattern.test(version))) {
      failures.push({
        property: "version",
        reason: `version ${JSON.stringify(version)} is not a version string: use e.g. "1.2.3" or "1.2.3-rc.1"`,
      });
    }
    if (!isUnknown(reason) && (typeof reason !== "string" || reason.trim() === "")) {
      failures.push({ property: "reason", reason: "reason is required: say why the version is deprecated" });
    }
    if (link !== undefined && link !== null && !isUnknown(link) && (typeof link !== "string" || !isWebLink(link))) {
      failures.push({
        property: "link",
        reason: `link ${JSON.stringify(link)} is not a web address: use e.g. "https://example.com/upgrade", or leave it out`,
      });
    }
    return { inputs: { ...news, link: link ?? null }, failures };
  }

  async diff(
    _id: string,
    olds: ModuleVersionDeprecationOutputs,
    news: ModuleVersionDeprecationInputs,
  ): Promise<pulumi.dynamic.DiffResult> {
    const replaces = changedProperties(olds, news, replacingProperties);
    const updates = changedProperties(olds, news, updatableProperties);
    // A replacement deprecates another version, so the new one can be deprecated before the old one is reinstated.
    return { changes: replaces.length + updates.length > 0, replaces, deleteBeforeReplace: false };
  }

  async create(inputs: ModuleVersionDeprecationInputs): Promise<pulumi.dynamic.CreateResult> {
    const address = addressOf(inputs);
    const held = await this.heldDeprecation(address);
    // Already deprecated with this reason and link: taken over as it is. Deprecating again would be a write that
    // changes nothing the program says, and the service would record a new deprecation.
    if (held?.reason.startsWith(inputs.reason.trim()) && (held.link || null) === inputs.link) {
      return { id: deprecationId(address), outs: { ...inputs, deprecationId: null, effectiveReason: held.reason } };
    }
    return { id: deprecationId(address), outs: await this.deprecate(inputs) };
  }

  /** The version's deprecation, or null; a failed read leaves the deprecate request to report the cause. */
  private async heldDeprecation(
    address: ModuleVersionAddress,
  ): Promise<{ reason: string; link: string | null } | null> {
    const record = await this.context.client.registry
      .getModuleVersion({
        namespace: address.organization,
        name: address.name,
        provider: address.provider,
        version: address.version,
      })
      .catch(() => null);
    return record?.deprecation ?? null;
  }

  async update(
    _id: string,
    _olds: ModuleVersionDeprecationOutputs,
    news: ModuleVersionDeprecationInputs,
  ): Promise<pulumi.dynamic.UpdateResult> {
    return { outs: await this.deprecate(news) };
  }

  /** The deprecate PATCH sets the whole deprecation, so creating and changing it are the same request. */
  private async deprecate(inputs: ModuleVersionDeprecationInputs): Promise<ModuleVersionDeprecationOutputs> {
    const address = addressOf(inputs);
    try {
      const deprecation = await this.context.client.moduleVersions.deprecate({
        ...address,
        reason: inputs.reason,
        ...(inputs.link !== null ? { link: inputs.link } : {}),
      });
      return {
        ...inputs,
        deprecationId: deprecation.deprecationId,
        effectiveReason: deprecation.reason ?? inputs.reason,
      };
    } catch (error) {
      throw describeFailure("deprecating", address, error);
    }
  }

  async read(id: string, props: Partial<ModuleVersionDeprecationOutputs>): Promise<pulumi.dynamic.ReadResult> {
    const client = this.context.client;
    const address = parseId(id);
    let deprecation: { reason: string; link: string | null } | null;
    try {
      const record = await client.registry.getModuleVersion({
        namespace: address.organization,
        name: address.name,
        provider: address.provider,
        version: address.version,
      });
      deprecation = record.deprecation;
    } catch (error) {
      if (error instanceof TfeApiError && error.status === 404 && (await isProvablyGone(client, address))) return {};
      throw describeFailure("reading", address, error);
    }
    // Reinstated outside Pulumi: an empty result drops the resource from state.
    if (deprecation === null) return {};
    const outs: ModuleVersionDeprecationOutputs = {
      organization: address.organization,
      moduleName: address.name,
      moduleProvider: address.provider,
      version: address.version,
      reason: reasonAsSent(props.reason, deprecation.reason),
      link: deprecation.link,
      deprecationId: props.deprecationId ?? null,
      effectiveReason: deprecation.reason,
    };
    const { deprecationId: _deprecationId, effectiveReason: _effectiveReason, ...inputs } = outs;
    return { id, props: outs, inputs };
  }

  /** Reinstates the version fully. A version that is not deprecated any more, or is gone, is what delete wants. */
  async delete(id: string): Promise<void> {
    const client = this.context.client;
    const address = parseId(id);
    try {
      await client.moduleVersions.undeprecate(address);
    } catch (error) {
      // A 404 can also mean "no access" or "no Plus edition", where the version would silently stay deprecated:
      // succeed only when the registry shows the version gone, and otherwise say all three causes.
      if (error instanceof TfeApiError && error.status === 404 && (await isProvablyGone(client, address))) return;
      throw describeFailure("reinstating", address, error);
    }
  }
}

/**
 * The deprecation of one version of a private-registry module: the version is deprecated while the resource
 * exists, and fully reinstated when it is destroyed. Type token `pulumi-nodejs:dynamic/tfe:ModuleVersionDeprecation`.
 */
export class ModuleVersionDeprecation extends ShimResource {
  declare readonly organization: pulumi.Output<string>;
  declare readonly moduleName: pulumi.Output<string>;
  declare readonly moduleProvider: pulumi.Output<string>;
  declare readonly version: pulumi.Output<string>;
  /** The reason as given; see {@link effectiveReason} for the text the service shows. */
  declare readonly reason: pulumi.Output<string>;
  declare readonly link: pulumi.Output<string | null>;
  /** The service's id of the deprecation record (a short numeric string). */
  declare readonly deprecationId: pulumi.Output<string | null>;
  /** The reason as the service holds it, with the text it appends (e.g. " Applies will be blocked in 15 days."). */
  declare readonly effectiveReason: pulumi.Output<string>;

  constructor(name: string, args: ModuleVersionDeprecationArgs, opts?: pulumi.CustomResourceOptions) {
    const outputs = outputSlots(deprecationProperties);
    const props = opts?.id
      ? outputs
      : { ...outputs, ...args, organization: args.organization ?? defaultOrganization() };
    super("ModuleVersionDeprecation", name, props, opts);
  }

  /** Reads an existing deprecation by id (`<organization>/<moduleName>/<moduleProvider>/<version>`), unmanaged. */
  static get(name: string, id: pulumi.Input<string>, opts?: pulumi.CustomResourceOptions): ModuleVersionDeprecation {
    // With an id the constructor reads the resource and ignores args.
    return new ModuleVersionDeprecation(name, {} as ModuleVersionDeprecationArgs, { ...opts, id });
  }
}
