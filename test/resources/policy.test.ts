import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { TfeApiError, TfeClient } from "../../src/client";
import { hashCode, type PolicyInputs, type PolicyOutputs, PolicyProvider } from "../../src/resources/policy";
import { unknownValue } from "../../src/resources/provider-context";
import { type RunningServer, startServer } from "../../src/server";
import { startFaultServer } from "../client/helpers";
import { startSeededServer } from "../seeded-server";
import { temporaryDirectory } from "../temporary-directory";

// The Policy provider's methods, called as the engine calls them, against the local server over HTTP.

const organization = "acme";
const token = "policy-provider-token";
const policySetId = "polset-providerTest01";
const files = temporaryDirectory("policy-provider-");
const sentinelFile = join(files, "main.sentinel");
const regoFile = join(files, "main.rego");
writeFileSync(sentinelFile, "main = rule { true }\n");
writeFileSync(regoFile, 'package terraform\n\ndeny[msg] { false; msg := "" }\nwarn[msg] { false; msg := "" }\n');

let server: RunningServer;
let client: TfeClient;
let provider: PolicyProvider;
/** A second Sentinel set of policies, and an OPA one. */
let secondSetId: string;
let opaSetId: string;

beforeAll(async () => {
  server = await startSeededServer({ organization, token, policySetId });
  client = new TfeClient({ address: server.url, token, rateLimit: false, retry: { baseDelayMs: 5, maxDelayMs: 20 } });
  secondSetId = (await client.policySets.create(organization, { name: "second" })).id;
  opaSetId = (await client.policySets.create(organization, { name: "opa-set", kind: "opa" })).id;
});

afterAll(async () => {
  await client.close();
  await server.close();
});

beforeEach(() => {
  provider = new PolicyProvider();
  provider.context.useClient(client);
});

afterEach(async () => {
  server.setFaults([]);
  for await (const policy of client.policies.listAll(organization)) await client.policies.delete(policy.id);
});

/** What the program would pass, before check. */
function args(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { organization, name: "require-tags", enforcementLevel: "advisory", codeFile: sentinelFile, ...overrides };
}

async function checked(overrides: Record<string, unknown> = {}): Promise<PolicyInputs> {
  const result = await provider.check({}, args(overrides));
  expect(result.failures).toEqual([]);
  return result.inputs as PolicyInputs;
}

async function failuresOf(overrides: Record<string, unknown>): Promise<{ property: string; reason: string }[]> {
  return (await provider.check({}, args(overrides))).failures ?? [];
}

async function policiesOnServer() {
  const all = [];
  for await (const policy of client.policies.listAll(organization)) all.push(policy);
  return all;
}

const postStatuses = () =>
  server.requestLog
    .entries()
    .filter((entry) => entry.method === "POST")
    .map((entry) => entry.status);

async function created(overrides: Record<string, unknown> = {}): Promise<{ id: string; outs: PolicyOutputs }> {
  const result = await provider.create(await checked(overrides));
  return { id: result.id, outs: result.outs as PolicyOutputs };
}

describe("check", () => {
  it("normalizes inputs: defaults, sorted policy sets, code hash and size instead of the text", async () => {
    const inputs = await checked({
      enforcementLevel: undefined,
      policySetIds: [secondSetId, policySetId, secondSetId],
    });
    expect(inputs).toMatchObject({
      kind: "sentinel",
      enforcementLevel: "soft-mandatory",
      description: null,
      query: null,
      policySetIds: [policySetId, secondSetId].sort(),
      codeHash: hashCode(Buffer.from("main = rule { true }\n")),
      codeSize: 21,
      adoptExisting: false,
    });
    const opa = await checked({
      kind: "opa",
      query: "data.terraform.deny",
      enforcementLevel: undefined,
      codeFile: regoFile,
    });
    expect(opa.enforcementLevel).toBe("advisory");
  });

  it.each([
    [{ name: "has space" }, "name", /letters, digits/],
    [{ name: "a/b" }, "name", /letters, digits/],
    [{ kind: "python" }, "kind", /"sentinel" or "opa"/],
    [{ kind: "tfpolicy" }, "kind", /no kind of individual policy: .*declare a PolicySet with kind "tfpolicy"/],
    [{ kind: "opa", codeFile: regoFile, enforcementLevel: "advisory" }, "query", /required for opa/],
    [{ query: "data.x" }, "query", /only valid for opa/],
    [{ enforcementLevel: "mandatory" }, "enforcementLevel", /hard-mandatory/],
    [
      { kind: "opa", query: "data.x", enforcementLevel: "soft-mandatory" },
      "enforcementLevel",
      /"mandatory", "advisory"/,
    ],
    [{ enforce: [{ mode: "advisory" }, { mode: "advisory" }] }, "enforce", /exactly one/],
    [
      { enforce: [{ mode: "hard-mandatory" }], enforcementLevel: "advisory" },
      "enforce",
      /contradicts enforcementLevel "advisory": set only enforcementLevel$/,
    ],
    [{ enforce: [{ mode: "mandatory" }], enforcementLevel: undefined }, "enforce", /mode "mandatory".*hard-mandatory/],
    [{ codeFile: join(files, "missing.sentinel") }, "codeFile", /does not exist/],
    [{ codeFile: undefined }, "codeFile", /exactly one of codeFile/],
    [{ code: "main = rule { true }" }, "code", /exactly one of codeFile/],
    [{ organization: "acme/other" }, "organization", /cannot contain/],
    [{ organization: undefined }, "organization", /tfe:organization/],
    [{ policySetIds: ["", "x"] }, "policySetIds", /list of policy set ids/],
    [
      { policySetIds: ["polset-a", "baseline"] },
      "policySetIds",
      /policySetIds\[1\] "baseline" is not a policy set id.*name is not its id/,
    ],
  ])("rejects %j naming %s and the fix", async (overrides, property, reason) => {
    const failures = await failuresOf(overrides);
    expect(failures).toContainEqual({ property, reason: expect.stringMatching(reason) });
  });

  it("refuses code files over 10 MB before any request", async () => {
    const big = join(files, "big.sentinel");
    writeFileSync(big, Buffer.alloc(10 * 1024 * 1024 + 1, 0x61));
    server.requestLog.clear();
    expect(await failuresOf({ codeFile: big })).toContainEqual({
      property: "codeFile",
      reason: expect.stringMatching(/10 MB/),
    });
    expect(server.requestLog.entries()).toEqual([]);
  });

  it("takes the deprecated enforce mode as the enforcement level", async () => {
    const inputs = await checked({
      enforcementLevel: undefined,
      enforce: [{ path: "x.sentinel", mode: "hard-mandatory" }],
    });
    expect(inputs.enforcementLevel).toBe("hard-mandatory");
    expect(inputs).not.toHaveProperty("enforce");
  });

  it("accepts values that are unknown during preview", async () => {
    const result = await provider.check(
      {},
      args({ name: unknownValue, codeFile: unknownValue, policySetIds: unknownValue }),
    );
    expect(result.failures).toEqual([]);
  });

  it("accepts an enforce entry, or its mode, that is unknown during preview", async () => {
    for (const enforce of [[unknownValue], [{ mode: unknownValue }]]) {
      const result = await provider.check({}, args({ enforcementLevel: undefined, enforce }));
      expect(result.failures).toEqual([]);
      expect(result.inputs.enforcementLevel).toBe(unknownValue);
    }
  });
});

describe("check: OPA code, in the dialect of the sets it joins", () => {
  const v1Code = 'package terraform\n\ndeny contains msg if { false; msg := "" }\n';
  const failures = async (overrides: Record<string, unknown>) =>
    (
      (await provider.check({}, args({ kind: "opa", query: "data.terraform.deny", codeFile: undefined, ...overrides })))
        .failures ?? []
    ).map((failure) => failure.reason);

  it("reads Rego as the service's latest runtime does (v0), naming both fixes for v1 code; regoVersion v1 reads it", async () => {
    const refused = (await failures({ code: v1Code })).join("\n");
    expect(refused).toMatch(/code: policy\.rego:3: rego_parse_error/);
    expect(refused).toMatch(/written as Rego v1 \(if, contains\).*add "import rego\.v1".*or set regoVersion: "v1"/);
    expect(await failures({ code: v1Code, regoVersion: "v1" })).toEqual([]);
    expect(await failures({ code: v1Code.replace("\n\n", "\n\nimport rego.v1\n\n") })).toEqual([]);
  });

  it("checks the query against the rules the code defines, naming the closest", async () => {
    expect(await failures({ code: v1Code, regoVersion: "v1", query: "data.terraform.denny" })).toEqual([
      "query: query data.terraform.denny names no rule of the policy's code: did you mean data.terraform.deny?",
    ]);
  });
});

describe("diff: changes that weaken governance, against the state's outputs", () => {
  /** The refusal of a change from `from` (as an earlier up left it) to `to`, or undefined where it passes. */
  const lowered = async (from: Record<string, unknown>, to: Record<string, unknown>) => {
    const olds = (await checked(from)) as unknown as PolicyOutputs;
    const news = await checked(to);
    server.requestLog.clear();
    return provider.diff("pol-test", olds, news).then(
      () => undefined,
      (error: Error) => error.message,
    );
  };

  it.each([
    ["hard-mandatory", "advisory", {}],
    ["hard-mandatory", "soft-mandatory", {}],
    ["soft-mandatory", "advisory", {}],
    ["mandatory", "advisory", { kind: "opa", query: "data.terraform.deny", codeFile: regoFile }],
  ])("fails %s to %s before any write, naming the policy, both levels and how to allow it", async (from, to, opa) => {
    const refusal = await lowered({ ...opa, enforcementLevel: from }, { ...opa, enforcementLevel: to });
    expect(refusal).toMatch(
      new RegExp(
        `^policy "require-tags" weakens governance: enforcementLevel goes from ${from} to ${to}\\. .*allowWeakening: true.*tfe:allowWeakening true.*TFE_ALLOW_WEAKENING=true for one run`,
      ),
    );
    // It reads what the service holds (a level raised outside would be stricter than the state), and writes nothing.
    expect(server.requestLog.entries().filter((entry) => entry.method !== "GET")).toEqual([]);
  });

  it("fails a policy leaving a policy set before any write, naming the set, unless allowed", async () => {
    expect(await lowered({ policySetIds: [policySetId] }, { policySetIds: [] })).toMatch(
      new RegExp(`policy "require-tags" weakens governance: it leaves policy set ${policySetId}\\..*allowWeakening`),
    );
    expect(server.requestLog.entries().filter((entry) => entry.method !== "GET")).toEqual([]);
    expect(await lowered({ policySetIds: [policySetId] }, { policySetIds: [], allowWeakening: true })).toBeUndefined();
    expect(await lowered({ policySetIds: [] }, { policySetIds: [policySetId] })).toBeUndefined();
  });

  it("takes the deprecated enforce form's mode as the new level", async () => {
    expect(
      await lowered(
        { enforcementLevel: "hard-mandatory" },
        { enforcementLevel: undefined, enforce: [{ path: "x", mode: "advisory" }] },
      ),
    ).toMatch(/enforcementLevel goes from hard-mandatory to advisory/);
  });

  it("counts a kind change as one it cannot compare: the policy is replaced by one of another kind", async () => {
    const opa = { kind: "opa", query: "data.terraform.deny", codeFile: regoFile, enforcementLevel: "mandatory" };
    expect(await lowered({ enforcementLevel: "hard-mandatory" }, opa)).toMatch(
      /^policy "require-tags" cannot be compared with what is enforced now, so it counts as weakening governance: kind goes from sentinel to opa, which replaces the policy: policies of two kinds cannot be compared\. .*allowWeakening/,
    );
  });

  it("compares with the service too: a level raised outside since the last refresh is not lowered unnoticed", async () => {
    const { id, outs } = await created({ enforcementLevel: "advisory" });
    await client.policies.update(id, { enforcementLevel: "hard-mandatory" });
    const news = await checked({ enforcementLevel: "soft-mandatory" });
    // The state says advisory, so the program raises it; the service holds hard-mandatory, so it would lower it.
    await expect(provider.diff(id, outs, news)).rejects.toThrow(
      /enforcementLevel goes from hard-mandatory to soft-mandatory \(as the service holds it now: changed outside Pulumi\)/,
    );
  });

  it("does not judge the diff a refresh asks for to show what changed outside", async () => {
    const { id, outs } = await created({ enforcementLevel: "hard-mandatory" });
    // The engine diffs the refreshed outputs against the state's old inputs, which no check of this operation made.
    const { __checked: _stamp, ...oldInputs } = (await checked({ enforcementLevel: "advisory" })) as unknown as Record<
      string,
      unknown
    >;
    expect(await provider.diff(id, outs, oldInputs as unknown as PolicyInputs)).toMatchObject({ changes: true });
  });

  it("lets a raised level, a new policy and an allowed weakening through", async () => {
    expect(await lowered({ enforcementLevel: "advisory" }, { enforcementLevel: "hard-mandatory" })).toBeUndefined();
    expect((await provider.check({}, args({ enforcementLevel: "advisory" }))).failures).toEqual([]);
    const allowed = { enforcementLevel: "advisory", allowWeakening: true };
    expect(await lowered({ enforcementLevel: "hard-mandatory" }, allowed)).toBeUndefined();
  });

  it("lets the stack allow every weakening with tfe:allowWeakening", async () => {
    await provider.configure({
      config: { get: (key: string) => (key === "tfe:allowWeakening" ? "true" : undefined) },
    } as never);
    provider.context.useClient(client);
    expect(await lowered({ enforcementLevel: "hard-mandatory" }, { enforcementLevel: "advisory" })).toBeUndefined();
  });
});

describe("check: what the policy sets it joins would refuse, at preview", () => {
  it("fails a set of another kind, a set that holds versions, and a set that is not there, reading each once", async () => {
    const versioned = (await client.policySets.create(organization, { name: "versioned-set" })).id;
    await client.policySets.createVersion(versioned);
    server.requestLog.clear();
    const reasons = (await failuresOf({ policySetIds: [opaSetId, versioned, "polset-doesNotExist01"] })).map(
      (failure) => failure.reason,
    );
    expect(reasons).toHaveLength(3);
    expect(reasons).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          new RegExp(
            `policy set ${opaSetId} \\("opa-set"\\) holds opa policies, and this policy is sentinel: a set holds one kind`,
          ),
        ),
        expect.stringMatching(
          new RegExp(`policy set ${versioned} \\("versioned-set"\\) holds versions .* takes no individual policies`),
        ),
        expect.stringMatching(/policy set polset-doesNotExist01 does not exist, or this token cannot see it/),
      ]),
    );
    expect(server.requestLog.entries().map((entry) => `${entry.method} ${entry.route}`)).toEqual(
      Array(3).fill("GET /api/v2/policy-sets/:policySetId"),
    );
    await client.policySets.delete(versioned);
  });

  it("fails a kind change whose unchanged sets hold the old kind, before the delete that replacement would start with", async () => {
    const olds = await checked({ policySetIds: [policySetId] });
    const opa = { kind: "opa", query: "data.terraform.deny", codeFile: regoFile, policySetIds: [policySetId] };
    const result = await provider.check(olds as unknown as Record<string, unknown>, args(opa));
    expect(result.failures?.map((failure) => failure.reason)).toEqual([
      expect.stringMatching(new RegExp(`policy set ${policySetId} .* holds sentinel policies, and this policy is opa`)),
    ]);
  });

  it("refuses Sentinel code that does not parse, naming line, column and what was expected, before any request", async () => {
    server.requestLog.clear();
    expect(
      await failuresOf({
        codeFile: undefined,
        code: 'import "strings"\n\nmain = rule {\n  strings.has_prefix("a", "b")\n',
      }),
    ).toEqual([
      {
        property: "code",
        reason:
          'code: line 5, column 1: syntax error: expected "}" to close the rule opened at 3:13 (a rule holds one expression), found end of file',
      },
    ]);
    expect(server.requestLog.entries()).toEqual([]);
  });

  it("refuses an import that is no Sentinel import (a typo of strings), naming it and the fix, before any request", async () => {
    server.requestLog.clear();
    const failures = await failuresOf({
      codeFile: undefined,
      code: 'import "strngs"\n\nmain = rule { strngs.has_prefix("ab", "a") }\n',
    });
    expect(failures).toContainEqual({
      property: "code",
      reason:
        'code: line 1 imports "strngs", which is no Sentinel import, and a policy of its own has no sentinel.hcl to ' +
        "declare it: fix the name, or keep the policy in a PolicyFolder or PolicySet whose sentinel.hcl declares the import",
    });
    expect(server.requestLog.entries()).toEqual([]);
  });

  it("refuses a Sentinel policy with no main rule, as PolicyFolder and PolicySet do", async () => {
    expect(await failuresOf({ codeFile: undefined, code: "allowed = rule { true }\n" })).toEqual([
      {
        property: "code",
        reason: "code: the code defines no main rule: every Sentinel policy needs main = rule { ... }",
      },
    ]);
  });
});

describe("check: adopting a policy compares the program with what the service holds", () => {
  it("refuses a level left out or lowered on adoption, and adopts at the level held", async () => {
    await client.policies.create(organization, { name: "require-tags", enforcementLevel: "hard-mandatory" });
    const reasons = (await failuresOf({ enforcementLevel: undefined, adoptExisting: true })).map((f) => f.reason);
    expect(reasons).toEqual([
      expect.stringMatching(
        /^adopting policy "require-tags" \(pol-\w+\) weakens governance: enforcementLevel goes from hard-mandatory to soft-mandatory\. .*allowWeakening/,
      ),
    ]);
    expect(await failuresOf({ enforcementLevel: "hard-mandatory", adoptExisting: true })).toEqual([]);
    expect(await failuresOf({ enforcementLevel: "advisory", adoptExisting: true, allowWeakening: true })).toEqual([]);
  });
});

describe("diff", () => {
  const olds = async () => (await created({ description: "d", policySetIds: [policySetId] })).outs;

  it("reports no change for the same inputs", async () => {
    const old = await olds();
    expect(
      await provider.diff(old.policyId, old, await checked({ description: "d", policySetIds: [policySetId] })),
    ).toEqual({
      changes: false,
      changed: [],
      replaces: [],
      deleteBeforeReplace: false,
    });
  });

  it("reports no change when only the code file's path or adoptExisting differ", async () => {
    // The same file under another checkout (an absolute path built from __dirname on another machine) changes
    // nothing on the service, and adoptExisting acts only at creation: neither may fail a drift check.
    const old = await olds();
    const copy = join(temporaryDirectory("policy-checkout-", "test"), "main.sentinel");
    writeFileSync(copy, readFileSync(sentinelFile));
    const news = await checked({ description: "d", policySetIds: [policySetId], codeFile: copy, adoptExisting: true });
    expect(await provider.diff(old.policyId, old, news)).toEqual({
      changes: false,
      changed: [],
      replaces: [],
      deleteBeforeReplace: false,
    });
  });

  it.each([
    ["description", { description: "other" }],
    ["enforcementLevel", { enforcementLevel: "hard-mandatory" }],
  ])("updates %s in place", async (_property, change) => {
    const old = await olds();
    const result = await provider.diff(
      old.policyId,
      old,
      await checked({ description: "d", policySetIds: [policySetId], ...change }),
    );
    expect(result).toMatchObject({ changes: true, replaces: [] });
  });

  it("updates in place when the code changes", async () => {
    const old = await olds();
    const news = await checked({
      description: "d",
      policySetIds: [policySetId],
      codeFile: undefined,
      code: "main = rule { false }",
    });
    expect(await provider.diff(old.policyId, old, news)).toMatchObject({ changes: true, replaces: [] });
  });

  it("replaces on a new name, deleting first only when the name stays", async () => {
    const old = await olds();
    const renamed = await checked({ name: "renamed", description: "d", policySetIds: [policySetId] });
    expect(await provider.diff(old.policyId, old, renamed)).toEqual({
      changes: true,
      changed: [["name"]],
      replaces: ["name"],
      deleteBeforeReplace: false,
    });
    // The policy's set holds Sentinel policies: an OPA policy there is refused at check, before the replacement.
    const opa = { kind: "opa", query: "data.terraform.deny", codeFile: regoFile, description: "d" };
    expect(await failuresOf({ ...opa, policySetIds: [policySetId], allowWeakening: true })).toHaveLength(1);
    const newKind = await checked({ ...opa, policySetIds: [opaSetId], allowWeakening: true });
    expect(await provider.diff(old.policyId, old, newKind)).toEqual({
      changes: true,
      changed: [["kind"], ["query"], ["policySetIds"], ["codeHash"]],
      replaces: ["kind"],
      deleteBeforeReplace: true,
    });
    // Policy sets change in place, through the sets' relationships: no replacement, no window without the policy.
    const otherSets = await checked({ description: "d", policySetIds: [], allowWeakening: true });
    expect(await provider.diff(old.policyId, old, otherSets)).toEqual({
      changes: true,
      changed: [["policySetIds"]],
      replaces: [],
      deleteBeforeReplace: false,
    });
  });
});

/** The latest the service set a policy's updated-at at its last upload, as its outputs record it until a read. */
function answeredAt(outs: PolicyOutputs): string {
  return (outs as PolicyOutputs & { __uploadSettledBy: string }).__uploadSettledBy;
}

/** Waits until the second after `time` (the local server's clock is this machine's). */
async function untilSecondAfter(time: string): Promise<void> {
  const wait = Date.parse(time) + 1000 - Date.now() + 20;
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
}

describe("create", () => {
  it("creates the policy with its code in two requests and reports what the service holds", async () => {
    const declared = await checked({ description: "Owner tags", policySetIds: [policySetId] });
    server.requestLog.clear();
    const { id, outs } = await provider.create(declared);
    // The upload answers no body: when it was answered (its Date) stands for the updated-at it set until a read.
    expect(server.requestLog.entries().map((entry) => `${entry.method} ${entry.route}`)).toEqual([
      "POST /api/v2/organizations/:organization/policies",
      "PUT /api/v2/policies/:policyId/upload",
    ]);
    expect(outs).toMatchObject({ policyId: id, policySetIds: [policySetId], policySetCount: 1, codeSize: 21 });
    expect(outs.updatedAt).toBeNull();
    expect(Date.now() - Date.parse(answeredAt(outs))).toBeLessThan(5_000);
    server.requestLog.clear();
    // The first read takes the updated-at as the upload's, downloads nothing, and records it.
    const { __uploadSettledBy: _answered, ...recorded } = outs as PolicyOutputs & { __uploadSettledBy?: string };
    const read = (await provider.read(id, outs)).props as PolicyOutputs;
    expect(read).toEqual({ ...recorded, updatedAt: expect.any(String) });
    expect(server.requestLog.entries().map((entry) => entry.route)).toEqual(["/api/v2/policies/:policyId"]);
    expect((await client.policies.download(id)).toString()).toBe("main = rule { true }\n");
  });

  it("deletes the policy it just created when the upload fails, leaving nothing behind", async () => {
    server.setFaults([{ route: "PUT /api/v2/policies/:policyId/upload", status: 500 }]);
    await expect(created()).rejects.toThrow(/deleted again/);
    server.setFaults([]);
    expect(await policiesOnServer()).toEqual([]);
  });

  it("counts a delete after a failed upload as done when its answer was lost and the retry finds the policy gone", async () => {
    server.setFaults([
      { route: "PUT /api/v2/policies/:policyId/upload", status: 500 },
      { route: "DELETE /api/v2/policies/:policyId", status: 503, afterHandler: true, times: 1 },
    ]);
    await expect(created()).rejects.toThrow(/deleted again/);
    server.setFaults([]);
    expect(await policiesOnServer()).toEqual([]);
  });

  it("says so when deleting the policy again after a failed upload fails too, and how to recover", async () => {
    server.setFaults([
      { route: "PUT /api/v2/policies/:policyId/upload", status: 500 },
      { route: "DELETE /api/v2/policies/:policyId", status: 500 },
    ]);
    const failure = created();
    await expect(failure).rejects.toThrow(
      /deleting it again failed too.*the stack records it, and the next up uploads/,
    );
    await expect(failure).rejects.not.toThrow(/deleted again/);
    // Left on the service, and recorded: the engine keeps what the failure names, with no code hash, so the next up
    // uploads the code rather than leave the policy outside the state with no owner.
    const recorded = (await failure.catch((error: unknown) => error)) as { id?: string; properties?: PolicyOutputs };
    server.setFaults([]);
    const [left] = await policiesOnServer();
    expect(recorded.id).toBe(left?.id);
    expect(recorded.properties).toMatchObject({ name: "require-tags", policyId: left?.id, codeHash: null });
  });

  it("says that an adopted policy keeps its previous code when the upload fails", async () => {
    await client.policies.create(organization, { name: "require-tags", enforcementLevel: "hard-mandatory" });
    server.setFaults([{ route: "PUT /api/v2/policies/:policyId/upload", status: 500 }]);
    const failure = created({ adoptExisting: true, enforcementLevel: "hard-mandatory" });
    await expect(failure).rejects.toThrow(/failed; the adopted policy keeps its previous code: PUT/);
  });

  it("does not make a duplicate when the create's answer is lost to a 5xx", async () => {
    server.setFaults([
      { route: "POST /api/v2/organizations/:organization/policies", status: 503, afterHandler: true, times: 1 },
    ]);
    server.requestLog.clear();
    const { id } = await created();
    expect((await policiesOnServer()).map((policy) => policy.id)).toEqual([id]);
    expect(postStatuses()).toEqual([503]);
  });

  it("takes the policy a lost create made only after the lookup that missed it, instead of leaving it behind", async () => {
    // The race the lookup cannot close: the first POST's policy appears once the lookup has found nothing, and the
    // retry is refused for the name. The retry's refusal is the sign: that policy is the one just sent.
    const policies = client.policies;
    let lost: (() => Promise<unknown>) | undefined;
    const racing = Object.create(client) as TfeClient;
    Object.defineProperty(racing, "policies", {
      value: Object.assign(Object.create(policies), {
        create: async (org: string, options: Parameters<typeof policies.create>[1]) => {
          if (!lost) {
            lost = () => policies.create(org, options);
            throw new TfeApiError({
              status: 503,
              method: "POST",
              path: "/api/v2/organizations/acme/policies",
              errors: [],
              attempts: 1,
            });
          }
          return policies.create(org, options);
        },
        listAll: (...args: Parameters<typeof policies.listAll>) => {
          const listing = policies.listAll(...args);
          // The lost POST lands right after the lookup has read the list.
          return (async function* () {
            yield* listing;
            await lost?.();
          })();
        },
      }),
    });
    provider.context.useClient(racing);
    const { id } = await created();
    expect((await policiesOnServer()).map((policy) => policy.id)).toEqual([id]);
  });

  it("takes over what the last create attempt made when its answer is lost too, rather than leave it behind", async () => {
    // Two attempts fail before the service acts, the third after: the policy exists though every answer was a 503.
    server.setFaults([
      { route: "POST /api/v2/organizations/:organization/policies", status: 503, times: 2 },
      { route: "POST /api/v2/organizations/:organization/policies", status: 503, afterHandler: true, times: 1 },
    ]);
    server.requestLog.clear();
    const { id } = await created();
    const all = await policiesOnServer();
    expect(all.map((policy) => policy.id)).toEqual([id]);
    expect(all[0]!.updatedAt, "the code was uploaded").not.toBeNull();
    expect(postStatuses()).toEqual([503, 503, 503]);
  });

  it("does not make a duplicate when every show and list links to a download, as spec 2.1 reads", async () => {
    // Spec 2.1 puts links.download in every show, update and list response: only updated-at (null before the
    // first upload) tells a policy without code. A proxy in front of the local server adds the link.
    const proxy = await startFaultServer((request, response) => {
      void (async () => {
        const answer = await fetch(server.url + request.url, {
          method: request.method,
          headers: Object.fromEntries(
            ["authorization", "content-type", "accept"].flatMap((name) =>
              request.headers[name] ? [[name, String(request.headers[name])]] : [],
            ),
          ),
          body: request.body.byteLength > 0 ? new Uint8Array(request.body) : undefined,
          redirect: "manual",
        });
        let body = Buffer.from(await answer.arrayBuffer());
        if (request.method !== "POST" && answer.headers.get("content-type")?.includes("json") && body.length > 0) {
          const document = JSON.parse(body.toString());
          for (const resource of [document.data ?? []].flat()) {
            if (resource.type === "policies") resource.links.download = `${resource.links.self}/download`;
          }
          body = Buffer.from(JSON.stringify(document));
        }
        const headers = Object.fromEntries(answer.headers);
        delete headers["content-length"];
        response.writeHead(answer.status, headers);
        response.end(body);
      })();
    });
    const proxied = new TfeClient({ address: proxy.url, token, rateLimit: false, retry: { maxRetries: 0 } });
    provider.context.useClient(proxied);
    server.setFaults([
      { route: "POST /api/v2/organizations/:organization/policies", status: 503, afterHandler: true, times: 1 },
    ]);
    try {
      const { id } = await created();
      expect((await policiesOnServer()).map((policy) => policy.id)).toEqual([id]);
    } finally {
      await proxied.close();
    }
  });

  it("adopts a policy that a set holds without taking that membership over, and joins the sets it declares", async () => {
    const existing = await client.policies.create(organization, {
      name: "require-tags",
      enforcementLevel: "hard-mandatory",
      policySetIds: [policySetId],
    });
    // The membership is another owner's (a PolicySet's policyIds, or a person's): not this resource's to record.
    const { id, outs } = await created({ adoptExisting: true, enforcementLevel: "hard-mandatory" });
    expect(id).toBe(existing.id);
    expect(outs.policySetIds).toEqual([]);
    expect((await client.policies.read(id)).policySetIds).toEqual([policySetId]);
    // A refresh leaves it so: no drift.
    expect((await provider.read(id, outs)).props).toMatchObject({ policySetIds: [] });
  });

  it("fails preview for a name another object holds, naming every way out, for one listing however many check", async () => {
    const theirs = await client.policies.create(organization, { name: "require-tags", enforcementLevel: "advisory" });
    server.requestLog.clear();
    const failures = await Promise.all([failuresOf({}), failuresOf({ name: "restrict-types" }), failuresOf({})]);
    expect(failures[0]).toEqual([
      {
        property: "name",
        reason: expect.stringMatching(
          new RegExp(
            `"require-tags" already exists in organization "acme" \\(${theirs.id}\\).*aliases.*adoptExisting: true`,
          ),
        ),
      },
    ]);
    expect(failures[1]).toEqual([]);
    expect(failures[2]).toEqual(failures[0]);
    expect(server.requestLog.entries().map((entry) => `${entry.method} ${entry.route}`)).toEqual([
      "GET /api/v2/organizations/:organization/policies",
    ]);
    // Adopting, renaming back to a name it holds, and a name not known yet at preview pass.
    expect(await failuresOf({ adoptExisting: true })).toEqual([]);
    const held = await provider.check(args(), args());
    expect(held.failures).toEqual([]);
    // The engine checks a replacement twice, the second time as a create: the name is this resource's own.
    expect(await failuresOf({})).toEqual([]);
    expect(await failuresOf({ name: unknownValue })).toEqual([]);
  });

  it("refuses a taken name with the way to adopt it, and adopts it when asked", async () => {
    // A preview before someone took the name: up still refuses it.
    const declared = await checked();
    const existing = await client.policies.create(organization, {
      name: "require-tags",
      enforcementLevel: "hard-mandatory",
    });
    await expect(provider.create(declared)).rejects.toThrow(/already exists.*adoptExisting: true/);
    const { id, outs } = await created({ adoptExisting: true, description: "adopted" });
    expect(id).toBe(existing.id);
    expect(outs).toMatchObject({ enforcementLevel: "advisory", description: "adopted" });
    expect((await client.policies.download(id)).toString()).toBe("main = rule { true }\n");
  });

  it("refuses a taken name even when the policy there is exactly the declaration, naming every way out", async () => {
    // What a renamed resource's create meets: the old resource's policy, the same in everything.
    const old = await created();
    server.requestLog.clear();
    const fresh = new PolicyProvider();
    fresh.context.useClient(client);
    const error = await fresh.create(await checked()).then(
      () => undefined,
      (failure: Error) => failure,
    );
    expect(error?.message).toMatch(
      new RegExp(
        `"require-tags" already exists in organization "acme" \\(${old.id}\\), and this resource did not create it.*` +
          "aliases.*adoptExisting: true.*tfe-governance pending-creates --apply",
      ),
    );
    expect(
      server.requestLog
        .entries()
        .filter((entry) => entry.method !== "GET")
        .map((entry) => entry.method),
    ).toEqual(["POST"]);
    expect((await client.policies.download(old.id)).toString()).toBe("main = rule { true }\n");
  });

  it("refuses a policy without code that another run left: only its own lost POST is taken over", async () => {
    const declared = await checked();
    const withoutCode = await client.policies.create(organization, {
      name: "require-tags",
      enforcementLevel: "advisory",
    });
    await expect(provider.create(declared)).rejects.toThrow(/already exists/);
    expect((await client.policies.read(withoutCode.id)).updatedAt).toBeNull();
  });

  it("refuses a second resource declaring the same name in one operation, adoptExisting or not", async () => {
    await created();
    await expect(created()).rejects.toThrow(/already exists/);
    await expect(created({ adoptExisting: true })).rejects.toThrow(
      /already managed by another resource of this stack: declare it once/,
    );
  });

  it("renamed with adoptExisting: the new resource takes over and the old one's delete leaves the policy", async () => {
    const old = await created();
    const next = new PolicyProvider();
    next.context.useClient(client);
    const renamed = await next.create(await checked({ adoptExisting: true }));
    await next.delete(old.id, old.outs);
    expect(renamed.id).toBe(old.id);
    expect((await client.policies.download(old.id)).toString()).toBe("main = rule { true }\n");
  });

  it("compares an adoption of a name another resource of the stack held before, like any adoption", async () => {
    const old = await created({ enforcementLevel: "hard-mandatory" });
    // One operation: the old resource moves to another name, and a new one adopts its name at a lower level.
    const urn = (name: string) => `urn:pulumi:dev::p::pulumi-nodejs:dynamic/tfe:Policy::${name}`;
    // The next operation's provider, as the engine starts one per command.
    const provider = new PolicyProvider();
    provider.context.useClient(client);
    await provider.check(
      old.outs as unknown as Record<string, unknown>,
      args({ name: "moved-away", __urn: urn("old") }),
    );
    const adopting = await provider.check(
      {},
      args({ adoptExisting: true, enforcementLevel: "advisory", __urn: urn("new") }),
    );
    // A replacement's second check, as a create, meets its own old object: no adoption to compare.
    const replacing = await provider.check({}, args({ name: "moved-away", adoptExisting: true, __urn: urn("old") }));
    expect(replacing.failures).toEqual([]);
    expect(adopting.failures?.map((failure) => failure.reason).join("\n")).toMatch(
      /adopting policy "require-tags" .*weakens governance: enforcementLevel goes from hard-mandatory to advisory/,
    );
  });

  it.each([
    ["another description", { description: "theirs" }],
    ["another level", { enforcementLevel: "hard-mandatory" }],
  ])("still refuses a taken name when the policy there has %s", async (_case, difference) => {
    const declared = await checked();
    const theirs = await client.policies.create(organization, {
      name: "require-tags",
      enforcementLevel: "advisory",
      ...difference,
    } as Parameters<typeof client.policies.create>[1]);
    await expect(provider.create(declared)).rejects.toThrow(/already exists.*adoptExisting: true/);
    expect((await client.policies.read(theirs.id)).updatedAt).toBeNull();
  });

  it("still refuses a taken name when the policy there holds other code", async () => {
    const declared = await checked();
    const theirs = await client.policies.create(organization, { name: "require-tags", enforcementLevel: "advisory" });
    await client.policies.upload(theirs.id, "main = rule { false }\n");
    await expect(provider.create(declared)).rejects.toThrow(/already exists.*adoptExisting: true/);
    expect((await client.policies.download(theirs.id)).toString()).toBe("main = rule { false }\n");
  });
});

describe("read", () => {
  it("notices an outside upload in the same second as ours, once past the latest the service's clock read then", async () => {
    // The window an upload by someone else could hide in was the whole Date second of our upload's answer; what the
    // answers tell of the service's clock narrows it to about a round trip. Tried on fresh policies until one leaves
    // room in its second (a bound past the second's last 60 ms leaves none), at most ten.
    let tried = 0;
    for (; tried < 10; tried++) {
      const { id, outs } = await created({ name: `same-second-${tried}` });
      const bound = Date.parse(answeredAt(outs));
      const secondEnds = Math.floor(bound / 1000) * 1000 + 1000;
      if (secondEnds - bound < 60) continue;
      await new Promise((done) => setTimeout(done, Math.max(0, bound - Date.now() + 5)));
      await client.policies.upload(id, "main = rule { false }\n");
      const uploadedAt = (await client.policies.read(id)).updatedAt as string;
      if (Date.parse(uploadedAt) >= secondEnds) continue;
      // Within the second our upload was answered, and after it: its code is downloaded, so the change shows.
      const read = (await provider.read(id, outs)).props as PolicyOutputs;
      expect(read.codeHash).toBe(hashCode(Buffer.from("main = rule { false }\n")));
      break;
    }
    expect(tried).toBeLessThan(10);
  });

  it("reports every outside change so that it shows as drift", async () => {
    const { id, outs } = await created({
      kind: "opa",
      query: "data.terraform.deny",
      codeFile: regoFile,
      description: "d",
    });
    // An outside upload within the second our upload was answered would be taken for ours (docs/ci.md); this one is
    // later, as any change made after an up is.
    await untilSecondAfter(answeredAt(outs));
    await client.policies.update(id, {
      description: "outside",
      query: "data.terraform.warn",
      enforcementLevel: "mandatory",
    });
    await client.policies.upload(id, "package terraform\n");
    const result = await provider.read(id, outs);
    expect(result.props).toMatchObject({
      description: "outside",
      query: "data.terraform.warn",
      enforcementLevel: "mandatory",
      codeHash: hashCode(Buffer.from("package terraform\n")),
      codeFile: regoFile,
    });
    expect(result.inputs).toMatchObject({ description: "outside", enforcementLevel: "mandatory" });
    expect(result.inputs).not.toHaveProperty("policyId");
    // The state now says what the service enforces: putting the program's advisory back over the level raised
    // outside lowers it, and is refused unless allowed.
    const news = await checked({ kind: "opa", query: "data.terraform.deny", codeFile: regoFile, description: "d" });
    await expect(provider.diff(id, result.props as PolicyOutputs, news)).rejects.toThrow(
      /enforcementLevel goes from mandatory to advisory/,
    );
    const allowed = { ...news, allowWeakening: true };
    expect(await provider.diff(id, result.props as PolicyOutputs, allowed)).toMatchObject({
      changes: true,
      replaces: [],
    });
  });

  /** Reads every policy as one refresh does (a provider of its own, all reads at once); returns requests by route. */
  async function refreshAll(states: { id: string; outs: PolicyOutputs }[], verify = false) {
    const operation = new PolicyProvider();
    operation.context.useClient(client);
    if (verify) process.env.TFE_VERIFY_CODE_ON_REFRESH = "true";
    server.requestLog.clear();
    try {
      const results = await Promise.all(states.map(({ id, outs }) => operation.read(id, outs)));
      const requests: Record<string, number> = {};
      for (const entry of server.requestLog.entries()) {
        const key = `${entry.method} ${entry.origin === "download" ? "download origin" : entry.route}`;
        requests[key] = (requests[key] ?? 0) + 1;
      }
      return { results, requests };
    } finally {
      delete process.env.TFE_VERIFY_CODE_ON_REFRESH;
    }
  }
  const show = "GET /api/v2/policies/:policyId";
  const list = "GET /api/v2/organizations/:organization/policies";
  const download = "GET /api/v2/policies/:policyId/download";

  it("reads a stack's policies from the organization's list, and downloads only code whose updated-at moved", async () => {
    const made: { id: string; outs: PolicyOutputs }[] = [];
    for (const name of ["one", "two", "three", "four"]) made.push(await created({ name: `listed-${name}` }));
    // Just uploaded: each upload's answer bounds the updated-at it set, so even the first refresh downloads
    // nothing, and finds nothing changed; it records each updated-at in place of the bound.
    const first = await refreshAll(made);
    expect(first.requests).toEqual({ [show]: 1, [list]: 1 });
    expect(first.results.map((result) => result.props)).toEqual(
      made.map(({ outs }) => {
        const { __uploadSettledBy: _answered, ...recorded } = outs as PolicyOutputs & { __uploadSettledBy?: string };
        return { ...recorded, updatedAt: expect.any(String) };
      }),
    );
    const recorded = made.map(({ id }, index) => ({ id, outs: first.results[index]!.props as PolicyOutputs }));
    expect(recorded.every(({ outs }) => outs.updatedAt !== null)).toBe(true);

    const second = await refreshAll(recorded);
    expect(second.requests).toEqual({ [show]: 1, [list]: 1 });
    expect(second.results.map((result) => result.props)).toEqual(recorded.map(({ outs }) => outs));

    // Outside Pulumi: a new level on one, new code on another. Both show, and only the changed code is downloaded.
    await client.policies.update(recorded[1]!.id, { enforcementLevel: "hard-mandatory" });
    await client.policies.upload(recorded[2]!.id, "main = rule { false }\n");
    const third = await refreshAll(recorded);
    expect(third.results[1]!.props).toMatchObject({ enforcementLevel: "hard-mandatory" });
    expect(third.results[2]!.props).toMatchObject({ codeHash: hashCode(Buffer.from("main = rule { false }\n")) });
    // Our server moves updated-at on a PATCH too, so the level change costs a download; an upload always does.
    expect(third.requests).toEqual({ [show]: 1, [list]: 1, [download]: 2, "GET download origin": 2 });

    const verified = await refreshAll(recorded, true);
    expect(verified.requests[download]).toBe(4);
  });

  it("reads a small stack in a large organization by shows: its other list pages would cost more", async () => {
    const stack = [await created({ name: "mine-1" }), await created({ name: "mine-2" })];
    // 350 more: four pages of 100, where the stack reads 2 policies.
    for (let start = 0; start < 350; start += 50) {
      await Promise.all(
        Array.from({ length: 50 }, (_, index) =>
          client.policies.create(organization, { name: `theirs-${start + index}`, enforcementLevel: "advisory" }),
        ),
      );
    }
    const { results, requests } = await refreshAll(stack);
    expect(results.map((result) => result.props?.name)).toEqual(["mine-1", "mine-2"]);
    expect(requests).toMatchObject({ [show]: 2, [list]: 1 });
  });

  it("drops a policy missing from the list's answer only once a show confirms it is gone", async () => {
    const made = [await created({ name: "kept" }), await created({ name: "deleted-outside" })];
    await client.policies.delete(made[1]!.id);
    const { results, requests } = await refreshAll(made);
    expect(results[1]).toEqual({});
    expect(results[0]!.props).toMatchObject({ name: "kept" });
    expect(requests[show]).toBe(2);
  });

  it("keeps a live policy that a page shifted out of the listing: someone deleted another between two pages", async () => {
    const made: { id: string; outs: PolicyOutputs }[] = [];
    for (let index = 0; index < 102; index++)
      made.push(await created({ name: `paged-${String(index).padStart(3, "0")}` }));
    const firstPage = await client.policies.list(organization, { pageSize: 100, pageNumber: 1 });
    const secondPage = await client.policies.list(organization, { pageSize: 100, pageNumber: 2 });
    const deletedBetweenPages = firstPage.items[5]!.id;
    const shiftedOut = secondPage.items[0]!.id;
    // The service's own listing, page by page; someone deletes a policy of page 1 right after it was read.
    const paging = new TfeClient({ address: server.url, token, rateLimit: false });
    const list = paging.policies.list.bind(paging.policies);
    paging.policies.list = async (...args) => {
      const page = await list(...args);
      if (args[1]?.pageNumber === 1 && args[1]?.pageSize === 100) await client.policies.delete(deletedBetweenPages);
      return page;
    };
    const operation = new PolicyProvider();
    operation.context.useClient(paging);
    try {
      const states = made.filter(({ id }) => id !== deletedBetweenPages);
      const results = await Promise.all(states.map(({ id, outs }) => operation.read(id, outs)));
      const shifted = results[states.findIndex(({ id }) => id === shiftedOut)];
      expect(shifted?.props).toMatchObject({ policyId: shiftedOut });
      expect(results.filter((result) => result.props === undefined)).toEqual([]);
    } finally {
      await paging.close();
    }
  }, 60_000);

  it("drops a policy deleted outside Pulumi without an error", async () => {
    const { id, outs } = await created();
    await client.policies.delete(id);
    expect(await provider.read(id, outs)).toEqual({});
  });

  it("reads an existing policy by id alone, as Policy.get does", async () => {
    const { id } = await created({ description: "by id" });
    const result = await provider.read(id, {});
    expect(result.props).toMatchObject({ organization, name: "require-tags", description: "by id", policyId: id });
  });
});

describe("update", () => {
  it.each([
    ["a new description", { description: "new" }, { description: "new" }],
    ["a cleared description", { description: undefined }, { description: null }],
    ["a new enforcement level", { enforcementLevel: "hard-mandatory" }, { enforcementLevel: "hard-mandatory" }],
  ])("sends only %s", async (_case, change, expected) => {
    const { id, outs } = await created({ description: "old" });
    server.requestLog.clear();
    const result = await provider.update(id, outs, await checked({ description: "old", ...change }));
    expect(result.outs).toMatchObject(expected);
    expect(server.requestLog.entries().map((entry) => entry.method)).toEqual(["PATCH"]);
    // The PATCH's answer is what the service holds: a read finds the same. Not its updated-at: the state keeps the
    // one at which the code was last verified, which a PATCH does not do.
    expect(result.outs).toMatchObject({ updatedAt: outs.updatedAt });
    // Nor the upload's answer, which stands for updated-at until a read records it.
    const {
      updatedAt: _verifiedAt,
      __uploadSettledBy: _answered,
      ...held
    } = result.outs as PolicyOutputs & { __uploadSettledBy?: string };
    expect(_answered).toBe(answeredAt(outs));
    expect((await provider.read(id, result.outs as PolicyOutputs)).props).toMatchObject(held);
  });

  it("joins and leaves policy sets with one request per set, keeping the policy's id and code", async () => {
    const { id, outs } = await created({ policySetIds: [] });
    const joining = await checked({ policySetIds: [policySetId] });
    server.requestLog.clear();
    const joined = await provider.update(id, outs, joining);
    expect(server.requestLog.entries().map((entry) => `${entry.method} ${entry.path}`)).toEqual([
      `POST /api/v2/policy-sets/${policySetId}/relationships/policies`,
    ]);
    expect(joined.outs).toMatchObject({ policyId: id, policySetIds: [policySetId], policySetCount: 1 });
    expect((await client.policies.read(id)).policySetCount).toBe(1);

    server.requestLog.clear();
    const left = await provider.update(id, joined.outs as PolicyOutputs, await checked({ policySetIds: [] }));
    expect(server.requestLog.entries().map((entry) => `${entry.method} ${entry.path}`)).toEqual([
      `DELETE /api/v2/policy-sets/${policySetId}/relationships/policies`,
    ]);
    expect(left.outs).toMatchObject({ policyId: id, policySetIds: [], policySetCount: 0 });
    expect(await policiesOnServer()).toEqual([expect.objectContaining({ id, policySetCount: 0 })]);
    expect((await client.policies.download(id)).byteLength).toBe(outs.codeSize);
  });

  it("changes an OPA query", async () => {
    const { id, outs } = await created({ kind: "opa", query: "data.terraform.deny", codeFile: regoFile });
    await provider.update(id, outs, await checked({ kind: "opa", query: "data.terraform.warn", codeFile: regoFile }));
    expect((await client.policies.read(id)).query).toBe("data.terraform.warn");
  });

  it("uploads only when the code changed", async () => {
    const { id, outs } = await created();
    server.requestLog.clear();
    const news = await checked({ codeFile: undefined, code: "main = rule { false }\n" });
    const result = await provider.update(id, outs, news);
    // The upload alone: its answer stands for the updated-at it set.
    expect(server.requestLog.entries().map((entry) => entry.method)).toEqual(["PUT"]);
    expect((await client.policies.download(id)).toString()).toBe("main = rule { false }\n");
    expect(result.outs).toMatchObject({ codeHash: news.codeHash, updatedAt: null });
    const { __uploadSettledBy: _answered, ...recorded } = result.outs as PolicyOutputs & {
      __uploadSettledBy?: string;
    };
    expect((await provider.read(id, result.outs as PolicyOutputs)).props).toEqual({
      ...recorded,
      updatedAt: expect.any(String),
    });
  });
});

describe("delete", () => {
  it("succeeds twice: a policy already gone is success", async () => {
    const { id } = await created();
    await provider.delete(id);
    await provider.delete(id);
    await expect(client.policies.read(id)).rejects.toMatchObject({ status: 404 });
  });
});

describe("a 404 that may mean no permission rather than no policy (spec 5)", () => {
  const viewerToken = "policy-viewer-token";
  const strangerToken = "policy-stranger-token";
  let permissions: RunningServer;
  let owner: TfeClient;
  const clients: TfeClient[] = [];

  beforeAll(async () => {
    permissions = await startServer({
      seed: {
        organizations: [{ name: organization, plus: true }, { name: "elsewhere" }],
        tokens: [
          { token, organizations: [organization], managePolicies: true },
          { token: viewerToken, organizations: [organization], managePolicies: false },
          { token: strangerToken, organizations: ["elsewhere"], managePolicies: true },
        ],
      },
    });
    owner = providerWithToken(token).context.client;
  });

  afterAll(async () => {
    await Promise.all(clients.map((each) => each.close()));
    await permissions.close();
  });

  function providerWithToken(providerToken: string): PolicyProvider {
    const each = new TfeClient({ address: permissions.url, token: providerToken, rateLimit: false });
    clients.push(each);
    const withToken = new PolicyProvider();
    withToken.context.useClient(each);
    return withToken;
  }

  async function createdByOwner(): Promise<{ id: string; outs: PolicyOutputs }> {
    const result = await providerWithToken(token).create(await checked({ name: `p${clients.length}` }));
    return { id: result.id, outs: result.outs as PolicyOutputs };
  }

  it("keeps the policy in state at read when the token cannot see its organization", async () => {
    const { id, outs } = await createdByOwner();
    await expect(providerWithToken(strangerToken).read(id, outs)).rejects.toThrow(
      /404.*token.*"acme".*tfe:token, TFE_TOKEN/,
    );
  });

  it("fails delete when the token may see the policy but not delete it, instead of reporting it deleted", async () => {
    const { id, outs } = await createdByOwner();
    await expect(providerWithToken(viewerToken).delete(id, outs)).rejects.toThrow(/404.*Manage policies/);
    expect((await owner.policies.read(id)).id).toBe(id);
  });

  it("fails delete when the token cannot see the policy's organization", async () => {
    const { id, outs } = await createdByOwner();
    await expect(providerWithToken(strangerToken).delete(id, outs)).rejects.toThrow(/404.*"acme"/);
    expect((await owner.policies.read(id)).id).toBe(id);
  });

  it("still treats a policy deleted outside Pulumi as gone, at read and at delete", async () => {
    const { id, outs } = await createdByOwner();
    await owner.policies.delete(id);
    const viewer = providerWithToken(viewerToken);
    expect(await viewer.read(id, outs)).toEqual({});
    await providerWithToken(token).delete(id, outs);
  });
});
