import type * as pulumi from "@pulumi/pulumi";
import type { TfeClient } from "../../client/client";
import { TfeApiError } from "../../client/errors";
import type { ModuleVersionAddress } from "../../client/module-versions";
import type { Deprecation, RegistryModuleVersionSummary } from "../../client/registry";
import { isWebLink, semanticVersionPattern } from "../../contract/limits";
import { reasonWithoutNotice } from "../../contract/module-versions";
import { segmentProblem } from "../../contract/paths";
import { cliCommand, packageDoc } from "../../process/package-version";
import { argumentFailures, outputSlots, propertiesThat, propertyTable } from "../property-table";
import {
  type CheckFailure,
  ContextProvider,
  changedProperties,
  checkOrganization,
  checkPathValue,
  type DiffWithChanges,
  defaultOrganization,
  isUnknown,
  SharedListings,
} from "../provider-context";
import { ShimResource } from "../shim";

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
  /**
   * Take over the version's deprecation when it is deprecated already, instead of failing; a reason or link other
   * than the declared one is rewritten at once.
   */
  adoptExisting?: pulumi.Input<boolean>;
}

/** The inputs as the provider holds them once checked. */
export interface ModuleVersionDeprecationInputs {
  organization: string;
  moduleName: string;
  moduleProvider: string;
  version: string;
  reason: string;
  link: string | null;
  adoptExisting: boolean;
}

export interface ModuleVersionDeprecationOutputs extends ModuleVersionDeprecationInputs {
  deprecationId: string | null;
  /** The reason as the service holds it: the one sent, plus the text the service appends. */
  effectiveReason: string;
}

/** Every property of a deprecation, once: the version's address replaces, the reason and link update. */
export const deprecationProperties = propertyTable<ModuleVersionDeprecationArgs>()({
  organization: { argument: "string", change: "replaces", output: true },
  moduleName: { argument: "string", change: "replaces", output: true },
  moduleProvider: { argument: "string", change: "replaces", output: true },
  version: { argument: "string", change: "replaces", output: true },
  reason: { argument: "string", change: "updates", output: true },
  link: { argument: "string", change: "updates", output: true },
  adoptExisting: { argument: "boolean", change: "none", output: false },
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

/**
 * Whether the service holds the deprecation state recorded: the version deprecated, with the reason and link state
 * says the service held. Its id names a module version, which another service may have too: only the same
 * deprecation shows that this is the service that holds it (see service-address.ts).
 */
export async function holdsDeprecation(
  client: TfeClient,
  id: string,
  props: Record<string, unknown>,
): Promise<boolean> {
  const { organization, name, provider, version } = parseId(id);
  let held: Awaited<ReturnType<TfeClient["registry"]["getModuleVersion"]>>;
  try {
    held = await client.registry.getModuleVersion({ namespace: organization, name, provider, version });
  } catch (error) {
    if (error instanceof TfeApiError && error.status === 404) return false;
    throw error;
  }
  return (
    held.deprecation !== null &&
    typeof props.effectiveReason === "string" &&
    held.deprecation.reason === props.effectiveReason &&
    (held.deprecation.link || null) === ((props.link as string | null | undefined) || null)
  );
}

function sameIgnoringCase(a: unknown, b: unknown): boolean {
  return typeof a === "string" && typeof b === "string" && a.toLowerCase() === b.toLowerCase();
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
 * The reason to keep in outputs. The service appends its own notice (" Applies will be blocked in 15 days."), so a
 * held reason that is the one sent (trimmed, as the client sends it) followed by that notice is what we sent, not
 * drift. Anything else, a longer text of another team's included, is the service's reason, shown as drift.
 */
function reasonAsSent(sent: string | undefined, held: string): string {
  return sent !== undefined && isReasonSent(sent, held) ? sent : held;
}

function isReasonSent(sent: string, held: string): boolean {
  return held.trim() === sent.trim() || reasonWithoutNotice(held).trim() === sent.trim();
}

/** Whether the version is deprecated exactly as declared: nothing to write. */
export function isAsDeclared(
  held: { reason: string; link: string | null },
  inputs: Pick<ModuleVersionDeprecationInputs, "reason" | "link">,
): boolean {
  return isReasonSent(inputs.reason, held.reason) && (held.link || null) === inputs.link;
}

/** The refusal of a version deprecated already, with every way out: each fits another cause. */
function deprecatedAlreadyMessage(id: string, held: { reason: string }): string {
  return (
    `module version ${id} is already deprecated (reason ${JSON.stringify(held.reason)}), and this resource did not ` +
    "deprecate it. If the resource was renamed or moved into or out of a component, give it its old name with the " +
    "aliases resource option; to manage that deprecation here (its reason and link rewritten as declared), set " +
    `adoptExisting: true; if a killed pulumi up deprecated it, run ${cliCommand()} pending-creates --apply ` +
    `(${packageDoc("troubleshooting.md")}: After a cancelled run)`
  );
}

/** Pulumi's provider for `ModuleVersionDeprecation`, run in the engine's dynamic-provider process through the shim. */
export class ModuleVersionDeprecationProvider extends ContextProvider implements pulumi.dynamic.ResourceProvider {
  private readonly listings = new SharedListings<Deprecation | null>();
  private readonly versionListings = new Map<string, Promise<RegistryModuleVersionSummary[] | undefined>>();

  /** Every input rule, before any request; unknown values (preview) pass. */
  async check(olds: Record<string, unknown>, news: Record<string, unknown>): Promise<pulumi.dynamic.CheckResult> {
    const failures = argumentFailures(deprecationProperties, news, "ModuleVersionDeprecation");
    if (failures.length > 0) return { inputs: news, failures };
    checkOrganization(failures, news.organization);
    checkPathValue(failures, "moduleName", news.moduleName, 'use the module\'s name in the registry, e.g. "vpc"');
    checkPathValue(failures, "moduleProvider", news.moduleProvider, 'use the module\'s provider, e.g. "aws"');
    const provider = news.moduleProvider;
    if (
      !isUnknown(provider) &&
      typeof provider === "string" &&
      !segmentProblem(provider) &&
      !/^[a-z0-9]+$/.test(provider)
    ) {
      failures.push({
        property: "moduleProvider",
        reason:
          `moduleProvider ${JSON.stringify(provider)} is not a registry provider name, which holds only lowercase ` +
          `letters and digits: use ${JSON.stringify(provider.toLowerCase().replace(/[^a-z0-9]/g, ""))}`,
      });
    }

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
    const inputs = { ...news, link: link ?? null, adoptExisting: news.adoptExisting === true };
    await this.checkVersionHeld(failures, olds, inputs);
    return { inputs, failures };
  }

  /**
   * At preview, what `up` would find: the version in the module's list of versions, and not deprecated already
   * (unless adopted). Read only for a version the resource does not hold yet, once per module however many
   * resources name it.
   */
  private async checkVersionHeld(
    failures: CheckFailure[],
    olds: Record<string, unknown>,
    inputs: Record<string, unknown>,
  ): Promise<void> {
    const { organization, moduleName, moduleProvider, version } = inputs;
    const known = [organization, moduleName, moduleProvider, version].every(
      (value) => typeof value === "string" && !isUnknown(value),
    );
    if (failures.length > 0 || !known || isUnknown(inputs.adoptExisting)) return;
    const held = ["organization", "moduleName", "moduleProvider", "version"].every((key) =>
      sameIgnoringCase(olds[key], inputs[key]),
    );
    if (held) return;
    const address = addressOf(inputs as unknown as ModuleVersionDeprecationInputs);
    const versions = await this.moduleVersions(address);
    const module = `${address.organization}/${address.name}/${address.provider}`;
    if (!versions) {
      // The registry answers 404 alike for a module and for an organization this token cannot see: where it cannot
      // list the organization's policies either, the organization is what is wrong, and the failure says so as a
      // policy's does (naming tfe:organization, once per run).
      await this.context.client.policies.list(address.organization, { pageSize: 1 }).catch((error: unknown) => {
        if (error instanceof TfeApiError && error.organizationNotFound !== undefined) throw error;
      });
      failures.push({
        property: "moduleName",
        reason:
          `module ${module} is not in the private registry of "${address.organization}", or this token cannot see ` +
          "it: check moduleName and moduleProvider (and the token, which needs access to the organization's modules)",
      });
      return;
    }
    const entry = versions.find((candidate) => candidate.version === address.version);
    if (!entry) {
      const listed = versions.map((candidate) => candidate.version);
      failures.push({
        property: "version",
        reason:
          `version ${address.version} of module ${module} does not exist` +
          (listed.length > 0 ? `: it has ${listed.slice(-20).join(", ")}` : ": the module has no versions"),
      });
      return;
    }
    if (entry.deprecation && !inputs.adoptExisting) {
      failures.push({ property: "", reason: deprecatedAlreadyMessage(deprecationId(address), entry.deprecation) });
    }
  }

  /** A module's versions as the registry lists them, or undefined where it answers 404; read once per module. */
  private moduleVersions(address: ModuleVersionAddress): Promise<RegistryModuleVersionSummary[] | undefined> {
    const key = [address.organization, address.name, address.provider].join("/").toLowerCase();
    let versions = this.versionListings.get(key);
    if (!versions) {
      versions = this.context.client.registry
        .listModuleVersions({ namespace: address.organization, name: address.name, provider: address.provider })
        .catch((error: unknown) => {
          if (error instanceof TfeApiError && error.status === 404) return undefined;
          this.versionListings.delete(key);
          throw error;
        });
      this.versionListings.set(key, versions);
    }
    return versions;
  }

  async diff(
    _id: string,
    olds: ModuleVersionDeprecationOutputs,
    news: ModuleVersionDeprecationInputs,
  ): Promise<DiffWithChanges> {
    const replaces = changedProperties(olds, news, replacingProperties);
    const updates = changedProperties(olds, news, updatableProperties);
    // A replacement deprecates another version, so the new one can be deprecated before the old one is reinstated;
    // unless only the case changed: the registry's names are not case-sensitive, so both are the same version, and
    // deprecating first then reinstating the old address would leave it reinstated.
    const sameVersion = replaces.every((key) => sameIgnoringCase(olds[key], news[key as keyof typeof news]));
    return {
      changes: replaces.length + updates.length > 0,
      changed: [...replaces, ...updates].map((property) => [property]),
      replaces,
      deleteBeforeReplace: replaces.length > 0 && sameVersion,
    };
  }

  async create(inputs: ModuleVersionDeprecationInputs): Promise<pulumi.dynamic.CreateResult> {
    const address = addressOf(inputs);
    const id = deprecationId(address);
    // Claimed before the first request: two resources of the stack declaring one version would otherwise both read
    // it not deprecated, and both deprecate it.
    if (this.context.claimed.has(id)) {
      throw new Error(`module version ${id} is declared by another resource of this stack too: declare it once`);
    }
    this.context.claimed.set(id, "created");
    try {
      const held = await this.heldDeprecation(address);
      if (held && !inputs.adoptExisting) throw new Error(deprecatedAlreadyMessage(id, held));
      if (held) this.context.claimed.set(id, "adopted");
      // Adopted as it is: deprecating again would be a write that changes nothing the program says, and the
      // service would record a new deprecation.
      if (held && isAsDeclared(held, inputs)) {
        return { id, outs: { ...inputs, deprecationId: null, effectiveReason: held.reason } };
      }
      return { id, outs: await this.deprecate(inputs) };
    } catch (error) {
      this.context.claimed.delete(id);
      throw error;
    }
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
    const deprecation = await this.readDeprecation(client, address);
    // Reinstated outside Pulumi (or the version gone): an empty result drops the resource from state.
    if (deprecation === null) return {};
    const outs: ModuleVersionDeprecationOutputs = {
      organization: address.organization,
      moduleName: address.name,
      moduleProvider: address.provider,
      version: address.version,
      reason: reasonAsSent(props.reason, deprecation.reason),
      link: deprecation.link,
      adoptExisting: props.adoptExisting ?? false,
      deprecationId: props.deprecationId ?? null,
      effectiveReason: deprecation.reason,
    };
    const { deprecationId: _deprecationId, effectiveReason: _effectiveReason, ...inputs } = outs;
    return { id, props: outs, inputs };
  }

  /**
   * The version's deprecation, null when it has none or the version is gone. Refreshing a stack reads every version
   * at once: the module's list of versions, one request, answers all but the first read of each module.
   */
  private async readDeprecation(client: TfeClient, address: ModuleVersionAddress): Promise<Deprecation | null> {
    const module = { namespace: address.organization, name: address.name, provider: address.provider };
    const listed = await this.listings.listing(`${module.namespace}/${module.name}/${module.provider}`, async () => {
      const versions = await client.registry.listModuleVersions(module);
      return new Map(versions.map((entry) => [entry.version, entry.deprecation]));
    });
    // A version missing from its module's list is gone, which is what delete would have done.
    if (listed) return listed.get(address.version) ?? null;
    try {
      return (await client.registry.getModuleVersion({ ...module, version: address.version })).deprecation;
    } catch (error) {
      if (error instanceof TfeApiError && error.status === 404 && (await isProvablyGone(client, address))) return null;
      throw describeFailure("reading", address, error);
    }
  }

  /** Reinstates the version fully. A version that is not deprecated any more, or is gone, is what delete wants. */
  async delete(id: string): Promise<void> {
    // Another resource of this stack took the deprecation over in this operation (a rename with adoptExisting):
    // reinstating the version now would undo what the stack holds under the new name.
    if (this.context.adoptedThisOperation(id)) return;
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
