import { type RunningServer, type ServerOptions, startServer } from "../../src/server";
import { resultsOfEveryKind } from "../seeded-server";
import { checkContract } from "./contract";

export const organization = "acme";
export const otherOrganization = "globex";
export const token = "acme-token-0123456789";
export const readOnlyToken = "acme-reader-0123456789";
export const otherToken = "globex-token-0123456789";
export const policySetId = "polset-baseline00000001";
export const opaPolicySetId = "polset-opabaseline0001";

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
  policySets: [
    { id: policySetId, organization, name: "baseline" },
    { id: opaPolicySetId, organization, name: "opa-baseline", kind: "opa" as const },
  ],
  workspaces: [
    { id: "ws-production0000001", organization, name: "production" },
    { id: "ws-staging000000001", organization, name: "staging", project: "prj-platform00000001" },
    { id: "ws-globex0000000001", organization: otherOrganization, name: "elsewhere" },
  ],
  projects: [{ id: "prj-platform00000001", organization, name: "platform" }],
  /** One run of production that recorded results every way the service records them. */
  runs: [
    {
      id: "run-production00001",
      workspace: "ws-production0000001",
      createdAt: "2026-11-20T10:00:00.000Z",
      policyResults: resultsOfEveryKind,
    },
  ],
  modules: [
    { organization, name: "vpc", provider: "aws", versions: ["1.0.0", "1.1.0"] },
    { organization: otherOrganization, name: "vpc", provider: "aws", versions: ["1.0.0"] },
  ],
};

/** Servers whose answers may carry injected faults: their statuses are the test's choice, not the routes'. */
const faulted = new WeakSet<RunningServer>();

export async function start(options: ServerOptions = {}): Promise<RunningServer> {
  const server = await startServer({ seed, ...options });
  if (options.faults !== undefined) faulted.add(server);
  const setFaults = server.setFaults;
  server.setFaults = (plan) => {
    faulted.add(server);
    setFaults(plan);
  };
  return server;
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
  await checkDocumentedStatus(server, method, path, response.status);
  return { status: response.status, headers: response.headers, body: parsed, text };
}

const openApiDocuments = new Map<string, Promise<{ path: RegExp; template: string; operations: OpenApiPath }[]>>();
type OpenApiPath = Record<string, { responses: Record<string, unknown> }>;

/**
 * Holds every answer of a documented route to the server's own OpenAPI document: a status the server sends that
 * the document leaves out fails the test that met it. Faults a test injects, and paths no route serves, aside.
 */
export async function checkDocumentedStatus(server: RunningServer, method: string, path: string, status: number) {
  if (faulted.has(server)) return;
  let routes = openApiDocuments.get(server.url);
  if (!routes) {
    routes = fetch(`${server.url}/api/openapi.json`)
      .then((answer) => answer.json() as Promise<{ paths: Record<string, OpenApiPath> }>)
      .then((document) =>
        Object.entries(document.paths).map(([template, operations]) => ({
          template,
          path: new RegExp(`^${template.replace(/\{[^}]+\}/g, "[^/?]+").replace(/\./g, "\\.")}$`),
          operations,
        })),
      );
    openApiDocuments.set(server.url, routes);
  }
  const pathOnly = path.split("?")[0] as string;
  const route = (await routes).find((candidate) => candidate.path.test(pathOnly));
  const operation = route?.operations[method.toLowerCase()];
  if (!route || !operation) return;
  if (!(String(status) in operation.responses)) {
    throw new Error(
      `${method} ${route.template} answered ${status}, which the OpenAPI document does not list ` +
        `(it lists ${Object.keys(operation.responses).join(", ")})`,
    );
  }
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

/** A policy set version once the server has read it (`ready` or `errored`), as its document. */
export async function settledVersion(server: RunningServer, versionId: string) {
  for (let attempt = 0; attempt < 200; attempt++) {
    const answer = await call(server, "GET", `/api/v2/policy-set-versions/${versionId}`);
    const { status } = answer.body.data.attributes;
    if (status === "ready" || status === "errored") return answer.body.data;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`version ${versionId} did not settle`);
}
