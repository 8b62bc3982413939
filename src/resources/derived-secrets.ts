import type * as pulumi from "@pulumi/pulumi";
import { rethrowRecordedAs } from "./failed-half-way";
import type { PropertyTable } from "./property-table";

// What is computed from a secret is a secret. Pulumi's dynamic-provider host tells the engine that this provider
// takes no secrets: the engine hands it plain values, and marks secret again only the outputs that have the name of
// a secret input. A property this provider derives (the hash of a secret `code`, a level read from a sensitive
// parameter) would land in state in plain text. The program says which of its inputs are secrets (`__secretInputs`,
// see shim.ts; the plugin says the same from what reaches it wrapped), and what the provider answers wraps each
// derived value in Pulumi's secret envelope, which the engine keeps encrypted whatever the provider accepts. No I/O.

/** The internal input naming the program's secret inputs: a list of property names. */
export const secretInputsKey = "__secretInputs";

const signatureKey = "4dabf18193072939515e22adb298388d";
const secretSignature = "1b47061264138c4ac30d75fd1eb44270";

export function secretEnvelope(value: unknown): Record<string, unknown> {
  return { [signatureKey]: secretSignature, value };
}

export function isSecretEnvelope(value: unknown): value is { value: unknown } {
  return (
    typeof value === "object" && value !== null && (value as Record<string, unknown>)[signatureKey] === secretSignature
  );
}

/** The names `props` says were secret in the program. */
export function secretInputsOf(props: unknown): Set<string> {
  const names = (props as Record<string, unknown> | undefined)?.[secretInputsKey];
  return new Set(Array.isArray(names) ? names.filter((name): name is string => typeof name === "string") : []);
}

/**
 * `properties` with every property that the table derives from a secret input (`secretWith`) wrapped, and
 * `moreSecrets` applied for what a table cannot say (a level read from a sensitive parameter); `__secretInputs`
 * carried over from `inputs`, so that a later read knows it too.
 */
export function withSecretsMarked(
  properties: Record<string, unknown>,
  inputs: unknown,
  table: PropertyTable,
  moreSecrets?: (properties: Record<string, unknown>) => Record<string, unknown>,
): Record<string, unknown> {
  const secret = secretInputsOf(inputs);
  const marked: Record<string, unknown> = { ...properties, [secretInputsKey]: [...secret].sort() };
  for (const [name, spec] of Object.entries(table)) {
    const value = marked[name];
    if (value === undefined || value === null || isSecretEnvelope(value)) continue;
    if ((spec.secretWith ?? []).some((source) => secret.has(source))) marked[name] = secretEnvelope(value);
  }
  return moreSecrets ? moreSecrets(marked) : marked;
}

/**
 * `provider` answering every derived secret wrapped: check's inputs, create's and update's outputs (and what a
 * failure half-way records), read's outputs and inputs.
 */
export function withDerivedSecrets<P extends pulumi.dynamic.ResourceProvider>(
  provider: P,
  table: PropertyTable,
  moreSecrets?: (properties: Record<string, unknown>) => Record<string, unknown>,
): P {
  const mark = (properties: unknown, inputs: unknown) =>
    withSecretsMarked(properties as Record<string, unknown>, inputs, table, moreSecrets);
  const recorded = (inputs: unknown) => rethrowRecordedAs((properties) => mark(properties, inputs));
  const { check, create, read, update } = provider;
  if (check) {
    provider.check = async (olds, news) => {
      const result = await check.call(provider, olds, news);
      return result.inputs ? { ...result, inputs: mark(result.inputs, news) } : result;
    };
  }
  if (create) {
    provider.create = async (inputs) => {
      const result = await create.call(provider, inputs).catch(recorded(inputs));
      return { ...result, outs: mark(result.outs ?? {}, inputs) };
    };
  }
  if (update) {
    provider.update = async (id, olds, news) => {
      const result = await update.call(provider, id, olds, news).catch(recorded(news));
      return { ...result, outs: mark(result.outs ?? {}, news) };
    };
  }
  if (read) {
    provider.read = async (id, props) => {
      const result = await read.call(provider, id, props);
      if (!result.props) return result;
      return {
        ...result,
        props: mark(result.props, props),
        ...(result.inputs ? { inputs: mark(result.inputs, props) } : {}),
      };
    };
  }
  return provider;
}
