import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { TfeClient } from "../../src/client";
import {
  type ModuleVersionDeprecationInputs,
  ModuleVersionDeprecationProvider,
} from "../../src/resources/module-version-deprecation";
import { type PolicyInputs, PolicyProvider } from "../../src/resources/policy";
import type { RunningServer } from "../../src/server";
import { startSeededServer } from "../seeded-server";
import { temporaryDirectory } from "../temporary-directory";

// Adopting what already exists, as the import command's programs do for a whole organization: where the program
// and the service agree, adoption reads and never writes; where they differ, it writes exactly the difference.

const organization = "acme";
const token = "adopt-without-writes-token";
const policySetId = "polset-adoptTest0001";
const code = "main = rule { true }\n";
const codeFile = join(temporaryDirectory("adopt-"), "main.sentinel");
writeFileSync(codeFile, code);

let server: RunningServer;
let client: TfeClient;

beforeAll(async () => {
  server = await startSeededServer({
    organization,
    token,
    policySetId,
    modules: [{ name: "vpc", provider: "aws", versions: ["1.0.0", "1.1.0"] }],
  });
  client = new TfeClient({ address: server.url, token, rateLimit: false });
});

afterAll(async () => {
  await client.close();
  await server.close();
});

const writes = () =>
  server.requestLog
    .entries()
    .filter((entry) => entry.method !== "GET")
    .map((entry) => `${entry.method} ${entry.route}`);

describe("Policy with adoptExisting", () => {
  // One provider per operation, as the engine runs it: the names it lists are the operation's.
  let provider: PolicyProvider;

  beforeEach(async () => {
    provider = new PolicyProvider();
    provider.context.useClient(client);
    for await (const policy of client.policies.listAll(organization)) await client.policies.delete(policy.id);
    const existing = await client.policies.create(organization, {
      name: "require-tags",
      description: "held",
      enforcementLevel: "hard-mandatory",
      policySetIds: [policySetId],
    });
    await client.policies.upload(existing.id, code);
    server.requestLog.clear();
  });

  const adopt = async (overrides: Record<string, unknown>) => {
    const checked = await provider.check(
      {},
      {
        organization,
        name: "require-tags",
        description: "held",
        enforcementLevel: "hard-mandatory",
        policySetIds: [policySetId],
        codeFile,
        adoptExisting: true,
        ...overrides,
      },
    );
    expect(checked.failures).toEqual([]);
    return provider.create(checked.inputs as PolicyInputs);
  };

  it("takes over a policy that matches the program with reads only", async () => {
    const { outs } = await adopt({});
    expect(writes()).toEqual([]);
    expect(outs).toMatchObject({ description: "held", enforcementLevel: "hard-mandatory", codeSize: code.length });
  });

  it("sends only the attribute that differs", async () => {
    await adopt({ description: "declared" });
    expect(writes()).toEqual(["PATCH /api/v2/policies/:policyId"]);
  });

  it("uploads only code that differs", async () => {
    const other = join(temporaryDirectory("adopt-other-", "test"), "other.sentinel");
    writeFileSync(other, `${code}# changed\n`);
    const { id } = await adopt({ codeFile: other });
    expect(writes()).toEqual(["PUT /api/v2/policies/:policyId/upload"]);
    expect((await client.policies.download(id)).toString()).toBe(`${code}# changed\n`);
  });

  it("creates a policy that does not exist yet, after looking for it", async () => {
    const { id } = await adopt({ name: "brand-new" });
    expect(writes()).toEqual([
      "POST /api/v2/organizations/:organization/policies",
      "PUT /api/v2/policies/:policyId/upload",
    ]);
    expect((await client.policies.read(id)).name).toBe("brand-new");
  });
});

describe("ModuleVersionDeprecation over a version deprecated already", () => {
  // A provider per test: each stands for an operation of its own.
  let provider: ModuleVersionDeprecationProvider;
  const inputs: ModuleVersionDeprecationInputs = {
    organization,
    moduleName: "vpc",
    moduleProvider: "aws",
    version: "1.0.0",
    reason: "Superseded by 1.1.0.",
    link: "https://example.com/vpc",
    adoptExisting: true,
  };

  beforeEach(async () => {
    provider = new ModuleVersionDeprecationProvider();
    provider.context.useClient(client);
    await client.moduleVersions.deprecate({
      organization,
      name: "vpc",
      provider: "aws",
      version: "1.0.0",
      reason: inputs.reason,
      link: inputs.link!,
    });
    server.requestLog.clear();
  });

  it("refuses it without adoptExisting, naming the ways out, and writes nothing", async () => {
    const notAdopting = provider.create({ ...inputs, adoptExisting: false });
    await expect(notAdopting).rejects.toThrow(
      /acme\/vpc\/aws\/1\.0\.0 is already deprecated .*aliases.*adoptExisting: true.*tfe-governance pending-creates --apply/,
    );
    expect(writes()).toEqual([]);
  });

  it("with adoptExisting, takes it over without deprecating again when the reason and link are the ones held", async () => {
    const { id, outs } = await provider.create(inputs);
    expect(writes()).toEqual([]);
    expect(id).toBe("acme/vpc/aws/1.0.0");
    expect(outs).toMatchObject({
      reason: inputs.reason,
      effectiveReason: expect.stringMatching(/^Superseded by 1\.1\.0\. /),
    });
    const read = await provider.read(id, outs);
    expect(await provider.diff(id, read.props as never, inputs)).toMatchObject({ changes: false });
  });

  it.each([[{ reason: "Another reason." }], [{ link: "https://example.com/other" }], [{ link: null }]])(
    "with adoptExisting, deprecates again for %j",
    async (override) => {
      await provider.create({ ...inputs, ...override });
      expect(writes()).toEqual([
        "PATCH /api/v2/organizations/:organization/registry-modules/private/:namespace/:name/:provider/:version",
      ]);
    },
  );
});
