import type * as pulumi from "@pulumi/pulumi";
import type { TfeClient } from "../client/client";
import { TfeApiError } from "../client/errors";
import { packageDoc } from "../process/package-version";
import { rethrowRecordedAs } from "./failed-half-way";
import type { ContextProvider } from "./provider-context";

// A stack's objects live on one service. Each resource records the address of the service that holds it (an
// internal output). A run that talks to another address (tfe:address, TFE_ADDRESS or the hostname changed) first
// asks it for the object by id: ids are the service's own, so an answer means the same service moved (a Terraform
// Enterprise given a new hostname, a local server restarted on another port with its data), and the run goes on and
// records the new address. Where it answers 404, it is another service, or one that cannot see the object: the run
// is refused there, naming both addresses, and nothing is written or dropped. Asked blindly, the other service would
// answer 404 for everything, a refresh would drop every resource from state, and the policies would stay in force
// on the first service with no owner. A state written before records no address, and is taken as it is until its
// next change records one.

export const serviceAddressKey = "__serviceAddress";

export class ServiceMovedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ServiceMovedError";
  }
}

/** The address `props` recorded, where it is not the one this run talks to; else undefined. */
export function recordedElsewhere(props: unknown, current: string): string | undefined {
  const recorded = (props as Record<string, unknown> | undefined)?.[serviceAddressKey];
  return typeof recorded === "string" && recorded !== current ? recorded : undefined;
}

/** The refusal of a run against `current`, which does not hold what was recorded at `recorded`. */
export function serviceMoved(
  recorded: string,
  current: string,
  what: { type: string; id: string; namespace: string },
): string {
  const setting = `${what.namespace}:address`;
  return (
    `${what.type} ${what.id} is held by the service at ${recorded}, and this run talks to ${current}, which does ` +
    `not have it (404): nothing was changed. To manage it where it is, set ${setting} (or TFE_ADDRESS) back to ${recorded}. To move the ` +
    `stack to ${current}: run pulumi destroy with ${setting} at ${recorded} first, then pulumi up at ${current}; or, ` +
    "to leave these objects in force there with no owner, remove each from the stack with pulumi state delete " +
    `(${packageDoc("troubleshooting.md")}, "Moving a stack to another service or organization")`
  );
}

/**
 * `provider` recording the service's address in what it answers, and refusing a run against another service: one
 * at another address that does not have the object (`holds` asks it, by id, with what state recorded; false where
 * it answers 404, or answers with another object).
 */
export function withServiceAddress<P extends ContextProvider & pulumi.dynamic.ResourceProvider>(
  provider: P,
  type: string,
  holds: (client: TfeClient, id: string, props: Record<string, unknown>) => Promise<boolean>,
): P {
  const current = () => provider.context.client.address;
  const refuseMoved = async (props: unknown, id: string) => {
    const recorded = recordedElsewhere(props, current());
    if (recorded === undefined || (await holds(provider.context.client, id, props as Record<string, unknown>))) return;
    throw new ServiceMovedError(serviceMoved(recorded, current(), { type, id, namespace: provider.context.namespace }));
  };
  const recorded = <T extends object | undefined>(properties: T): T =>
    (properties === undefined ? properties : { ...properties, [serviceAddressKey]: current() }) as T;
  const failedHalfWay = rethrowRecordedAs(recorded);
  const { diff, create, read, update, delete: remove } = provider;
  if (diff) {
    provider.diff = async (id, olds, news) => {
      await refuseMoved(olds, id);
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
      await refuseMoved(props, id);
      const result = await read.call(provider, id, props);
      return result.props ? { ...result, props: recorded(result.props) } : result;
    };
  }
  if (update) {
    provider.update = async (id, olds, news) => {
      await refuseMoved(olds, id);
      const result = await update.call(provider, id, olds, news).catch(failedHalfWay);
      return { ...result, outs: recorded(result.outs ?? {}) };
    };
  }
  if (remove) {
    provider.delete = async (id, props) => {
      await refuseMoved(props, id);
      return remove.call(provider, id, props);
    };
  }
  return provider;
}

/** Whether the service answers `read` with the object: false where it answers 404 (gone, or not this service's). */
export async function answersWith(read: () => Promise<unknown>): Promise<boolean> {
  try {
    await read();
    return true;
  } catch (error) {
    if (error instanceof TfeApiError && error.status === 404) return false;
    throw error;
  }
}
