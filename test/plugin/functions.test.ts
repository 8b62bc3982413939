import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { invokeFunction } from "../../src/plugin/functions";
import { ProviderContext } from "../../src/resources/provider-context";
import type { RunningServer } from "../../src/server/index";
import { startSeededServer } from "../seeded-server";

// Review of issue 52, item 6: a wrong organization names the setting to fix. A read function of a Python or YAML
// program takes the organization from tfegov:organization as the resources do; its 404 must name that setting too.

const token = "review52-functions-token-0123";
let server: RunningServer;
beforeAll(async () => {
  server = await startSeededServer({ organization: "acme", token });
});
afterAll(async () => {
  await server.close();
});

describe("a read function under an organization the service does not know", () => {
  it("names tfegov:organization, as a resource's check does", async () => {
    const settings: Record<string, string> = { address: server.url, token, organization: "acmee" };
    const context = new ProviderContext();
    context.configureFrom((key) => settings[key], "tfegov");
    const call = invokeFunction("tfegov:index:listPolicies", {}, context);
    await expect(call).rejects.toThrow(
      'GET /api/v2/organizations/acmee/policies: organization "acmee" does not exist, or this token has no access ' +
        "to it (404). Check the organization's name in tfegov:organization (or TFE_ORGANIZATION, or the function's " +
        "organization argument), and that the token belongs to that organization",
    );
    await expect(call).rejects.not.toThrow(/\btfe:/);
  });
});
