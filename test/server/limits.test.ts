import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningServer } from "../../src/server";
import { call, organization, policyBody, start } from "./helpers";

let server: RunningServer;
beforeAll(async () => {
  server = await start();
});
afterAll(() => server.close());

const policiesPath = `/api/v2/organizations/${organization}/policies`;
const modulePath = `/api/v2/organizations/${organization}/registry-modules/private/${organization}/vpc/aws`;
const deprecation = (link: string) => ({
  data: {
    type: "module-versions",
    attributes: { deprecation: { "deprecated-status": "Deprecated", reason: "Use 2.x.", link } },
  },
});
const newVersion = (version: string) => ({ data: { type: "registry-module-versions", attributes: { version } } });

describe("input the service would refuse", () => {
  it("refuses a policy name over 256 characters, naming the attribute and the limit", async () => {
    const answer = await call(server, "POST", policiesPath, { body: policyBody("a".repeat(1_000_000)) });
    expect(answer.status).toBe(422);
    expect(answer.body.errors).toEqual([
      expect.objectContaining({
        source: { pointer: "/data/attributes/name" },
        detail: expect.stringMatching(/^name .*256 characters/),
      }),
    ]);
    expect(answer.text.length).toBeLessThan(1000);
    const longest = await call(server, "POST", policiesPath, { body: policyBody("b".repeat(256)) });
    expect(longest.status).toBe(201);
  });

  it("refuses a registry module name over 256 characters", async () => {
    const answer = await call(server, "POST", `/api/v2/organizations/${organization}/registry-modules`, {
      body: { data: { type: "registry-modules", attributes: { name: "m".repeat(257), provider: "aws" } } },
    });
    expect(answer.status).toBe(422);
    expect(answer.body.errors[0].source.pointer).toBe("/data/attributes/name");
  });

  for (const link of ["javascript:alert(1)", "data:text/html,<script>alert(1)</script>", "ftp://example.com/x"]) {
    it(`refuses the deprecation link ${link.slice(0, 20)}`, async () => {
      const answer = await call(server, "PATCH", `${modulePath}/1.0.0`, { body: deprecation(link) });
      expect(answer.status).toBe(422);
      expect(answer.body.errors[0].source.pointer).toBe("/data/attributes/deprecation/link");
      expect(answer.body.errors[0].detail).toMatch(/^link .*web address/);
    });
  }

  for (const link of ["https://example.com/upgrade", "http://example.com", "www.example.com/vpc"]) {
    it(`accepts the deprecation link ${link}`, async () => {
      const answer = await call(server, "PATCH", `${modulePath}/1.0.0`, { body: deprecation(link) });
      expect(answer.status).toBe(200);
      expect(answer.body.included[0].attributes.link).toBe(link);
    });
  }

  for (const version of ["01.0.0", "1.02.0", "1.0.0-01", "1.0", "v1.0.0", "1.0.0-"]) {
    it(`refuses the version ${version}: not strict SemVer`, async () => {
      const answer = await call(server, "POST", `${modulePath}/versions`, { body: newVersion(version) });
      expect(answer.status).toBe(422);
      expect(answer.body.errors[0].source.pointer).toBe("/data/attributes/version");
    });
  }

  for (const version of ["10.0.0", "1.0.0-rc.1", "1.0.0-0a.1+build.007", "0.0.0"]) {
    it(`accepts the version ${version}`, async () => {
      const answer = await call(server, "POST", `${modulePath}/versions`, { body: newVersion(version) });
      expect(answer.status).toBe(201);
    });
  }

  it("reports the first 20 of 20,000 bad enforce entries and counts the rest: a small body", async () => {
    const enforce = Array.from({ length: 20_000 }, () => ({ path: "x.sentinel", mode: "nope" }));
    const answer = await call(server, "POST", policiesPath, {
      body: { data: { type: "policies", attributes: { name: "many-enforce", enforce } } },
    });
    expect(answer.status).toBe(422);
    expect(answer.body.errors).toHaveLength(21);
    expect(answer.body.errors[20].detail).toMatch(/and 199\d\d more/);
    expect(answer.text.length).toBeLessThan(10_000);
  });
});
