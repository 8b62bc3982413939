import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { CheckoutIdentity } from "../../src/policy-code/git";
import { checkoutMismatch } from "../../src/resources/policy-set/arguments";

// The checkout a set is compared through must be the repository and branch the service reads (rule 2 of the third
// review). Over every way a remote URL spells a repository (https, ssh, scp-like, with or without .git, a trailing
// slash, another case) and every branch state (on a branch, detached at the branch's commit, detached elsewhere),
// a checkout is accepted exactly when one remote names the set's repository and the branch is the set's.

const owners = ["acme", "Acme", "other"];
const names = ["policy-library", "policy-library-2", "library"];
const spelling = fc.record({
  owner: fc.constantFrom(...owners),
  name: fc.constantFrom(...names),
  form: fc.constantFrom("https", "ssh", "scp", "https-slash"),
  dotGit: fc.boolean(),
});
const urlOf = ({ owner, name, form, dotGit }: { owner: string; name: string; form: string; dotGit: boolean }) => {
  const path = `${owner}/${name}${dotGit ? ".git" : ""}`;
  if (form === "ssh") return `ssh://git@github.com/${path}`;
  if (form === "scp") return `git@github.com:${path}`;
  return `https://github.com/${path}${form === "https-slash" ? "/" : ""}`;
};

describe("a checkout shown to be what the set reads", () => {
  it("is accepted exactly when a remote names the repository and the branch is the set's", () => {
    fc.assert(
      fc.property(
        fc.array(spelling, { maxLength: 3 }),
        fc.constantFrom("main", "relaxed"),
        fc.constantFrom("main", "relaxed", null),
        fc.boolean(),
        (remotes, setBranch, checkedOut, headAtTracking) => {
          const head = "a".repeat(40);
          const identity: CheckoutIdentity = {
            branch: checkedOut,
            head,
            remoteUrls: remotes.map(urlOf),
            remoteBranches: [{ remote: "origin", branch: setBranch, commit: headAtTracking ? head : "b".repeat(40) }],
            remoteDefaults: ["main"],
          };
          const named = remotes.some(
            (remote) => remote.owner.toLowerCase() === "acme" && remote.name === "policy-library",
          );
          // On the branch, or at its remote-tracking commit (what the service reads there), whatever is checked out.
          const onBranch = checkedOut === setBranch || headAtTracking;
          const mismatch = checkoutMismatch(identity, {
            identifier: "acme/policy-library",
            branch: setBranch,
            ingressSubmodules: false,
            oauthTokenId: "ot-x",
            githubAppInstallationId: null,
          });
          expect(mismatch === undefined, JSON.stringify({ remotes: identity.remoteUrls, checkedOut, mismatch })).toBe(
            named && onBranch,
          );
        },
      ),
      { numRuns: 400, seed: 20261127 },
    );
  });
});
