// The routes of a policy set's parameters: Sentinel parameters, a sensitive value never shown again.

import type { FastifyInstance, FastifyRequest } from "fastify";
import {
  createParameterRequest,
  type ParameterResource,
  parameterCategory,
  parameterDocument,
  parameterListDocument,
  updateParameterRequest,
} from "../../contract/policy-sets";
import type { Permission } from "../auth";
import { ApiError, notFound, parseBody } from "../errors";
import { jsonApiEndpoint } from "../openapi";
import { paginationOf, type Query, requestedPage } from "../pagination";
import type { ParameterRecord, Storage } from "../storage";

import { loadPolicySet, type SetParams, send } from "./policy-set-access";

function parameterResource(parameter: ParameterRecord): ParameterResource {
  return {
    id: parameter.id,
    type: "vars",
    attributes: {
      key: parameter.key,
      // Write-only: a sensitive value never leaves the server again.
      value: parameter.sensitive ? "" : parameter.value,
      category: parameterCategory,
      sensitive: parameter.sensitive,
    },
    relationships: { configurable: { data: { id: parameter.policySetId, type: "policy-sets" } } },
  };
}

export function registerParameterRoutes(app: FastifyInstance, storage: Storage): void {
  type ParameterParams = { Params: { policySetId: string; parameterId: string } };
  const base = "/api/v2/policy-sets/:policySetId/parameters";
  const loadParameter = (request: FastifyRequest<ParameterParams>, permission: Permission) => {
    const policySet = loadPolicySet(storage, request, permission);
    const parameter = storage.parameter(request.params.parameterId);
    if (parameter?.policySetId !== policySet.id) throw notFound();
    return parameter;
  };

  app.get<SetParams & { Querystring: Query }>(
    base,
    jsonApiEndpoint({
      summary: "List a policy set's parameters (sensitive values read back empty)",
      success: { status: 200, description: "One page", schema: parameterListDocument },
    }),
    async (request, reply) => {
      const policySet = loadPolicySet(storage, request, "read");
      const page = requestedPage(request.query);
      const all = storage.parameters(policySet.id);
      return send(reply, {
        data: all.slice(page.offset, page.offset + page.pageSize).map(parameterResource),
        ...paginationOf(request, `/api/v2/policy-sets/${policySet.id}/parameters`, page, all.length),
      });
    },
  );

  app.post<SetParams>(
    base,
    jsonApiEndpoint({
      summary: "Create a parameter of a Sentinel or Terraform policy set",
      request: createParameterRequest,
      success: { status: 201, description: "Created", schema: parameterDocument },
    }),
    async (request, reply) => {
      const policySet = loadPolicySet(storage, request, "managePolicies");
      const { attributes } = parseBody(createParameterRequest, request.body).data;
      // Sentinel's params and Terraform policy's inputs read parameters; OPA sets take none.
      if (policySet.kind === "opa") {
        throw ApiError.single(422, "invalid attribute", "parameters are for Sentinel and Terraform policy sets", {
          pointer: "/data/attributes/key",
        });
      }
      const created = storage.createParameter({
        policySetId: policySet.id,
        key: attributes.key,
        value: attributes.value ?? "",
        sensitive: attributes.sensitive ?? false,
      });
      if (created === "key-taken") throw keyTaken();
      reply.code(201);
      return send(reply, { data: parameterResource(created) });
    },
  );

  app.get<ParameterParams>(
    `${base}/:parameterId`,
    jsonApiEndpoint({
      summary: "Show a policy set parameter",
      success: { status: 200, description: "The parameter", schema: parameterDocument },
    }),
    async (request, reply) => send(reply, { data: parameterResource(loadParameter(request, "read")) }),
  );

  app.patch<ParameterParams>(
    `${base}/:parameterId`,
    jsonApiEndpoint({
      summary: "Update a policy set parameter: attributes left out keep their value",
      request: updateParameterRequest,
      success: { status: 200, description: "The updated parameter", schema: parameterDocument },
    }),
    async (request, reply) => {
      const parameter = loadParameter(request, "managePolicies");
      const { attributes } = parseBody(updateParameterRequest, request.body).data;
      if (parameter.sensitive && attributes.sensitive === false) {
        throw ApiError.single(
          422,
          "invalid attribute",
          "sensitive cannot be turned off: its value is write-only; delete the parameter and create it again",
          { pointer: "/data/attributes/sensitive" },
        );
      }
      const updated = storage.updateParameter(parameter.id, attributes);
      if (updated === "key-taken") throw keyTaken();
      if (!updated) throw notFound();
      return send(reply, { data: parameterResource(updated) });
    },
  );

  app.delete<ParameterParams>(
    `${base}/:parameterId`,
    jsonApiEndpoint({ summary: "Delete a policy set parameter", success: { status: 204, description: "Deleted" } }),
    async (request, reply) => {
      const parameter = loadParameter(request, "managePolicies");
      storage.deleteParameter(parameter.id);
      return reply.code(204).send();
    },
  );
}

function keyTaken(): ApiError {
  return ApiError.single(422, "invalid attribute", "Key has already been taken", { pointer: "/data/attributes/key" });
}
