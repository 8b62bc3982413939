import { describe, expect, it } from "vitest";
import { type TfeClient, TfeValidationError } from "../../src/client/index";
import { rejection, showPolicy, startFaultServer, testClient, token } from "./helpers";

const version = { organization: "acme", name: "vpc", provider: "aws", version: "1.2.0" };

/** Runs `call` against a server that counts requests; the call must fail validation without sending any. */
async function refused(call: (client: TfeClient) => Promise<unknown>): Promise<TfeValidationError> {
  const server = await startFaultServer(showPolicy());
  const error = await rejection(() => call(testClient(server.url)));
  expect(error).toBeInstanceOf(TfeValidationError);
  expect(server.requests).toHaveLength(0);
  expect((error as Error).message).not.toContain(token);
  return error as TfeValidationError;
}

const invalidPolicies: [string, Parameters<TfeClient["policies"]["create"]>[1], string, RegExp][] = [
  ["a name with spaces", { name: "my policy", enforcementLevel: "advisory" }, "name", /letters, digits, '-' and '_'/],
  ["an empty name", { name: "", enforcementLevel: "advisory" }, "name", /is required/],
  ["opa without query", { name: "p", kind: "opa", enforcementLevel: "mandatory" }, "query", /required for opa/],
  ["a query on sentinel", { name: "p", query: "data.x", enforcementLevel: "advisory" }, "query", /only valid for opa/],
  [
    "mandatory on sentinel",
    { name: "p", enforcementLevel: "mandatory" },
    "enforcementLevel",
    /"mandatory" is not an enforcement level of sentinel policies: use one of "hard-mandatory", "soft-mandatory", "advisory"/,
  ],
  [
    "hard-mandatory on opa",
    { name: "p", kind: "opa", query: "data.x", enforcementLevel: "hard-mandatory" },
    "enforcementLevel",
    /use one of "mandatory", "advisory"/,
  ],
  ["no enforcement level", { name: "p" }, "enforcementLevel", /is required/],
  [
    "enforce contradicting enforcement-level",
    { name: "p", enforcementLevel: "advisory", enforce: [{ path: "p.sentinel", mode: "hard-mandatory" }] },
    "enforce",
    /contradicts enforcement-level "advisory": set only enforcement-level/,
  ],
  [
    "two enforce entries",
    {
      name: "p",
      enforce: [
        { path: "p.sentinel", mode: "advisory" },
        { path: "q.sentinel", mode: "advisory" },
      ],
    },
    "enforce",
    /exactly one/,
  ],
  ["an empty policy set id", { name: "p", enforcementLevel: "advisory", policySetIds: [""] }, "policySetIds.0.id", /./],
];

describe("policy requests are validated before anything is sent", () => {
  for (const [description, options, field, message] of invalidPolicies) {
    it(`create refuses ${description}, naming ${field}`, async () => {
      const error = await refused((client) => client.policies.create("acme", options));
      expect(error.problems.map((problem) => problem.field)).toContain(field);
      expect(error.message).toMatch(message);
      expect(error.message).toContain(field);
    });
  }

  it("update refuses enforce contradicting enforcement-level, and an unknown level", async () => {
    const contradiction = await refused((client) =>
      client.policies.update("pol-1", {
        enforcementLevel: "advisory",
        enforce: [{ path: "p.sentinel", mode: "soft-mandatory" }],
      }),
    );
    expect(contradiction.problems).toEqual([
      {
        field: "enforce",
        message: 'mode "soft-mandatory" contradicts enforcement-level "advisory": set only enforcement-level',
      },
    ]);
    const unknown = await refused((client) =>
      client.policies.update("pol-1", { enforcementLevel: "strict" as "advisory" }),
    );
    expect(unknown.problems[0]!.field).toBe("enforcementLevel");
  });

  it("upload refuses code over 10 MB", async () => {
    const error = await refused((client) => client.policies.upload("pol-1", Buffer.alloc(10 * 1024 * 1024 + 1)));
    expect(error.problems[0]!.field).toBe("code");
    expect(error.message).toContain("10485761 bytes");
    expect(error.message).toContain("10 MB");
  });

  for (const [option, value] of [
    ["pageSize", 101],
    ["pageSize", 0],
    ["pageSize", 2.5],
    ["pageNumber", 0],
  ] as const) {
    it(`list refuses ${option} ${value}`, async () => {
      const error = await refused((client) => client.policies.list("acme", { [option]: value }));
      expect(error.problems[0]!.field).toBe(option);
      expect(error.message).toMatch(option === "pageSize" ? /from 1 to 100/ : /from 1/);
    });
  }

  it("list refuses an unknown kind filter and sort order", async () => {
    expect((await refused((client) => client.policies.list("acme", { kind: "rego" as "opa" }))).message).toContain(
      'kind must be "sentinel" or "opa"',
    );
    expect((await refused((client) => client.policies.list("acme", { sort: "size" as "name" }))).message).toContain(
      "sort must be one of name, -name, updated-at, -updated-at",
    );
  });

  it("listAll refuses page size 101 before the first page", async () => {
    await refused(async (client) => {
      for await (const _policy of client.policies.listAll("acme", { pageSize: 101 })) {
        // Never reached: validation fails first.
      }
    });
  });
});

describe("module version requests are validated before anything is sent", () => {
  it("deprecate refuses an empty reason, naming reason", async () => {
    const error = await refused((client) => client.moduleVersions.deprecate({ ...version, reason: "  " }));
    expect(error.problems).toEqual([{ field: "reason", message: "is required: say why the version is deprecated" }]);
  });
});

const badSegments = ["a/b", "..", ".", "a..b", "has space", "tab\there", "new\nline", "nul\u0000", "del\u007f", ""];

describe("path segments that could escape their place are refused", () => {
  const segmentCalls: [string, string, (client: TfeClient, value: string) => Promise<unknown>][] = [
    ["policies.list", "organization", (client, value) => client.policies.list(value)],
    [
      "policies.create",
      "organization",
      (client, value) => client.policies.create(value, { name: "p", enforcementLevel: "advisory" }),
    ],
    [
      "moduleVersions.undeprecate",
      "organization",
      (client, value) => client.moduleVersions.undeprecate({ ...version, organization: value }),
    ],
    [
      "moduleVersions.deprecate",
      "name",
      (client, value) => client.moduleVersions.deprecate({ ...version, name: value, reason: "old" }),
    ],
    [
      "moduleVersions.undeprecate",
      "provider",
      (client, value) => client.moduleVersions.undeprecate({ ...version, provider: value }),
    ],
    [
      "moduleVersions.undeprecate",
      "version",
      (client, value) => client.moduleVersions.undeprecate({ ...version, version: value }),
    ],
    [
      "registry.listModuleVersions",
      "namespace",
      (client, value) => client.registry.listModuleVersions({ namespace: value, name: "vpc", provider: "aws" }),
    ],
    [
      "registry.getModuleVersion",
      "version",
      (client, value) =>
        client.registry.getModuleVersion({ namespace: "acme", name: "vpc", provider: "aws", version: value }),
    ],
    ["policies.read", "policyId", (client, value) => client.policies.read(value)],
    ["policies.download", "policyId", (client, value) => client.policies.download(value)],
  ];
  for (const [operation, field, call] of segmentCalls) {
    it(`${operation} refuses each bad ${field}`, async () => {
      for (const value of badSegments) {
        const error = await refused((client) => call(client, value));
        expect(error.problems).toHaveLength(1);
        expect(error.problems[0]!.field).toBe(field);
        if (value !== "") expect(error.message).toContain(JSON.stringify(value));
      }
    });
  }
});
