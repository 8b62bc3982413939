import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import type { RunningServer } from "../../src/server";
import { checkContract, contractDocument } from "./contract";
import { call, createPolicy, start } from "./helpers";

let server: RunningServer;
beforeAll(async () => {
  server = await start();
});
afterAll(() => server.close());

const jsonSchema = (document: z.ZodType) => {
  const { $schema: _dialect, ...schema } = z.toJSONSchema(document, { io: "output", unrepresentable: "any" });
  return schema;
};

describe("the contract's strict documents", () => {
  it("are what the OpenAPI document describes for every JSON answer of every route", async () => {
    const openApi = (await call(server, "GET", "/api/openapi.json", { auth: null })).body;
    let compared = 0;
    type Operation = { responses: Record<string, { content?: Record<string, { schema: unknown }> }> };
    for (const [template, operations] of Object.entries(openApi.paths as Record<string, Record<string, Operation>>)) {
      const path = template.replace(/\{[^}]+\}/g, "x");
      for (const [method, operation] of Object.entries(operations)) {
        for (const [status, response] of Object.entries(operation.responses)) {
          const content = response.content;
          const schema = Object.values(content ?? {})[0]?.schema;
          const document = contractDocument(method.toUpperCase(), path, Number(status));
          if (path === "/api/openapi.json") continue;
          if (!schema || (schema as { contentMediaType?: string }).contentMediaType) {
            expect(document, `${method} ${template} ${status}`).toBeUndefined();
            continue;
          }
          expect(document, `${method} ${template} ${status}`).toBeDefined();
          expect(schema, `${method} ${template} ${status}`).toEqual(jsonSchema(document as z.ZodType));
          compared++;
        }
      }
    }
    expect(compared).toBeGreaterThan(40);
  });

  it("describe required members as required and not nullable in OpenAPI", async () => {
    const openApi = (await call(server, "GET", "/api/openapi.json", { auth: null })).body;
    const show = openApi.paths["/api/v2/policies/{policyId}"].get.responses["200"].content["application/vnd.api+json"];
    const attributes = show.schema.properties.data.properties.attributes;
    expect(attributes.required).toEqual([
      "name",
      "description",
      "kind",
      "enforcement-level",
      "enforce",
      "policy-set-count",
      "updated-at",
    ]);
    expect(attributes.properties.name.type).toBe("string");
    expect(attributes.properties.kind).toEqual({ type: "string", enum: ["sentinel", "opa"] });
    expect(attributes.properties.description.type).toEqual(["string", "null"]);
    expect(attributes.additionalProperties).toBe(false);
    const error = show.schema && openApi.paths["/api/v2/policies/{policyId}"].get.responses["404"];
    const errorObject = error.content["application/vnd.api+json"].schema.properties.errors.items;
    expect(errorObject.required).toEqual(["status", "title", "detail"]);
  });

  it("hold the server's answers: a lenient-looking policy document is off the contract", async () => {
    const policy = await createPolicy(server, "contract-probe");
    const answer = await call(server, "GET", `/api/v2/policies/${policy.id}`);
    expect(() => checkContract("GET", `/api/v2/policies/${policy.id}`, 200, answer.body)).not.toThrow();
    const withoutKind = structuredClone(answer.body);
    withoutKind.data.attributes.kind = null;
    expect(() => checkContract("GET", `/api/v2/policies/${policy.id}`, 200, withoutKind)).toThrow(
      /data\.attributes\.kind/,
    );
    const extraMember = structuredClone(answer.body);
    extraMember.data.attributes.owner = "someone";
    expect(() => checkContract("GET", `/api/v2/policies/${policy.id}`, 200, extraMember)).toThrow(/owner/);
    const wrongLevel = structuredClone(answer.body);
    wrongLevel.data.attributes["enforcement-level"] = "mandatory";
    expect(() => checkContract("GET", `/api/v2/policies/${policy.id}`, 200, wrongLevel)).toThrow(/enforcement-level/);
  });
});
