import type * as pulumi from "@pulumi/pulumi";
import type * as pulumiProvider from "@pulumi/pulumi/provider";
import { closestName } from "../contract/names";
import { libraryVersion } from "../process/package-version";
import { secretInputsKey } from "../resources/derived-secrets";
import { deprecationProperties } from "../resources/module-version-deprecation";
import { policyProperties } from "../resources/policy/properties";
import { policySetProperties } from "../resources/policy-set/properties";
import type { ParameterState } from "../resources/policy-set/requests";
import { outputsAfterUpdate, type PropertyTable } from "../resources/property-table";
import { inNamespace, type ProviderContext } from "../resources/provider-context";
import { settingKeys, settingValueProblem } from "../resources/provider-settings";
import { providers } from "../resources/providers";
import type { ProviderType } from "../resources/shim";
import { constructPolicyFolder } from "./construct";
import { detailedDiff } from "./detailed-diff";
import { invokeFunction } from "./functions";
import { inProgramLanguage, programLanguage } from "./program-language";
import schemaDocument from "./schema.json";
import { isSecretEnvelope, secret, unwrapProperties, unwrapSecrets, wrapProperties } from "./secrets";

// The resources of this library served to every Pulumi language: the plugin `pulumi-resource-tfegov` answers the
// engine's calls with the very providers the Node.js dynamic resources use (their checks, diffs, guard, requests and
// messages), under type tokens of its own package. What is particular to a plugin lives here: the type tokens, the
// configuration under the `tfegov` namespace, secrets and URNs across the boundary, and messages that name the
// namespace the program used.

/** The package: `pulumi-resource-tfegov`, resources `tfegov:index:<Type>`. `tfe` is the bridged Terraform provider's. */
export const packageName = "tfegov";

const resourceTypes: Readonly<Record<string, ProviderType>> = {
  [`${packageName}:index:Policy`]: "Policy",
  [`${packageName}:index:PolicySet`]: "PolicySet",
  [`${packageName}:index:ModuleVersionDeprecation`]: "ModuleVersionDeprecation",
  // A PolicyFolder's manifest, registered by the component itself: not in the schema, no SDK declares it.
  [`${packageName}:index:PolicyFolderManifest`]: "PolicyFolderManifest",
};

/** The arguments of every resource, as the schema (and YAML) names them. */
const argumentNames = [
  ...new Set(
    Object.values(schemaDocument.resources as Record<string, { inputProperties?: object }>).flatMap((resource) =>
      Object.keys(resource.inputProperties ?? {}),
    ),
  ),
];

/** The language of the program in the project the engine started the plugin in (its Pulumi.yaml). */
const language = programLanguage(process.cwd());

/** A message as this plugin's program reads it: settings under `tfegov:`, arguments as its language spells them. */
export function forProgram(text: string): string {
  return inProgramLanguage(inNamespace(text, packageName), language, argumentNames);
}

/**
 * A check failure as the program reads it. The engine prints `property <name> value {<value>} has a problem:
 * <reason>`, the name as the schema spells it; where the program's language spells it otherwise (Python's
 * `enforcement_level`), the failure names no property, and the engine prints the reason alone, which names it as the
 * program does.
 */
export function failureForProgram(
  failure: { property: string; reason: string },
  wording: (text: string) => string = forProgram,
): { property: string; reason: string } {
  const reason = wording(failure.reason);
  return { property: wording(failure.property) === failure.property ? failure.property : "", reason };
}

/** The property table of each type whose diff is shown in detail; a folder's hidden manifest shows none. */
const resourceTables: Partial<Record<ProviderType, PropertyTable>> = {
  Policy: policyProperties,
  PolicySet: policySetProperties,
  ModuleVersionDeprecation: deprecationProperties,
};

type Provider = pulumi.dynamic.ResourceProvider & { context: ProviderContext };

/** The type of `urn` (`urn:pulumi:stack::project::parent$type::name`), and its provider. */
function providerOf(urn: string): { type: ProviderType; provider: Provider } {
  const qualified = urn.split("::")[2] ?? "";
  const token = qualified.split("$").pop() ?? "";
  const type = resourceTypes[token];
  if (!type) throw new Error(`${token || urn} is no resource of the ${packageName} package`);
  return { type, provider: providers[type] };
}

/** The schema the plugin serves, as generated from the resources' property tables (`npm run generate:schema`). */
export function pluginSchema(): string {
  return JSON.stringify(schemaDocument);
}

/**
 * A PolicySet's parameters as the program wrote them, `{ key: value }` with each value a secret or not, as the
 * provider takes them: `{ key: { value, sensitive } }`, a secret value sent as sensitive (as a Node.js program's).
 */
function parametersFromProgram(parameters: unknown): unknown {
  if (parameters === undefined || parameters === null || typeof parameters !== "object") return parameters;
  const allSecret = isSecretEnvelope(parameters);
  const entries = allSecret ? (parameters as { value: unknown }).value : parameters;
  if (typeof entries !== "object" || entries === null) return parameters;
  return Object.fromEntries(
    Object.entries(entries).map(([key, value]) => {
      const { plain, secret: isSecret } = unwrapSecrets(value);
      return [key, { value: plain, sensitive: allSecret || isSecret }];
    }),
  );
}

/** State's parameters with each sensitive entry a secret: only its own value is hidden, in state and in a diff. */
function parametersAsSecrets(parameters: unknown): unknown {
  if (typeof parameters !== "object" || parameters === null) return parameters;
  return Object.fromEntries(
    Object.entries(parameters as Record<string, ParameterState>).map(([key, entry]) => [
      key,
      entry?.sensitive ? secret(entry) : entry,
    ]),
  );
}

export class GovernanceProvider implements pulumiProvider.Provider {
  readonly version = libraryVersion;
  readonly schema = pluginSchema();

  /**
   * The properties each resource's diff found changed, by URN, until the preview of its update: what they leave of
   * the outputs the service computes is shown as it is (see `previewUpdate`).
   */
  private readonly changedByDiff = new Map<string, ReadonlySet<string>>();

  /** A new command of a plugin the engine attached to: nothing of the last command's diffs is kept. */
  startCommand(): void {
    this.changedByDiff.clear();
  }

  /**
   * CheckConfig: the provider's settings, each key one it knows (with the closest where not) and each value one of
   * its setting (settingValueProblem), passed on as given.
   */
  checkConfig(news: Record<string, unknown>): pulumiProvider.CheckResult {
    const failures: pulumiProvider.CheckFailure[] = [];
    for (const key of Object.keys(news)) {
      if (key.startsWith("__") || key === "version") continue;
      if ((settingKeys as readonly string[]).includes(key)) {
        const problem = settingValueProblem(key, unwrapSecrets(news[key]).plain, packageName);
        if (problem) failures.push({ property: key, reason: problem });
        continue;
      }
      const near = closestName(key, [...settingKeys]);
      failures.push({
        property: key,
        reason: `${packageName}:${key} is no setting of this provider${near ? `: did you mean ${packageName}:${near}?` : ""}; its settings are ${settingKeys.join(", ")}`,
      });
    }
    return { inputs: news, failures };
  }

  /** DiffConfig: the settings that changed. A change updates the provider in place; it never replaces resources. */
  diffConfig(olds: Record<string, unknown>, news: Record<string, unknown>): string[] {
    const before = unwrapSecrets(olds).plain as Record<string, unknown>;
    const after = unwrapSecrets(news).plain as Record<string, unknown>;
    return [...new Set([...Object.keys(before), ...Object.keys(after)])].filter(
      (key) => !key.startsWith("__") && JSON.stringify(before[key]) !== JSON.stringify(after[key]),
    );
  }

  /** The provider's configuration (`tfegov:*`, or an explicit provider's arguments), given to every provider. */
  configure(config: Record<string, unknown>): void {
    const plain = unwrapSecrets(config).plain as Record<string, unknown>;
    const get = (key: string) => {
      const value = plain[key] ?? plain[`${packageName}:${key}`];
      return value === undefined || value === null ? undefined : String(value);
    };
    for (const provider of Object.values(providers)) {
      provider.context.configureFrom(get, packageName);
      provider.context.wording = forProgram;
    }
  }

  async check(urn: string, olds: Record<string, unknown>, news: Record<string, unknown>) {
    const { type, provider } = providerOf(urn);
    const { plain, secretNames } = unwrapProperties(news);
    const given = this.withDefaults(type, urn, plain, news);
    const result = await guarded(() =>
      (provider.check as NonNullable<Provider["check"]>)(unwrapSecrets(olds).plain as object, given),
    );
    const inputs = result.inputs as Record<string, unknown>;
    return {
      inputs: this.forState(type, inputs, secretNames),
      failures: (result.failures ?? []).map((failure) => failureForProgram(failure)),
    };
  }

  /**
   * The provider's diff, and the detailed diff of the properties the program wrote (detailed-diff.ts), compared
   * with the inputs of the last update (`oldInputs`; the outputs where the engine sends none).
   */
  async diff(
    id: string,
    urn: string,
    olds: Record<string, unknown>,
    news: Record<string, unknown>,
    oldInputs?: Record<string, unknown>,
  ): Promise<pulumiProvider.DiffResult & { detailedDiff?: Record<string, number> }> {
    const { type, provider } = providerOf(urn);
    const plainNews = { ...(unwrapSecrets(news).plain as Record<string, unknown>), __urn: urn };
    const result: pulumiProvider.DiffResult & { changed?: string[][] } = await guarded(() =>
      (provider.diff as NonNullable<Provider["diff"]>)(id, unwrapSecrets(olds).plain, plainNews),
    );
    const table = resourceTables[type];
    if (result.changed) this.changedByDiff.set(urn, new Set(result.changed.map(([property]) => property as string)));
    else this.changedByDiff.delete(urn);
    if (!table || !result.changed) return result;
    const before = unwrapSecrets(oldInputs ?? olds).plain as Record<string, unknown>;
    const { changed, ...diff } = result;
    return { ...diff, detailedDiff: detailedDiff(table, before, plainNews, changed, result.replaces ?? []) };
  }

  async create(urn: string, inputs: Record<string, unknown>) {
    const { type, provider } = providerOf(urn);
    const { plain, secretNames } = unwrapProperties(inputs);
    const result = await guarded(
      () => provider.create({ ...plain, __urn: urn }),
      (recorded) => this.forState(type, recorded, secretNames),
    );
    return { id: result.id, outs: this.forState(type, result.outs as Record<string, unknown>, secretNames) };
  }

  async read(id: string, urn: string, props?: Record<string, unknown>) {
    const { type, provider } = providerOf(urn);
    const { plain, secretNames } = unwrapProperties(props ?? {});
    const result = await guarded(() =>
      (provider.read as NonNullable<Provider["read"]>)(id, { ...plain, ...(plain.__urn ? {} : { __urn: urn }) }),
    );
    // Gone: no id, which drops the resource from state (and tells `pulumi import` it does not exist).
    if (!result.props) return { id: undefined as unknown as string, props: {} };
    return {
      id: result.id ?? id,
      props: this.forState(type, result.props as Record<string, unknown>, secretNames),
      inputs: result.inputs && this.forState(type, result.inputs as Record<string, unknown>, secretNames),
    };
  }

  async update(id: string, urn: string, olds: Record<string, unknown>, news: Record<string, unknown>) {
    const { type, provider } = providerOf(urn);
    const { plain, secretNames } = unwrapProperties(news);
    const result = await guarded(
      () =>
        (provider.update as NonNullable<Provider["update"]>)(id, unwrapSecrets(olds).plain, { ...plain, __urn: urn }),
      (recorded) => this.forState(type, recorded, secretNames),
    );
    return { outs: this.forState(type, (result.outs ?? {}) as Record<string, unknown>, secretNames) };
  }

  /**
   * What an update will leave, as its preview answers before any request (outputsAfterUpdate): the new inputs, what
   * the service computes as state holds it where the update leaves it, else not known yet. A folder's manifest has no
   * table: its outputs are its inputs.
   */
  previewUpdate(urn: string, olds: Record<string, unknown>, news: Record<string, unknown>): Record<string, unknown> {
    const table = resourceTables[providerOf(urn).type];
    const changed = this.changedByDiff.get(urn);
    this.changedByDiff.delete(urn);
    return table ? outputsAfterUpdate(table, olds, news, changed) : news;
  }

  async delete(id: string, urn: string, props: Record<string, unknown>) {
    const { provider } = providerOf(urn);
    // A provider with no delete (a folder's manifest, which holds nothing on the service) has nothing to remove.
    if (!provider.delete) return;
    await guarded(() => (provider.delete as NonNullable<Provider["delete"]>)(id, unwrapSecrets(props).plain));
  }

  async construct(
    name: string,
    type: string,
    inputs: pulumi.Inputs,
    options: pulumi.ComponentResourceOptions,
  ): Promise<pulumiProvider.ConstructResult> {
    if (type !== `${packageName}:index:PolicyFolder`) throw new Error(`${type} is no component of ${packageName}`);
    return constructPolicyFolder(name, inputs, options);
  }

  async invoke(token: string, inputs: Record<string, unknown>): Promise<pulumiProvider.InvokeResult> {
    const context = providers.Policy.context;
    return guarded(async () => ({
      outputs: await invokeFunction(token, unwrapSecrets(inputs).plain as Record<string, unknown>, context),
    }));
  }

  /**
   * What a program of another language leaves to the provider: the organization (`tfegov:organization`, then
   * `TFE_ORGANIZATION`), the name (the resource's name), a PolicySet's parameters with their sensitivity; and the
   * URN, for warnings to show under the resource.
   */
  private withDefaults(
    type: ProviderType,
    urn: string,
    plain: Record<string, unknown>,
    given: Record<string, unknown>,
  ): Record<string, unknown> {
    // The inputs given as secrets: the providers mark what they compute from them as secrets (derived-secrets.ts).
    const secretInputs = Object.keys(given).filter((key) => unwrapSecrets(given[key]).secret);
    const withDefaults: Record<string, unknown> = { ...plain, __urn: urn, [secretInputsKey]: secretInputs.sort() };
    if (type !== "PolicyFolderManifest") {
      withDefaults.organization ??= providers[type].context.defaultOrganization;
    }
    if (type === "Policy" || type === "PolicySet") withDefaults.name ??= urn.split("::").pop();
    if (type === "PolicySet" && given.parameters !== undefined) {
      withDefaults.parameters = parametersFromProgram(given.parameters);
    }
    return withDefaults;
  }

  /**
   * What goes back to the engine for the state: no internal URN, each property that came as a secret a secret again,
   * and a PolicySet's sensitive parameters each a secret of its own.
   */
  private forState(type: ProviderType, properties: Record<string, unknown>, secretNames: ReadonlySet<string>) {
    const { __urn: _urn, ...rest } = properties;
    const names = new Set(secretNames);
    names.delete("parameters");
    const wrapped = wrapProperties(rest, names);
    // A sensitive parameter is a secret of its own: the value in the inputs (which create and update send), its hash
    // in the outputs, encrypted in state either way.
    if (type === "PolicySet" && rest.parameters !== undefined)
      wrapped.parameters = parametersAsSecrets(rest.parameters);
    return wrapped;
  }
}

/**
 * A provider's failure with the messages naming this package's settings (`tfegov:token`, not `tfe:token`). A create
 * or update that failed half-way carries what the engine records in state (`properties`): those go through
 * `forState`, the same secret marking as a success's outputs, or a secret would land in state in plain text.
 */
async function guarded<T>(
  call: () => Promise<T>,
  forState?: (recorded: Record<string, unknown>) => Record<string, unknown>,
): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof Error) {
      const recorded = error as Error & { properties?: unknown };
      if (forState && typeof recorded.properties === "object" && recorded.properties !== null) {
        recorded.properties = forState(recorded.properties as Record<string, unknown>);
      }
      error.message = forProgram(error.message);
      const partial = error as Error & { reasons?: unknown };
      if (Array.isArray(partial.reasons)) {
        partial.reasons = partial.reasons.map((reason) => forProgram(String(reason)));
      }
    }
    throw error;
  }
}
