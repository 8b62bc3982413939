import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { clientTuning, clientTuningKeys } from "../../src/client/config";
import { resolveClientConfig, type StackConfigSource, TfeClient, TfeConfigError } from "../../src/client/index";
import { empty, json, policyResource, startFaultServer } from "./helpers";

const homes: string[] = [];
afterEach(() => {
  for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true });
});

/** A home directory holding `~/.terraform.d/credentials.tfrc.json` with the given tokens by host. */
function homeWithLogin(tokens: Record<string, string>): string {
  const home = mkdtempSync(join(tmpdir(), "tfe-config-"));
  homes.push(home);
  mkdirSync(join(home, ".terraform.d"));
  const credentials = Object.fromEntries(Object.entries(tokens).map(([host, token]) => [host, { token }]));
  writeFileSync(join(home, ".terraform.d", "credentials.tfrc.json"), JSON.stringify({ credentials }));
  return home;
}

function stackConfig(values: Record<string, string>): StackConfigSource {
  return { get: (key) => values[key] };
}

describe("resolveClientConfig", () => {
  const home = () => homeWithLogin({ "app.terraform.io": "file-token", "tfe.example.com": "file-tfe-token" });

  it("takes explicit values over stack config over environment over the credentials file", () => {
    const all = {
      token: "explicit-token",
      stackConfig: stackConfig({ token: "config-token" }),
      env: { TFE_TOKEN: "env-token" },
      homeDirectory: home(),
    };
    expect(resolveClientConfig(all)).toMatchObject({ token: "explicit-token", tokenSource: "explicit" });
    expect(resolveClientConfig({ ...all, token: undefined })).toMatchObject({
      token: "config-token",
      tokenSource: "stack config tfe:token",
    });
    expect(resolveClientConfig({ ...all, token: "", stackConfig: stackConfig({}) })).toMatchObject({
      token: "env-token",
      tokenSource: "TFE_TOKEN",
    });
    const fromFile = resolveClientConfig({ ...all, token: undefined, stackConfig: undefined, env: {} });
    expect(fromFile.token).toBe("file-token");
    expect(fromFile.tokenSource).toBe(
      `credentials file ${join(all.homeDirectory, ".terraform.d", "credentials.tfrc.json")}`,
    );
  });

  it("resolves the address in the same order and picks the file's token by that hostname", () => {
    const homeDirectory = home();
    const env = { TFE_ADDRESS: "https://env.example.com", TFE_HOSTNAME: "ignored.example.com" };
    expect(resolveClientConfig({ address: "https://explicit.example.com/", token: "t", env }).address).toBe(
      "https://explicit.example.com",
    );
    expect(resolveClientConfig({ hostname: "tfe.example.com", token: "t", env }).address).toBe(
      "https://tfe.example.com",
    );
    expect(
      resolveClientConfig({ stackConfig: stackConfig({ hostname: "tfe.example.com" }), env, homeDirectory }),
    ).toMatchObject({ address: "https://tfe.example.com", hostname: "tfe.example.com", token: "file-tfe-token" });
    expect(
      resolveClientConfig({ stackConfig: stackConfig({ address: "http://127.0.0.1:8080" }), token: "t", env }).address,
    ).toBe("http://127.0.0.1:8080");
    expect(resolveClientConfig({ env, token: "t" }).address).toBe("https://env.example.com");
    expect(resolveClientConfig({ env: { TFE_HOSTNAME: "tfe.example.com" }, homeDirectory }).token).toBe(
      "file-tfe-token",
    );
    expect(resolveClientConfig({ env: {}, homeDirectory }).address).toBe("https://app.terraform.io");
  });

  it("says where the address came from, so a failure can name the setting to change", () => {
    const env = { TFE_ADDRESS: "https://env.example.com", TFE_HOSTNAME: "host.example.com" };
    const source = (inputs: Parameters<typeof resolveClientConfig>[0]) =>
      resolveClientConfig({ token: "t", ...inputs }).addressSource;
    expect(source({ hostname: "tfe.example.com", env })).toBe("explicit");
    expect(source({ stackConfig: stackConfig({ address: "https://a.example.com" }), env })).toBe(
      "stack config tfe:address",
    );
    expect(source({ stackConfig: stackConfig({ hostname: "h.example.com" }), env })).toBe("stack config tfe:hostname");
    expect(source({ stackConfig: stackConfig({}), env })).toBe("TFE_ADDRESS");
    expect(source({ env: { TFE_HOSTNAME: "host.example.com" } })).toBe("TFE_HOSTNAME");
    expect(source({ env: {} })).toBe("default");
  });

  it("reads HCL credentials blocks from TF_CLI_CONFIG_FILE", () => {
    const homeDirectory = homeWithLogin({});
    const cliConfig = join(homeDirectory, "terraform.rc");
    writeFileSync(
      cliConfig,
      'plugin_cache_dir = "/tmp/cache"\n\ncredentials "app.terraform.io" {\n  token = "hcl-token"\n}\n' +
        'credentials "tfe.example.com" {\n  token = "hcl-tfe-token"\n}\n',
    );
    const env = { TF_CLI_CONFIG_FILE: cliConfig };
    expect(resolveClientConfig({ env, homeDirectory })).toMatchObject({
      token: "hcl-token",
      tokenSource: `credentials file ${cliConfig}`,
    });
    expect(resolveClientConfig({ env, homeDirectory, hostname: "tfe.example.com" }).token).toBe("hcl-tfe-token");
  });

  it("matches credentials host names without regard to case, as Terraform compares them", () => {
    const homeDirectory = homeWithLogin({ "TFE.Example.com": "mixed-case-token" });
    expect(resolveClientConfig({ env: {}, homeDirectory, hostname: "tfe.example.com" }).token).toBe("mixed-case-token");
    const cliConfig = join(homeDirectory, "terraform.rc");
    writeFileSync(cliConfig, 'credentials "App.Terraform.IO" {\n  token = "hcl-mixed"\n}\n');
    expect(resolveClientConfig({ env: { TF_CLI_CONFIG_FILE: cliConfig }, homeDirectory }).token).toBe("hcl-mixed");
  });

  it("still finds the terraform login file when TF_CLI_CONFIG_FILE holds no credentials", () => {
    const homeDirectory = homeWithLogin({ "app.terraform.io": "login-token" });
    const cliConfig = join(homeDirectory, "terraform.rc");
    writeFileSync(cliConfig, 'plugin_cache_dir = "/tmp/cache"\n');
    expect(resolveClientConfig({ env: { TF_CLI_CONFIG_FILE: cliConfig }, homeDirectory }).token).toBe("login-token");
  });

  it("lists all four places when no token is found, without any token in the message", () => {
    const homeDirectory = homeWithLogin({ "other.example.com": "other-host-token" });
    let error: unknown;
    try {
      resolveClientConfig({ env: { TFE_ADDRESS: "https://tfe.example.com" }, homeDirectory });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(TfeConfigError);
    const message = (error as Error).message;
    expect(message).toContain("no API token for tfe.example.com");
    expect(message).toContain("the token option");
    expect(message).toContain("tfe:token");
    expect(message).toContain("TFE_TOKEN");
    expect(message).toContain('terraform login tfe.example.com"');
    expect(message).toContain(join(homeDirectory, ".terraform.d", "credentials.tfrc.json"));
    expect(message).not.toContain("other-host-token");
  });

  it("refuses an address that is not an http(s) URL, without the token in the message", () => {
    expect(() => resolveClientConfig({ address: "ftp://x", token: "secret-token" })).toThrow(
      /must start with https:\/\//,
    );
    expect(() => resolveClientConfig({ address: "not a url", token: "secret-token" })).toThrow(
      'address "not a url" is not a URL',
    );
    expect(() => resolveClientConfig({ address: "not a url", token: "secret-token" })).not.toThrow(/secret-token/);
  });
});

describe("TfeClient configuration", () => {
  it("fromConfig sends the token found in the credentials file to the resolved address", async () => {
    const server = await startFaultServer(json(200, { data: policyResource("pol-1") }));
    const host = new URL(server.url).host;
    const client = TfeClient.fromConfig({
      env: { TFE_ADDRESS: server.url },
      homeDirectory: homeWithLogin({ [host]: "login-token" }),
      rateLimit: false,
    });
    try {
      await client.policies.read("pol-1");
    } finally {
      await client.close();
    }
    expect(server.requests[0]!.headers.authorization).toBe("Bearer login-token");
  });

  it("refuses a missing token and a bad timeout at construction, naming the option", () => {
    expect(() => new TfeClient({ token: "" })).toThrow(TfeConfigError);
    expect(() => new TfeClient({ token: " " })).toThrow(/token is required/);
    expect(() => new TfeClient({ token: "t", timeoutMs: 0 })).toThrow(/timeoutMs must be/);
    expect(() => new TfeClient({ token: "t", address: "app.terraform.io" })).toThrow(/address "app.terraform.io"/);
  });
});

describe("clientTuning: the tfe: keys a program's resources and read functions take their client's options from", () => {
  it("maps each key, stack config before the environment, and leaves unset keys to the client's defaults", () => {
    expect(clientTuning(stackConfig({}), {})).toEqual({});
    expect(
      clientTuning(stackConfig({ timeoutMs: "90000", maxRetries: "2", requestsPerSecond: "7.5" }), {
        TFE_TIMEOUT_MS: "1000",
        TFE_RETRY_MAX_ELAPSED_MS: "300000",
      }),
    ).toEqual({
      timeoutMs: 90_000,
      retry: { maxRetries: 2, maxElapsedMs: 300_000 },
      rateLimit: { requestsPerSecond: 7.5 },
    });
    expect(clientTuning(undefined, { TFE_MAX_RETRIES: "0" })).toEqual({ retry: { maxRetries: 0 } });
  });

  it.each([
    [{ timeoutMs: "30s" }, {}, 'stack config tfe:timeoutMs must be a whole number from 1, not "30s"'],
    [{ timeoutMs: "0" }, {}, 'stack config tfe:timeoutMs must be a whole number from 1, not "0"'],
    [{}, { TFE_MAX_RETRIES: "-1" }, 'TFE_MAX_RETRIES must be a whole number from 0, not "-1"'],
    [{}, { TFE_REQUESTS_PER_SECOND: "0" }, 'TFE_REQUESTS_PER_SECOND must be a number above 0, not "0"'],
    [{ requestsPerSecond: "fast" }, {}, 'stack config tfe:requestsPerSecond must be a number above 0, not "fast"'],
  ])("refuses %j %j, naming the key", (config, env, message) => {
    expect(() => clientTuning(stackConfig(config), env)).toThrow(new TfeConfigError(message));
  });

  it("fromConfig applies them where the options leave them out", async () => {
    const server = await startFaultServer(empty(503));
    const read = async (options: { retry?: { maxRetries: number; baseDelayMs: number } }) => {
      server.requests.length = 0;
      const client = TfeClient.fromConfig({
        stackConfig: stackConfig({ token: "t0ken", address: server.url, maxRetries: "0" }),
        env: { TFE_MAX_RETRIES: "5" },
        rateLimit: false,
        ...options,
      });
      await client.policies.read("pol-1").catch(() => undefined);
      await client.close();
      return server.requests.length;
    };
    expect(await read({})).toBe(1);
    expect(await read({ retry: { maxRetries: 1, baseDelayMs: 1 } })).toBe(2);
  });

  it("docs/configuration.md's table lists every key with its environment variable", () => {
    const readme = readFileSync(join(__dirname, "..", "..", "docs", "configuration.md"), "utf8");
    for (const { key, variable } of clientTuningKeys) {
      expect(readme).toMatch(new RegExp(`^\\| \`tfe:${key}\`\\s+\\| \`${variable}\`\\s+\\|`, "m"));
    }
  });
});
