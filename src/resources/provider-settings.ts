import { normalizeAddress } from "../client/config";
import { unknownValue } from "./unknown";

// The settings of the providers, once: `tfe:<key>` in a Node.js program's stack config, `tfegov:<key>` (or an
// explicit provider's arguments) for the plugin that serves other languages. The plugin's schema (its config and
// its Provider resource), its CheckConfig and the messages that name a setting take them from here.

interface Setting {
  /** The setting's type in the schema: what a typed SDK takes (stack config gives every value as text). */
  type: "string" | "boolean" | "integer" | "number";
  description: string;
  secret?: true;
}

export const providerSettings = {
  address: {
    type: "string",
    description:
      "Base URL of the service, e.g. https://tfe.example.com; default https://app.terraform.io (or TFE_ADDRESS).",
  },
  hostname: { type: "string", description: "Host name instead of an address (https:// is added), or TFE_HOSTNAME." },
  token: {
    type: "string",
    secret: true,
    description:
      "API token that may manage policies (and modules); else TFE_TOKEN, then the credentials file terraform login writes.",
  },
  organization: { type: "string", description: "Default organization of the resources, or TFE_ORGANIZATION." },
  caCertificate: {
    type: "string",
    description: "A CA certificate to trust besides Node's own: a PEM file path or PEM text.",
  },
  timeoutMs: { type: "integer", description: "Time one request attempt may take, in milliseconds; default 30000." },
  maxRetries: {
    type: "integer",
    description: "Retries of a request that met a 429, 502, 503, 504 or a connection error; default 6.",
  },
  retryMaxElapsedMs: {
    type: "integer",
    description: "No retry starts once this many milliseconds have passed since the first attempt; default 60000.",
  },
  requestsPerSecond: { type: "number", description: "A cap on the pace, below the one the service advertises." },
  allowWeakening: {
    type: "boolean",
    description: "true: changes that weaken governance pass preview for the whole stack, with a warning.",
  },
  verifyCodeOnRefresh: { type: "boolean", description: "true: every refresh downloads every policy's code." },
  requireCodeChecks: {
    type: "boolean",
    description: "true: a missing checker (no opa on PATH) fails preview instead of warning.",
  },
  requirePolicyTests: {
    type: "boolean",
    description:
      "true: a policy folder whose own tests fail (Sentinel test cases, opa test) refuses the change at preview instead of warning.",
  },
  impactWindowDays: {
    type: "integer",
    description:
      "Days of runs a preview reads to say whom a stricter policy would have blocked; default 30, 0 turns it off.",
  },
  requireNoBlockedRuns: {
    type: "boolean",
    description:
      "true: preview refuses a raised level that would have blocked a recent run (or whose reads did not finish), unless the resource sets allowStricter.",
  },
  impactRequestBudget: {
    type: "integer",
    description:
      "Requests a preview may send, all its resources together, to read whom stricter changes would block; default 300.",
  },
} as const satisfies Record<string, Setting>;

/**
 * Whether a missing checker of policy code fails instead of warning: `requireCodeChecks` from the provider's settings
 * (`get`, a key without its namespace), else `TFE_REQUIRE_CODE_CHECKS` in the environment.
 */
export function codeChecksRequired(get: (key: string) => string | undefined): boolean {
  return get("requireCodeChecks") === "true" || process.env.TFE_REQUIRE_CODE_CHECKS === "true";
}

/**
 * A setting that asks for certainty, as a switch: `tfe:<key>` from the provider's settings (`get`, a key without its
 * namespace), else the environment's `variable`; unset (or an empty variable) is off. Only `true` and `false` are
 * taken: any other spelling (TRUE, 1, yes) is refused, naming where it was set, because reading it as off would
 * silently drop the certainty it asks for. `purpose` says what `true` does.
 */
export function strictSwitch(
  get: (key: string) => string | undefined,
  key: keyof typeof providerSettings,
  variable: string,
  purpose: string,
): boolean {
  const configured = get(key);
  const [named, text] = configured !== undefined ? [`tfe:${key}`, configured] : [variable, process.env[variable] ?? ""];
  if (text === "" || text === "false") return false;
  if (text === "true") return true;
  throw new Error(
    `${named} is ${JSON.stringify(text)}, neither true nor false: set it to true ${purpose}, or to false (or unset it)`,
  );
}

/**
 * Whether a folder whose own tests fail, or could not run, is refused instead of warned about: `requirePolicyTests`
 * from the provider's settings, else `TFE_REQUIRE_POLICY_TESTS` (see {@link strictSwitch}).
 */
export function policyTestsRequired(get: (key: string) => string | undefined): boolean {
  return strictSwitch(
    get,
    "requirePolicyTests",
    "TFE_REQUIRE_POLICY_TESTS",
    "to refuse a policy folder whose own tests fail or cannot run",
  );
}

export const settingKeys = Object.keys(providerSettings) as (keyof typeof providerSettings)[];

const settingPattern = new RegExp(`\\btfe:(${settingKeys.join("|")})\\b`, "g");

/** `text` with each setting named under `namespace` (`tfegov:token` where the program used the plugin's). */
export function inNamespace(text: string, namespace: string): string {
  return namespace === "tfe" ? text : text.replace(settingPattern, `${namespace}:$1`);
}

/**
 * Why `value` is no value of setting `key` (as `namespace:key`), or undefined where it is one, or is not known yet: a
 * typo in a number or a URL fails the configuration at preview, naming the setting, instead of the first request.
 * The token's value is never said.
 */
export function settingValueProblem(key: string, value: unknown, namespace: string): string | undefined {
  if (!(settingKeys as readonly string[]).includes(key) || value === undefined || value === null) return undefined;
  if (typeof value === "string" && value === unknownValue) return undefined;
  const setting = providerSettings[key as keyof typeof providerSettings];
  const named = `${namespace}:${key}`;
  const text = String(value);
  const shown = key === "token" ? "(secret)" : JSON.stringify(value);
  switch (setting.type) {
    case "boolean":
      return value === true || value === false || text === "true" || text === "false"
        ? undefined
        : `${named} is ${shown}: use true or false`;
    case "integer":
      return /^\d+$/.test(text) ? undefined : `${named} is ${shown}: use a whole number (milliseconds, or a count)`;
    case "number":
      return Number.isFinite(Number(text)) && Number(text) > 0
        ? undefined
        : `${named} is ${shown}: use a number above 0`;
  }
  if (text.trim() === "") return `${named} is empty: give a value, or remove the setting`;
  if (key === "address") {
    try {
      normalizeAddress(text);
    } catch (error) {
      return `${named}: ${(error as Error).message}`;
    }
  }
  if (key === "hostname" && !/^[A-Za-z0-9.-]+(:\d+)?$/.test(text)) {
    return `${named} is ${shown}: give a host name such as tfe.example.com (an address with https:// goes in ${namespace}:address)`;
  }
  if (key === "organization" && !/^[A-Za-z0-9_-]+$/.test(text)) {
    return `${named} is ${shown}: an organization's name holds letters, digits, - and _ only`;
  }
  return undefined;
}
