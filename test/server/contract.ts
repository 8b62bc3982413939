import type { z } from "zod";
import { serviceDiscoveryDocument } from "../../src/contract/discovery";
import { jsonApiErrorDocument } from "../../src/contract/jsonapi";
import { moduleVersionDocument } from "../../src/contract/module-versions";
import { policyDocument, policyListDocument } from "../../src/contract/policies";
import {
  parameterDocument,
  parameterListDocument,
  policySetDocument,
  policySetListDocument,
  policySetVersionDocument,
  vcsPushAnswer,
} from "../../src/contract/policy-sets";
import { registryErrorDocument, registryModuleVersion, registryModuleVersions } from "../../src/contract/registry";
import { registryModuleDocument, registryModuleVersionDocument } from "../../src/contract/registry-modules";
import {
  policyCheckListDocument,
  policyEvaluationListDocument,
  policySetOutcomeListDocument,
  runListDocument,
  taskStageListDocument,
  tfPolicyEvaluationListDocument,
  tfPolicySetOutcomeListDocument,
} from "../../src/contract/runs";
import {
  projectDocument,
  projectListDocument,
  workspaceDocument,
  workspaceListDocument,
} from "../../src/contract/workspaces";

const segment = "[^/?]+";
const modules = `/api/v2/organizations/${segment}/registry-modules`;

/** The strict document of each successful JSON answer, by method and path (query string aside). */
const successDocuments: { method: string; path: RegExp; document: z.ZodType }[] = [
  { method: "GET", path: /^\/\.well-known\/terraform\.json$/, document: serviceDiscoveryDocument },
  { method: "POST", path: new RegExp(`^/api/v2/organizations/${segment}/policies$`), document: policyDocument },
  { method: "GET", path: new RegExp(`^/api/v2/organizations/${segment}/policies$`), document: policyListDocument },
  { method: "GET", path: new RegExp(`^/api/v2/policies/${segment}$`), document: policyDocument },
  { method: "PATCH", path: new RegExp(`^/api/v2/policies/${segment}$`), document: policyDocument },
  { method: "POST", path: new RegExp(`^/api/v2/organizations/${segment}/policy-sets$`), document: policySetDocument },
  {
    method: "GET",
    path: new RegExp(`^/api/v2/organizations/${segment}/policy-sets$`),
    document: policySetListDocument,
  },
  { method: "GET", path: new RegExp(`^/api/v2/policy-sets/${segment}$`), document: policySetDocument },
  { method: "PATCH", path: new RegExp(`^/api/v2/policy-sets/${segment}$`), document: policySetDocument },
  { method: "POST", path: new RegExp(`^/api/v2/policy-sets/${segment}/versions$`), document: policySetVersionDocument },
  { method: "GET", path: new RegExp(`^/api/v2/policy-set-versions/${segment}$`), document: policySetVersionDocument },
  { method: "GET", path: new RegExp(`^/api/v2/policy-sets/${segment}/parameters$`), document: parameterListDocument },
  { method: "POST", path: new RegExp(`^/api/v2/policy-sets/${segment}/parameters$`), document: parameterDocument },
  {
    method: "GET",
    path: new RegExp(`^/api/v2/policy-sets/${segment}/parameters/${segment}$`),
    document: parameterDocument,
  },
  {
    method: "PATCH",
    path: new RegExp(`^/api/v2/policy-sets/${segment}/parameters/${segment}$`),
    document: parameterDocument,
  },
  { method: "GET", path: new RegExp(`^/api/v2/organizations/${segment}/workspaces$`), document: workspaceListDocument },
  { method: "GET", path: new RegExp(`^/api/v2/organizations/${segment}/projects$`), document: projectListDocument },
  { method: "GET", path: new RegExp(`^/api/v2/workspaces/${segment}$`), document: workspaceDocument },
  { method: "GET", path: new RegExp(`^/api/v2/projects/${segment}$`), document: projectDocument },
  { method: "POST", path: /^\/_local\/vcs-push$/, document: vcsPushAnswer },
  { method: "GET", path: new RegExp(`^/api/v2/workspaces/${segment}/runs$`), document: runListDocument },
  { method: "GET", path: new RegExp(`^/api/v2/runs/${segment}/task-stages$`), document: taskStageListDocument },
  {
    method: "GET",
    path: new RegExp(`^/api/v2/task-stages/${segment}/policy-evaluations$`),
    document: policyEvaluationListDocument,
  },
  {
    method: "GET",
    path: new RegExp(`^/api/v2/policy-evaluations/${segment}/policy-set-outcomes$`),
    document: policySetOutcomeListDocument,
  },
  { method: "GET", path: new RegExp(`^/api/v2/runs/${segment}/policy-checks$`), document: policyCheckListDocument },
  {
    method: "GET",
    path: new RegExp(`^/api/v2/runs/${segment}/tf-policy-evaluations$`),
    document: tfPolicyEvaluationListDocument,
  },
  {
    method: "GET",
    path: new RegExp(`^/api/v2/tf-policy-evaluations/${segment}/tf-policy-set-outcomes$`),
    document: tfPolicySetOutcomeListDocument,
  },
  { method: "POST", path: new RegExp(`^${modules}$`), document: registryModuleDocument },
  {
    method: "POST",
    path: new RegExp(`^${modules}/private/${segment}/${segment}/${segment}/versions$`),
    document: registryModuleVersionDocument,
  },
  {
    method: "PATCH",
    path: new RegExp(`^${modules}/private/${segment}/${segment}/${segment}/${segment}$`),
    document: moduleVersionDocument,
  },
  {
    method: "GET",
    path: new RegExp(`^/api/registry/v1/modules/${segment}/${segment}/${segment}/versions$`),
    document: registryModuleVersions,
  },
  {
    method: "GET",
    path: new RegExp(`^/api/registry/v1/modules/${segment}/${segment}/${segment}/${segment}$`),
    document: registryModuleVersion,
  },
];

/** The document an answer must match, or undefined for answers without a JSON document (204, 302, bytes). */
export function contractDocument(method: string, path: string, status: number): z.ZodType | undefined {
  const pathOnly = path.split("?")[0] as string;
  if (status >= 400) return pathOnly.startsWith("/api/registry/") ? registryErrorDocument : jsonApiErrorDocument;
  if (status < 200 || status >= 300) return undefined;
  return successDocuments.find((entry) => entry.method === method && entry.path.test(pathOnly))?.document;
}

/**
 * Holds an answer of the local server to the contract's strict documents: the server is the contract's reference,
 * so a member it leaves out, adds, or sends null where the contract says otherwise fails the test that met it.
 */
export function checkContract(method: string, path: string, status: number, body: unknown): void {
  const document = contractDocument(method, path, status);
  if (!document) return;
  const result = document.safeParse(body);
  if (!result.success) {
    const issues = result.error.issues.map((issue) => `${issue.path.join(".") || "(document)"}: ${issue.message}`);
    throw new Error(`${method} ${path} answered ${status} off the contract: ${issues.join("; ")}`);
  }
}
