import { type RunningServer, type ServerOptions, startServer } from "../../src/server";
import { checkContract } from "./contract";

export const organization = "acme";
export const otherOrganization = "globex";
export const token = "acme-token-0123456789";
export const readOnlyToken = "acme-reader-0123456789";
export const otherToken = "globex-token-0123456789";
export const policySetId = "polset-baseline00000001";

export const seed = {
  organizations: [
    { name: organization, plus: true },
    { name: otherOrganization, plus: false },
  ],
  tokens: [
    { token, organizations: [organization] },
    { token: readOnlyToken, organizations: [organization], managePolicies: false, manageModules: false },
    { token: otherToken, organizations: [otherOrganization] },
  ],
  policySets: [{ id: policySetId, organization, name: "baseline" }],
  modules: [
    { organization, name: "vpc", provider: "aws", versions: ["1.0.0", "1.1.0"] },
    { organization: otherOrganization, name: "vpc", provider: "aws", versions: ["1.0.0"] },
  ],
};

export function start(options: ServerOptions = {}): Promise<RunningServer> {
  return startServer({ seed, ...options });
}

export interface Answer {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary members of the documents they check.
  body: any;
  text: string;
}

/** One request to the server: a JSON body is sent as JSON:API, the bearer token unless `auth` is null. */
export async function call(
  server: RunningServer,
  method: string,
  path: string,
  options: { body?: unknown; raw?: string | Uint8Array; contentType?: string; auth?: string | null } = {},
): Promise<Answer> {
  const headers: Record<string, string> = {};
  const auth = options.auth === undefined ? token : options.auth;
  if (auth !== null) headers.authorization = `Bearer ${auth}`;
  let body: string | Uint8Array | undefined;
  if (options.raw !== undefined) {
    body = options.raw;
    headers["content-type"] = options.contentType ?? "application/octet-stream";
  } else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers["content-type"] = options.contentType ?? "application/vnd.api+json";
  }
  const response = await fetch(`${server.url}${path}`, { method, headers, body, redirect: "manual" });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  if (response.headers.get("content-type")?.includes("json")) checkContract(method, path, response.status, parsed);
  return { status: response.status, headers: response.headers, body: parsed, text };
}

export function policyBody(name: string, attributes: Record<string, unknown> = {}) {
  return { data: { type: "policies", attributes: { name, "enforcement-level": "advisory", ...attributes } } };
}

export async function createPolicy(server: RunningServer, name: string, attributes: Record<string, unknown> = {}) {
  const answer = await call(server, "POST", `/api/v2/organizations/${organization}/policies`, {
    body: policyBody(name, attributes),
  });
  if (answer.status !== 201) throw new Error(`create ${name}: ${answer.status} ${answer.text}`);
  return answer.body.data as { id: string; attributes: Record<string, unknown>; links: Record<string, string> };
}
