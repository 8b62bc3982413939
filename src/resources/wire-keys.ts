import type * as pulumi from "@pulumi/pulumi";
import { rethrowRecordedAs } from "./failed-half-way";

// Labels, paths and parameter keys are data, but some properties keep them as an object's keys (a set's policies by
// label, its files by path, its parameters by key): readable in `pulumi preview --diff` (`folderPolicies.deny`),
// and no index that shifts when one is added. The engine hands a provider its old and new values through protobuf's
// `Struct.toJavaScript`, which assigns `result[key] = value`: a key `__proto__` sets the object's prototype instead
// (or nothing, for a string) and vanishes from both sides, so a policy labelled `__proto__` could be lowered unseen.
// Every such key crosses the wire escaped, one `_` before it, and is unescaped as it comes in: `__proto__` travels
// as `___proto__`, `___proto__` as `____proto__`, every other key as it is. Inside the providers they are own
// properties again (Object.fromEntries), and the guard reads them with Object.hasOwn. No I/O.

/** A key the engine's wire would drop, or one that looks like an escaped one: both get one more `_`. */
const escapable = /^_*__proto__$/;
/** A key as it travels: an escaped one has at least three leading underscores. */
const escaped = /^___+proto__$/;

export function toWireKey(key: string): string {
  return escapable.test(key) ? `_${key}` : key;
}

export function fromWireKey(key: string): string {
  return escaped.test(key) ? key.slice(1) : key;
}

function mapKeys(value: unknown, rename: (key: string) => string): unknown {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return value;
  return Object.fromEntries(Object.entries(value).map(([key, entry]) => [rename(key), entry]));
}

/** `properties` with the keys of each keyed property renamed; other properties as they are. */
function withKeys(
  properties: unknown,
  keyed: readonly string[],
  rename: (key: string) => string,
): Record<string, unknown> {
  const result = { ...(properties as Record<string, unknown>) };
  for (const property of keyed) if (property in result) result[property] = mapKeys(result[property], rename);
  return result;
}

/** What goes to the engine: each keyed property's keys escaped. */
export function toWire(properties: unknown, keyed: readonly string[]): Record<string, unknown> {
  return withKeys(properties, keyed, toWireKey);
}

/** What came from the engine: each keyed property's keys as the provider made them. */
export function fromWire(properties: unknown, keyed: readonly string[]): Record<string, unknown> {
  return withKeys(properties, keyed, fromWireKey);
}

/**
 * `provider` with the keys of `keyed` properties escaped on their way to the engine and unescaped on their way in,
 * in every call and in what a failure that changed the service records (`properties`).
 */
export function withWireKeys<P extends pulumi.dynamic.ResourceProvider>(provider: P, keyed: readonly string[]): P {
  if (keyed.length === 0) return provider;
  const inbound = (properties: unknown) => (properties === undefined ? properties : fromWire(properties, keyed));
  const outbound = <T extends object | undefined>(properties: T): T =>
    (properties === undefined ? properties : toWire(properties, keyed)) as T;
  const recorded = rethrowRecordedAs((properties) => toWire(properties, keyed));
  const { check, diff, create, read, update, delete: remove } = provider;
  if (check) {
    provider.check = async (olds, news) => {
      const result = await check.call(provider, inbound(olds), inbound(news));
      return { ...result, inputs: outbound(result.inputs) };
    };
  }
  if (diff) {
    provider.diff = async (id, olds, news) => {
      const result: pulumi.dynamic.DiffResult & { changed?: string[][] } = await diff.call(
        provider,
        id,
        inbound(olds),
        inbound(news),
      );
      // The paths of what changed name keys as the engine holds them: escaped.
      if (result.changed) {
        result.changed = result.changed.map((path) =>
          path.length > 1 && keyed.includes(path[0] as string)
            ? [path[0] as string, toWireKey(path[1] as string), ...path.slice(2)]
            : path,
        );
      }
      return result;
    };
  }
  if (create) {
    provider.create = async (inputs) => {
      const result = await create.call(provider, inbound(inputs)).catch(recorded);
      return { ...result, outs: outbound(result.outs) };
    };
  }
  if (read) {
    provider.read = async (id, props) => {
      const result = await read.call(provider, id, inbound(props));
      return {
        ...result,
        props: outbound(result.props),
        ...(result.inputs ? { inputs: outbound(result.inputs) } : {}),
      };
    };
  }
  if (update) {
    provider.update = async (id, olds, news) => {
      const result = await update.call(provider, id, inbound(olds), inbound(news)).catch(recorded);
      return { ...result, outs: outbound(result.outs) };
    };
  }
  if (remove) provider.delete = (id, props) => remove.call(provider, id, inbound(props));
  return provider;
}

/** `record[key] = value` as an own property whatever the key: assigning `__proto__` would set the prototype. */
export function setOwn<V>(record: Record<string, V>, key: string, value: V): void {
  Object.defineProperty(record, key, { value, enumerable: true, writable: true, configurable: true });
}
