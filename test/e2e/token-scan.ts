import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { expect } from "vitest";
import type { RunningServer } from "../../src/server";
import type { PulumiProject } from "./pulumi-project";

/** Where a token was found in plain text, as `<place>` lines; empty when nowhere. */
export interface TokenScan {
  hits: string[];
  /** Places of the `--show-secrets` export holding the token: only where it is stored encrypted. */
  decryptedStateHits: string[];
}

/**
 * Looks for each token in plain text everywhere a user or a CI log could see it after a scenario: the state as
 * `pulumi stack export` prints it, each serialized provider in it, every file the project and Pulumi wrote (state,
 * backups, history, locks, stack config, PULUMI_HOME), everything the CLI printed (the provider's errors and logs
 * included), and the server's request log. `pulumi stack export --show-secrets` decrypts the state on purpose:
 * there the token may appear, but only as the secret config the engine records in the default provider's inputs.
 */
export async function scanForTokens(
  tokens: string[],
  project: PulumiProject,
  servers: RunningServer[],
  extraTexts: Record<string, string> = {},
): Promise<TokenScan> {
  const places: Record<string, string> = { ...extraTexts };
  const exported = await project.exportState();
  places["pulumi stack export"] = exported;
  for (const [index, provider] of serializedProviders(exported).entries()) {
    places[`serialized provider ${index}`] = provider;
  }
  for (const file of await filesUnder(project.dir)) places[file] = await readFile(file, "utf8");
  for (const [index, output] of project.transcript.entries()) places[`CLI output ${index}`] = output;
  for (const [index, server] of servers.entries()) {
    places[`request log of server ${index}`] = JSON.stringify(server.requestLog.entries());
  }
  const hits = Object.entries(places).flatMap(([place, text]) =>
    tokens.filter((token) => text.includes(token)).map((token) => `${place} holds ${token.slice(0, 4)}…`),
  );
  const decrypted = JSON.parse(await project.exportState({ showSecrets: true })) as StateExport;
  const decryptedStateHits = (decrypted.deployment.resources ?? []).flatMap((resource) =>
    ["inputs", "outputs"].flatMap((side) =>
      Object.entries(resource[side as "inputs" | "outputs"] ?? {})
        .filter(([, value]) => tokens.some((token) => JSON.stringify(value).includes(token)))
        .map(([key]) => `${resource.type} ${side}.${key}`),
    ),
  );
  return { hits, decryptedStateHits: [...new Set(decryptedStateHits)] };
}

/** Asserts the scan: no plain-text token anywhere, and a decrypted one only where `storedAs` says. */
export async function expectNoTokenInPlainText(
  tokens: string[],
  project: PulumiProject,
  servers: RunningServer[],
  options: { storedAs: "stack config secret" | "nothing"; extraTexts?: Record<string, string> },
): Promise<void> {
  const scan = await scanForTokens(tokens, project, servers, options.extraTexts);
  expect(scan.hits).toEqual([]);
  for (const hit of scan.decryptedStateHits) {
    expect(hit).toMatch(/^pulumi:providers:pulumi-nodejs (inputs|outputs)\.tfe:token$/);
  }
  if (options.storedAs === "nothing") expect(scan.decryptedStateHits).toEqual([]);
}

interface StateExport {
  deployment: {
    resources?: { type: string; inputs?: Record<string, unknown>; outputs?: Record<string, unknown> }[];
  };
}

function serializedProviders(exported: string): string[] {
  const state = JSON.parse(exported) as StateExport;
  return (state.deployment.resources ?? [])
    .map((resource) => resource.inputs?.__provider)
    .filter((provider): provider is string => typeof provider === "string");
}

/** Every file below `dir`, leaving out node_modules (a link to the repository's). */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name))
    .filter((path) => !path.split("/").includes("node_modules"));
}
