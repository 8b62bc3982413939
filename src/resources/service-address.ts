import type * as pulumi from "@pulumi/pulumi";
import { packageDoc } from "../package-version";
import type { ContextProvider } from "./provider-context";

// A stack's objects live on one service. Each resource records the address of the service that holds it (an
// internal output), and a run that talks to another one (tfe:address, TFE_ADDRESS or the hostname changed) is
// refused before any request: asked by id, the other service would answer 404 for everything, a refresh would drop
// every resource from state, and the policies would stay in force on the first service with no owner. Diff, read,
// update and delete compare; create and every answer record it. A state written before this records nothing, and
// is taken as it is until its next change records the address.

export const serviceAddressKey = "__serviceAddress";

export class ServiceMovedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ServiceMovedError";
  }
}

/** The refusal when `props` were recorded at another service than the one this run talks to; else undefined. */
export function serviceMoved(
  props: unknown,
  current: string,
  what: { type: string; id: string; namespace: string },
): string | undefined {
  const recorded = (props as Record<string, unknown> | undefined)?.[serviceAddressKey];
  if (typeof recorded !== "string" || recorded === current) return undefined;
  const setting = `${what.namespace}:address`;
  return (
    `${what.type} ${what.id} is held by the service at ${recorded}, and this run talks to ${current}: nothing was ` +
    `read or changed. To manage it where it is, set ${setting} (or TFE_ADDRESS) back to ${recorded}. To move the ` +
    `stack to ${current}: run pulumi destroy with ${setting} at ${recorded} first, then pulumi up at ${current}; or, ` +
    "to leave these objects in force there with no owner, remove each from the stack with pulumi state delete " +
    `(${packageDoc("troubleshooting.md")}, "Moving a stack to another service or organization")`
  );
}

/** `provider` recording the service's address in what it answers, and refusing a run against another one. */
export function withServiceAddress<P extends ContextProvider & pulumi.dynamic.ResourceProvider>(
  provider: P,
  type: string,
): P {
  const current = () => provider.context.client.address;
  const refuseMoved = (props: unknown, id: string) => {
    const moved = serviceMoved(props, current(), { type, id, namespace: provider.context.namespace });
    if (moved) throw new ServiceMovedError(moved);
  };
  const recorded = <T extends object | undefined>(properties: T): T =>
    (properties === undefined ? properties : { ...properties, [serviceAddressKey]: current() }) as T;
  const failedHalfWay = (error: unknown) => {
    const failure = error as { properties?: unknown };
    if (typeof failure?.properties === "object" && failure.properties !== null) {
      failure.properties = recorded(failure.properties);
    }
    throw error;
  };
  const { diff, create, read, update, delete: remove } = provider;
  if (diff) {
    provider.diff = async (id, olds, news) => {
      refuseMoved(olds, id);
      return diff.call(provider, id, olds, news);
    };
  }
  if (create) {
    provider.create = async (inputs) => {
      const result = await create.call(provider, inputs).catch(failedHalfWay);
      return { ...result, outs: recorded(result.outs ?? {}) };
    };
  }
  if (read) {
    provider.read = async (id, props) => {
      refuseMoved(props, id);
      const result = await read.call(provider, id, props);
      return result.props ? { ...result, props: recorded(result.props) } : result;
    };
  }
  if (update) {
    provider.update = async (id, olds, news) => {
      refuseMoved(olds, id);
      const result = await update.call(provider, id, olds, news).catch(failedHalfWay);
      return { ...result, outs: recorded(result.outs ?? {}) };
    };
  }
  if (remove) {
    provider.delete = async (id, props) => {
      refuseMoved(props, id);
      return remove.call(provider, id, props);
    };
  }
  return provider;
}
