import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../../src/server";
import { GitRepository, thirdGenerationLibrary } from "../vcs-repository";
import { call, organization, otherOrganization, otherToken, seed, settledVersion } from "./helpers";

// Sets read from version control on the local server: each seeded repository identifier is a local git repository;
// creating a set reads its branch into a version, a push announced to /_local/vcs-push makes the next one.

let server: RunningServer;
let library: GitRepository;
const oauthTokenId = "ot-policyLibrary00001";

beforeAll(async () => {
  library = GitRepository.create(thirdGenerationLibrary);
  server = await startServer({
    seed: {
      ...seed,
      vcsRepositories: [
        { identifier: "acme/policy-library", path: library.path },
        { identifier: "acme/private-library", path: library.path, organizations: [organization] },
      ],
      oauthTokens: [
        { id: oauthTokenId, organization },
        { id: "ot-globexConnection01", organization: otherOrganization },
      ],
    },
  });
});
afterAll(async () => {
  await server.close();
  library.remove();
});

async function createVcsSet(name: string, repo: Record<string, unknown>, more: Record<string, unknown> = {}) {
  return call(server, "POST", `/api/v2/organizations/${organization}/policy-sets`, {
    body: { data: { type: "policy-sets", attributes: { name, "vcs-repo": repo, ...more } } },
  });
}

const settled = (versionId: string) => settledVersion(server, versionId);

const repo = { identifier: "acme/policy-library", branch: "main", "oauth-token-id": oauthTokenId };

describe("policy sets read from version control", () => {
  it("reads the branch into a version of the policies path, whose ../ sources reach the rest of the repository", async () => {
    const head = library.git(["rev-parse", "HEAD"]).trim();
    const created = await createVcsSet("aws-from-vcs", repo, { "policies-path": "policies/aws" });
    expect(created.status).toBe(201);
    expect(created.body.data.attributes).toMatchObject({
      "policies-path": "policies/aws",
      "vcs-repo": {
        identifier: "acme/policy-library",
        branch: "main",
        "oauth-token-id": oauthTokenId,
        "service-provider": "github",
      },
    });
    const version = await settled(created.body.data.relationships["newest-version"].data.id);
    expect(version.attributes).toMatchObject({
      status: "ready",
      source: "github",
      "ingress-attributes": { "commit-sha": head, branch: "main", identifier: "acme/policy-library" },
    });
    const set = await call(server, "GET", `/api/v2/policy-sets/${created.body.data.id}`);
    expect(set.body.data.relationships["current-version"].data.id).toBe(version.id);
    // Its versions come from commits.
    const upload = await call(server, "POST", `/api/v2/policy-sets/${created.body.data.id}/versions`);
    expect(upload.status).toBe(422);
    expect(upload.text).toContain("reads from version control");
  });

  it("makes a new version for each push that changes a file, and only one the update patterns name", async () => {
    const all = await createVcsSet("any-change", repo, { "policies-path": "policies/aws" });
    const patterned = await createVcsSet("aws-only", repo, {
      "policies-path": "policies/aws",
      "policy-update-patterns": ["policies/aws/**/*"],
    });
    for (const created of [all, patterned]) await settled(created.body.data.relationships["newest-version"].data.id);
    library.commit(
      { "common-functions/tfplan-functions/tfplan-functions.sentinel": "find_resources = func(t) { return [t] }\n" },
      "Shared function",
    );
    const pushed = await call(server, "POST", "/_local/vcs-push", {
      auth: null,
      body: { identifier: "acme/policy-library" },
    });
    expect(pushed.status).toBe(200);
    const setsOf = async (id: string) =>
      (await call(server, "GET", `/api/v2/policy-sets/${id}`)).body.data.relationships;
    const versions: string[] = pushed.body.versions;
    expect(versions).toContain((await setsOf(all.body.data.id))["newest-version"].data.id);
    expect(versions).not.toContain((await setsOf(patterned.body.data.id))["newest-version"].data.id);
    // The same push again changes nothing.
    const again = await call(server, "POST", "/_local/vcs-push", {
      auth: null,
      body: { identifier: "acme/policy-library" },
    });
    expect(again.body.versions).toEqual([]);
  });

  it("errors a version whose repository or branch is not there, with the reason", async () => {
    const unknown = await createVcsSet("unknown-repo", { ...repo, identifier: "acme/no-such-repo" });
    expect((await settled(unknown.body.data.relationships["newest-version"].data.id)).attributes["error-message"]).toBe(
      'Failed to ingress repository "acme/no-such-repo": it was not found, or the VCS connection cannot read it',
    );
    const branch = await createVcsSet(
      "unknown-branch",
      { ...repo, branch: "release" },
      { "policies-path": "policies/aws" },
    );
    expect((await settled(branch.body.data.relationships["newest-version"].data.id)).attributes["error-message"]).toBe(
      'Failed to ingress repository "acme/policy-library": branch "release" was not found',
    );
    const missingPath = await createVcsSet("no-config-there", repo, { "policies-path": "policies/gcp" });
    expect(
      (await settled(missingPath.body.data.relationships["newest-version"].data.id)).attributes["error-message"],
    ).toMatch(/no policies\/gcp\/sentinel\.hcl in the repository/);
  });

  it("takes an empty credential as absent, as the Terraform provider sends it beside the other one", async () => {
    // What the tfe provider's tfe_policy_set sends for a vcs_repo with an OAuth token: both keys, one empty.
    const created = await createVcsSet("terraform-sent", { ...repo, "github-app-installation-id": "" });
    expect(created.status).toBe(201);
    expect(created.body.data.attributes["vcs-repo"]["github-app-installation-id"]).toBeNull();
    const updated = await call(server, "PATCH", `/api/v2/policy-sets/${created.body.data.id}`, {
      body: {
        data: { type: "policy-sets", attributes: { "vcs-repo": { ...repo, "github-app-installation-id": "" } } },
      },
    });
    expect(updated.status).toBe(200);
  });

  it("refuses a repository that the organization's VCS connections do not reach (422)", async () => {
    const repository = {
      identifier: "acme/private-library",
      branch: "main",
      "oauth-token-id": "ot-globexConnection01",
    };
    const refused = await call(server, "POST", `/api/v2/organizations/${otherOrganization}/policy-sets`, {
      auth: otherToken,
      body: { data: { type: "policy-sets", attributes: { name: "reads-acme", "vcs-repo": repository } } },
    });
    expect(refused.status).toBe(422);
    expect(refused.body.errors[0].detail).toContain(
      `repository acme/private-library is not reachable through organization "globex"`,
    );
    const own = await createVcsSet("reads-private", { ...repository, "oauth-token-id": oauthTokenId });
    expect(own.status).toBe(201);
  });

  it("refuses a credential that is not the organization's, and a policies path without a repository (422)", async () => {
    const stranger = await createVcsSet("stranger", { ...repo, "oauth-token-id": "ot-notours0000000001" });
    expect(stranger.status).toBe(422);
    expect(stranger.body.errors[0].source.pointer).toBe("/data/attributes/vcs-repo/oauth-token-id");
    const pathOnly = await call(server, "POST", `/api/v2/organizations/${organization}/policy-sets`, {
      body: { data: { type: "policy-sets", attributes: { name: "path-only", "policies-path": "policies/aws" } } },
    });
    expect(pathOnly.status).toBe(422);
  });
});
