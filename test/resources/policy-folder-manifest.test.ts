import { describe, expect, it } from "vitest";
import {
  type PolicyFolderManifestInputs,
  PolicyFolderManifestProvider,
} from "../../src/resources/policy-folder/manifest";

// The manifest a PolicyFolder keeps of its policies and levels: its diff sees the folder's recorded manifest (the
// state's outputs) and the new declaration, which is how a removed policy block fails preview at all (a provider is
// not asked about a delete before it runs).

const provider = new PolicyFolderManifestProvider();
const before = {
  kind: "sentinel",
  policies: { a: "hard-mandatory", b: "soft-mandatory", c: "advisory" },
  allowWeakening: false,
} as PolicyFolderManifestInputs;

/** The refusal of going from `olds` to `news`, or undefined where the diff passes. */
async function refusalOf(news: Partial<PolicyFolderManifestInputs>, olds = before): Promise<string | undefined> {
  const checked = (await provider.check({}, { ...before, ...news })).inputs as PolicyFolderManifestInputs;
  return provider.diff("manifest-x", olds, checked).then(
    () => undefined,
    (error: Error) => error.message,
  );
}

describe("PolicyFolderManifestProvider.diff", () => {
  it("lists every removed policy and every lowered level at once, and how to allow them", async () => {
    expect(await refusalOf({ policies: { a: "advisory", c: "advisory" } })).toMatch(
      /weakens governance: policy "a" goes from hard-mandatory to advisory; policy "b" \(soft-mandatory\) is removed\. .*allowWeakening: true.*tfe:allowWeakening true/,
    );
  });

  it("lets raised levels, added policies, a new folder and an allowed weakening through", async () => {
    expect(await refusalOf({ policies: { ...before.policies, c: "hard-mandatory", d: "advisory" } })).toBeUndefined();
    expect((await provider.check({}, { ...before })).failures).toBeUndefined();
    expect(await refusalOf({ policies: { a: "advisory" }, allowWeakening: true })).toBeUndefined();
  });

  it("compares OPA levels on the OPA scale", async () => {
    const opa = { kind: "opa", policies: { deny: "mandatory" }, allowWeakening: false } as PolicyFolderManifestInputs;
    expect(await refusalOf({ kind: "opa", policies: { deny: "advisory" } }, opa)).toMatch(
      /policy "deny" goes from mandatory to advisory/,
    );
  });

  it("refuses a kind change, which replaces every policy: a Sentinel folder rewritten as OPA drops each one", async () => {
    const refusal = await refusalOf({ kind: "opa", policies: { a: "mandatory" } });
    expect(refusal).toMatch(
      /kind goes from sentinel to opa, which replaces the policy folder: policies of two kinds cannot be compared/,
    );
    expect(refusal).toContain('policy "b" (soft-mandatory) is removed');
    expect(refusal).toContain('policy "c" (advisory) is removed');
  });
});
