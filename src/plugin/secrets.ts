// Secrets across the plugin's boundary. The plugin tells the engine it accepts secrets, so a secret input reaches it
// wrapped (`{ "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", value }`): it unwraps what
// it is given before the providers see it, remembers which properties were secret, and wraps those again in what it
// answers, so that a secret stays encrypted in the state. A parameter given as a secret is what makes it sensitive on
// the service, as in a Node.js program. No I/O.

import { isSecretEnvelope, secretEnvelope } from "../resources/derived-secrets";

export { isSecretEnvelope };

export function secret(value: unknown): unknown {
  return secretEnvelope(value);
}

/** `value` with every secret envelope replaced by what it holds; `secret` says whether there was any. */
export function unwrapSecrets(value: unknown): { plain: unknown; secret: boolean } {
  if (isSecretEnvelope(value)) return { plain: unwrapSecrets(value.value).plain, secret: true };
  if (Array.isArray(value)) {
    const items = value.map(unwrapSecrets);
    return { plain: items.map((item) => item.plain), secret: items.some((item) => item.secret) };
  }
  if (typeof value === "object" && value !== null) {
    const entries = Object.entries(value).map(([key, entry]) => [key, unwrapSecrets(entry)] as const);
    return {
      plain: Object.fromEntries(entries.map(([key, entry]) => [key, entry.plain])),
      secret: entries.some(([, entry]) => entry.secret),
    };
  }
  return { plain: value, secret: false };
}

/** A resource's properties unwrapped, with the names of the top-level properties that held a secret. */
export function unwrapProperties(properties: Record<string, unknown>): {
  plain: Record<string, unknown>;
  secretNames: Set<string>;
} {
  const plain: Record<string, unknown> = {};
  const secretNames = new Set<string>();
  for (const [key, value] of Object.entries(properties)) {
    const unwrapped = unwrapSecrets(value);
    plain[key] = unwrapped.plain;
    if (unwrapped.secret) secretNames.add(key);
  }
  return { plain, secretNames };
}

/** `properties` with the named ones wrapped as secrets again. */
export function wrapProperties(properties: Record<string, unknown>, secretNames: ReadonlySet<string>) {
  return Object.fromEntries(
    Object.entries(properties).map(([key, value]) => [
      key,
      // A value the provider answered as a secret already (one it derived from a secret) is wrapped once.
      secretNames.has(key) && value !== undefined && value !== null && !isSecretEnvelope(value) ? secret(value) : value,
    ]),
  );
}
