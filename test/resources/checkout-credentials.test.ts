import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { TfeClient } from "../../src/client";
import { PolicySetProvider } from "../../src/resources/policy-set";
import { type RunningServer, startServer } from "../../src/server";
import { GitRepository, thirdGenerationLibrary } from "../vcs-repository";

// Review of issue 51: a checkout whose remote names no identifier (a mirror, another host) gets `policiesUnknown`
// with a text naming the checkout's remotes. A CI checkout's remote URL often carries the job's token
// (`https://gitlab-ci-token:<token>@gitlab.example.com/...`); the project itself refuses to read git's own files for
// that reason (file-access.ts). The guide: no secret in plain text anywhere, messages and state included.

const organization = "acme";
const token = "review51-checkout-token-0123456789";
const oauthTokenId = "ot-reviewCheckout0001";
const ciToken = "glcbt-64_SuperSecretJobToken42";

describe("review 51: a checkout's remote URL with credentials", () => {
  let server: RunningServer;
  let client: TfeClient;
  let library: GitRepository;
  beforeAll(async () => {
    library = GitRepository.create(thirdGenerationLibrary);
    // The team's mirror of the library, cloned by CI with its job token in the URL, as GitLab CI does.
    library.git([
      "remote",
      "set-url",
      "origin",
      `https://gitlab-ci-token:${ciToken}@gitlab.example.com/mirrors/lib.git`,
    ]);
    server = await startServer({
      seed: {
        organizations: [{ name: organization, plus: true }],
        tokens: [{ token, organizations: [organization] }],
        vcsRepositories: [{ identifier: "acme/policy-library", path: library.path }],
        oauthTokens: [{ id: oauthTokenId, organization }],
      },
    });
    client = new TfeClient({ address: server.url, token, rateLimit: false });
  });
  afterAll(async () => {
    await client?.close();
    await server?.close();
    library?.remove();
  });

  it("never writes the remote's token into the set's inputs, outputs or what preview says", async () => {
    const provider = new PolicySetProvider();
    provider.context.useClient(client);
    const said: string[] = [];
    const spy = vi.spyOn(console, "error").mockImplementation((line: unknown) => void said.push(String(line)));
    try {
      const checked = await provider.check(
        {},
        {
          organization,
          name: "from-mirror",
          vcsRepo: { identifier: "acme/policy-library", branch: "main", oauthTokenId },
          policiesPath: "policies/aws",
          vcsCheckout: library.path,
          __urn: "urn:pulumi:review::review::pulumi-nodejs:dynamic/tfe:PolicySet::from-mirror",
        },
      );
      const everything = JSON.stringify({ checked, said });
      // The checkout is not shown to be the repository: that is said (the remote is named)...
      expect(everything).toContain("no remote of the checkout names acme/policy-library");
      // ...but the token in its URL is a secret, and lands in the set's policiesUnknown (an output kept in state).
      expect(everything).not.toContain(ciToken);
    } finally {
      spy.mockRestore();
    }
  });
});
