import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import { tokenRefusedByCommand } from "../../src/client/errors";
import { TfeApiError, TfeClient, TfeConnectionError } from "../../src/client/index";
import { startServer } from "../../src/server";
import { empty, freePort, json, rejection, startFaultServer, testClient, text, token } from "./helpers";

const version = { organization: "acme", name: "vpc", provider: "aws", version: "1.2.0" };
const versionPath = "/api/v2/organizations/acme/registry-modules/private/acme/vpc/aws/1.2.0";

interface Operation {
  method: string;
  path: string;
  call: (client: TfeClient) => Promise<unknown>;
}

const operations = {
  create: {
    method: "POST",
    path: "/api/v2/organizations/acme/policies",
    call: (client) => client.policies.create("acme", { name: "restrict", enforcementLevel: "advisory" }),
  },
  show: { method: "GET", path: "/api/v2/policies/pol-1", call: (client) => client.policies.read("pol-1") },
  upload: {
    method: "PUT",
    path: "/api/v2/policies/pol-1/upload",
    call: (client) => client.policies.upload("pol-1", "x".repeat(4096)),
  },
  update: {
    method: "PATCH",
    path: "/api/v2/policies/pol-1",
    call: (client) => client.policies.update("pol-1", { enforcementLevel: "advisory" }),
  },
  list: {
    method: "GET",
    path: "/api/v2/organizations/acme/policies",
    call: (client) => client.policies.list("acme"),
  },
  delete: { method: "DELETE", path: "/api/v2/policies/pol-1", call: (client) => client.policies.delete("pol-1") },
  deprecate: {
    method: "PATCH",
    path: versionPath,
    call: (client) => client.moduleVersions.deprecate({ ...version, reason: "CVE-2026-1", link: "https://x.test" }),
  },
  revert: { method: "PATCH", path: versionPath, call: (client) => client.moduleVersions.undeprecate(version) },
} satisfies Record<string, Operation>;

const notFound = { errors: [{ status: "404", title: "not found" }] };
const unprocessable = {
  errors: [
    {
      status: "422",
      title: "invalid attribute",
      detail: "Name has already been taken",
      source: { pointer: "/data/attributes/name" },
    },
    {
      status: 422,
      title: "invalid attribute",
      detail: "is not included in the list",
      source: { pointer: "/data/attributes/enforce/0/mode" },
    },
  ],
};
const failure = { errors: [{ status: "500", title: "internal error", detail: "failed to deprecate module version" }] };

/** Spec section 7, one row each: the operation, the status, the body, and what the message must tell a person. */
const rows: [keyof typeof operations, number, unknown, string[]][] = [
  // A write to a collection right under the organization: the service answers 404, never 403, to a token of the
  // organization without the permission, so both causes are named and the organization is not said to be missing.
  [
    "create",
    404,
    notFound,
    [
      "not found, or the token lacks permission for it (404)",
      'check organization "acme"\'s name, and that the token\'s team has the "Manage policies" permission',
    ],
  ],
  ["create", 422, unprocessable, ["(422)", "name: invalid attribute: Name has already been taken", "enforce.0.mode"]],
  ["show", 404, notFound, ["not found, or the token lacks permission"]],
  [
    "upload",
    413,
    { errors: [{ status: "413", title: "payload too large" }] },
    ["4096 bytes", "10 MB", "nothing was saved"],
  ],
  [
    "upload",
    413,
    {
      errors: [
        {
          status: "413",
          title: "payload too large",
          detail: "the archive holds 10001 files; a version holds at most 10000",
        },
      ],
    },
    ["4096 bytes", "refused (413): the archive holds 10001 files; a version holds at most 10000"],
  ],
  ["update", 404, notFound, ["not found, or the token lacks permission"]],
  ["update", 422, unprocessable, ["(422)", "name: invalid attribute: Name has already been taken"]],
  // A read of a collection right under the organization: the organization is what the service does not show this token.
  ["list", 404, notFound, ['organization "acme" does not exist, or this token has no access to it (404)']],
  ["delete", 404, notFound, ["not found, or the token lacks permission"]],
  ["deprecate", 404, notFound, ["not found, or the token lacks permission"]],
  ["deprecate", 422, unprocessable, ["(422)", "name: invalid attribute"]],
  ["deprecate", 500, failure, ["answered 500", "failed to deprecate module version"]],
  ["deprecate", 503, failure, ["answered 503", "failed to deprecate module version"]],
  ["revert", 404, notFound, ["not found, or the token lacks permission"]],
  ["revert", 422, unprocessable, ["(422)", "name: invalid attribute"]],
  ["revert", 500, failure, ["answered 500", "failed to deprecate module version"]],
  ["revert", 503, failure, ["answered 503", "failed to deprecate module version"]],
];

async function apiErrorOf(operation: Operation, status: number, body: unknown): Promise<TfeApiError> {
  const server = await startFaultServer(json(status, body));
  const error = await rejection(() => operation.call(testClient(server.url)));
  expect(error).toBeInstanceOf(TfeApiError);
  return error as TfeApiError;
}

describe("spec section 7: every error row becomes a TfeApiError a person can act on", () => {
  for (const [name, status, body, fragments] of rows) {
    it(`${name} ${status}`, async () => {
      const operation = operations[name];
      const error = await apiErrorOf(operation, status, body);
      expect(error).toMatchObject({ status, method: operation.method, path: operation.path });
      expect(error.message.startsWith(`${operation.method} ${operation.path}: `)).toBe(true);
      for (const fragment of fragments) expect(error.message).toContain(fragment);
    });
  }

  it("says a 404 once: a body that only repeats it adds nothing, one that says more is kept", async () => {
    const repeated = {
      errors: [
        { status: "404", title: "not found", detail: "The resource does not exist, or the token has no access to it." },
      ],
    };
    const said = await apiErrorOf(operations.show, 404, repeated);
    expect(said.message).toBe("GET /api/v2/policies/pol-1: not found, or the token lacks permission for it (404)");
    expect(said.organizationNotFound).toBeUndefined();
    const more = await apiErrorOf(operations.show, 404, {
      errors: [{ status: "404", title: "not found", detail: "policy pol-1 was deleted" }],
    });
    expect(more.message).toContain("(404): not found: policy pol-1 was deleted");
    const organization = await apiErrorOf(operations.list, 404, repeated);
    expect(organization.message).toBe(
      'GET /api/v2/organizations/acme/policies: organization "acme" does not exist, or this token has no access to it (404)',
    );
    expect(organization.organizationNotFound).toBe("acme");
  });

  // Review of issue 52: the service answers 404, never 403, to a token of the organization without the permission
  // to write (service-facts.md): a write's 404 names both causes and never says the organization is missing; once a
  // read of this token found the organization, the message says it exists.
  it("a write's 404 names the permission; a read of the organization by this token rules its absence out", async () => {
    const readOnlyToken = "errors-read-only-token-0123";
    const server = await startServer({
      port: 0,
      seed: {
        organizations: [{ name: "acme", plus: true }],
        tokens: [{ token: readOnlyToken, organizations: ["acme"], managePolicies: false, manageModules: false }],
      },
    });
    const client = new TfeClient({ address: server.url, token: readOnlyToken, rateLimit: false });
    const create = () =>
      rejection(() => client.policies.create("acme", { name: "guard", enforcementLevel: "advisory" }));
    try {
      const unread = (await create()) as TfeApiError;
      expect(unread.message).toBe(
        "POST /api/v2/organizations/acme/policies: not found, or the token lacks permission for it (404): check " +
          'organization "acme"\'s name, and that the token\'s team has the "Manage policies" permission',
      );
      expect(unread.organizationNotFound).toBeUndefined();
      await client.policies.list("acme");
      const afterRead = (await create()) as TfeApiError;
      expect(afterRead.message).toBe(
        "POST /api/v2/organizations/acme/policies: not found, or the token lacks permission for it (404): this token " +
          'reads organization "acme", so it exists: the token\'s team likely lacks the "Manage policies" permission',
      );
      // Another organization's read still says what it does: that one is not there for this token.
      const other = (await rejection(() => client.policies.list("acmee"))) as TfeApiError;
      expect(other.organizationNotFound).toBe("acmee");
    } finally {
      await client.close();
      await server.close();
    }
  });

  it("keeps the JSON:API error objects and names the attributes of a 422", async () => {
    const error = await apiErrorOf(operations.create, 422, unprocessable);
    expect(error.errors).toHaveLength(2);
    expect(error.errors[1]).toMatchObject({ status: 422, detail: "is not included in the list" });
    expect(error.invalidAttributes).toEqual(["name", "enforce.0.mode"]);
  });

  it("retries the deprecation failures 500 and 503 and says how often it tried", async () => {
    const server = await startFaultServer(json(503, failure));
    const error = await rejection(() =>
      operations.deprecate.call(testClient(server.url, { retry: { maxRetries: 2 } })),
    );
    expect(error).toMatchObject({ status: 503, attempts: 3 });
    expect((error as Error).message).toContain("after 3 attempts");
    expect(server.requests).toHaveLength(3);
  });
});

describe("error bodies of every shape", () => {
  it("uses error objects without detail or source, and with null members", async () => {
    const error = await apiErrorOf(operations.update, 422, {
      errors: [
        { status: 422, title: "invalid value" },
        { title: null, detail: "query is invalid", source: null },
      ],
    });
    expect(error.message).toContain("invalid value; query is invalid");
    expect(error.invalidAttributes).toEqual([]);
  });

  it("says no detail was given for a 422 without any", async () => {
    const error = await apiErrorOf(operations.update, 422, { errors: [{}] });
    expect(error.message).toContain("(422): no detail given");
  });

  it("quotes the text of a proxy's HTML page", async () => {
    const page =
      "<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1><hr>nginx</body></html>";
    const server = await startFaultServer(text(502, page));
    const error = await rejection(() => operations.show.call(testClient(server.url, { retry: { maxRetries: 1 } })));
    expect(error).toBeInstanceOf(TfeApiError);
    expect((error as Error).message).toBe(
      "GET /api/v2/policies/pol-1: the service answered 502 after 2 attempts: 502 Bad Gateway 502 Bad Gateway nginx",
    );
  });

  it("quotes a malformed JSON error body", async () => {
    const error = await apiErrorOf(operations.create, 400, '{"errors":[{"title":"bad request"');
    expect(error.message).toContain('answered 400: {"errors":[{"title":"bad request"');
  });

  it("keeps the status of an empty error body", async () => {
    const server = await startFaultServer(empty(409));
    const error = await rejection(() => operations.create.call(testClient(server.url)));
    expect(error).toMatchObject({ status: 409 });
    expect((error as Error).message).toBe("POST /api/v2/organizations/acme/policies: the service answered 409");
  });

  it("tells a person to fix the token on 401", async () => {
    const error = await apiErrorOf(operations.show, 401, { errors: [{ status: "401", title: "unauthorized" }] });
    expect(error.message).toContain("the token was not accepted (401)");
    expect(error.message).toContain("TFE_TOKEN");
  });

  it("tells a command's user what replaces a refused token, by where it came from", async () => {
    const error = await apiErrorOf(operations.show, 401, { errors: [{ status: "401", title: "unauthorized" }] });
    const address = "https://tfe.example.com";
    const fixOf = (source: string) => tokenRefusedByCommand(error, address, source).split("(401): ")[1];
    // TFE_TOKEN is read before any credentials file: a new login alone would change nothing.
    expect(fixOf("TFE_TOKEN")).toBe(
      'the token came from TFE_TOKEN, which is read before any credentials file: set a valid API token there, or unset it and run "terraform login tfe.example.com"',
    );
    expect(fixOf("credentials file /home/me/.terraform.d/credentials.tfrc.json")).toMatch(
      /^the token came from the credentials file \/home\/me\/\.terraform\.d\/credentials\.tfrc\.json: run "terraform login tfe\.example\.com" to write a new one there/,
    );
    // terraform login never writes a CLI config file, which is read before the file it writes.
    expect(fixOf("credentials file /etc/terraform.rc")).toMatch(
      /^the token came from the credentials file \/etc\/terraform\.rc \(TF_CLI_CONFIG_FILE\).*its credentials "tfe\.example\.com" block/,
    );
  });

  it("reports a success answer that is not JSON", async () => {
    const server = await startFaultServer(text(200, "<html>maintenance</html>"));
    const error = await rejection(() => operations.show.call(testClient(server.url)));
    expect(error).toBeInstanceOf(TfeApiError);
    expect((error as Error).message).toContain("the response is not JSON: maintenance");
  });

  it("reports a success answer of the wrong shape with the member at fault", async () => {
    const error = await apiErrorOf(operations.show, 200, { data: { id: "pol-1", type: "policies" } });
    expect(error.message).toContain("unexpected response shape: data.attributes");
  });
});

describe("the token never leaks", () => {
  const echoToken = `<html>Authorization: Bearer ${token}</html>`;

  it("is redacted from error bodies that echo it, in the message, JSON and inspect output", async () => {
    for (const reply of [text(500, echoToken), json(404, { errors: [{ title: "bad", detail: `token ${token}` }] })]) {
      const server = await startFaultServer(reply);
      // A read by id: its 404 message carries the body (an organization's collection says the organization instead).
      const error = await rejection(() => operations.show.call(testClient(server.url)));
      expect(error).toBeInstanceOf(TfeApiError);
      for (const rendering of [
        String(error),
        JSON.stringify(error),
        inspect(error, { depth: null, showHidden: true }),
      ]) {
        expect(rendering).not.toContain(token);
      }
      expect((error as Error).message).toContain("[redacted]");
    }
  });

  it("is absent from connection errors", async () => {
    const address = `http://127.0.0.1:${await freePort()}`;
    const error = await rejection(() => operations.show.call(testClient(address, { retry: { maxRetries: 0 } })));
    expect(error).toBeInstanceOf(TfeConnectionError);
    expect(inspect(error, { depth: null, showHidden: true })).not.toContain(token);
  });

  it("is absent from the client's JSON and inspect output", async () => {
    const client = testClient(`http://127.0.0.1:${await freePort()}`, { rateLimit: { requestsPerSecond: 7 } });
    expect(JSON.stringify(client)).not.toContain(token);
    expect(inspect(client, { depth: null, showHidden: true })).not.toContain(token);
    expect(inspect(client.policies, { depth: null, showHidden: true })).not.toContain(token);
  });
});
