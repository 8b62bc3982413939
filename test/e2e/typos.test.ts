import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningServer } from "../../src/server";
import { startSeededServer } from "../seeded-server";
import { PulumiProject } from "./pulumi-project";

// A JavaScript program has no type checker: under the real engine and Node.js host, a misspelt property or a value
// of the wrong type must stop `pulumi preview`, naming the property, before any request reaches the service.

const token = "typos-token-0123456789abcdef";
const organization = "acme";

const program = (args: string) => `const { Policy } = require("pulumi-tfe-governance");
new Policy("require-tags", { code: "main = rule { true }\\n", ${args} });
`;

describe("a JavaScript program with a typo fails pulumi preview, naming the property", () => {
  let server: RunningServer;
  let project: PulumiProject;

  beforeAll(async () => {
    server = await startSeededServer({ organization, token });
    project = await PulumiProject.create({
      name: "tfe-governance-typos",
      files: { "index.js": program('enforcementLevel: "advisory"') },
      config: { "tfe:address": server.url, "tfe:organization": organization },
      secrets: { "tfe:token": token },
    });
  }, 120_000);

  afterAll(async () => {
    await project?.dispose();
    await server?.close();
  });

  it.each([
    [
      'enforcementlevel: "hard-mandatory"',
      "enforcementlevel is not a property of Policy: did you mean enforcementLevel?",
    ],
    ["description: 42", "description must be a string, not the number 42"],
    // Issue 52: a misspelled value, named once and in the program's spelling (the engine's prefix names it too).
    [
      'enforcementLevel: "hard-mandatry"',
      'property enforcementLevel value {hard-mandatry} has a problem: enforcementLevel "hard-mandatry" is not an enforcement level',
    ],
  ])(
    "%s",
    async (args, says) => {
      await project.writeFile("index.js", program(args));
      server.requestLog.clear();
      const preview = await project.run(["preview"], { allowFailure: true });
      expect(preview.code).not.toBe(0);
      expect(preview.output).toContain(says);
      expect(server.requestLog.entries()).toEqual([]);
    },
    120_000,
  );
});
