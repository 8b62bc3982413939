import { describe, expect, it } from "vitest";
import { PolicyFolderManifestProvider } from "../../src/resources/policy-folder-manifest";

// The manifest a PolicyFolder keeps of its policies and levels: its check sees the folder's old and new declaration,
// which is how a removed policy block fails preview at all (a provider is not asked about a delete before it runs).

const provider = new PolicyFolderManifestProvider();
const before = { kind: "sentinel", policies: { a: "hard-mandatory", b: "soft-mandatory", c: "advisory" } };

async function failuresOf(news: Record<string, unknown>) {
  return (await provider.check(before, { ...before, ...news })).failures ?? [];
}

describe("PolicyFolderManifestProvider.check", () => {
  it("lists every removed policy and every lowered level at once, and how to allow them", async () => {
    const failures = await failuresOf({ policies: { a: "advisory", c: "advisory" } });
    expect(failures).toEqual([
      {
        property: "",
        reason: expect.stringMatching(
          /weakens governance: policy "a" goes from hard-mandatory to advisory; policy "b" \(soft-mandatory\) is removed\. .*allowWeakening: true.*tfe:allowWeakening true/,
        ),
      },
    ]);
  });

  it("lets raised levels, added policies, a new folder and an allowed weakening through", async () => {
    expect(await failuresOf({ policies: { ...before.policies, c: "hard-mandatory", d: "advisory" } })).toEqual([]);
    expect((await provider.check({}, before)).failures).toBeUndefined();
    expect(await failuresOf({ policies: { a: "advisory" }, allowWeakening: true })).toEqual([]);
  });

  it("compares OPA levels on the OPA scale", async () => {
    const opa = { kind: "opa", policies: { deny: "mandatory" } };
    const failures = (await provider.check(opa, { kind: "opa", policies: { deny: "advisory" } })).failures ?? [];
    expect(failures[0]?.reason).toMatch(/policy "deny" goes from mandatory to advisory/);
  });
});
