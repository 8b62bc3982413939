import { execFile } from "node:child_process";
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  machOSeaSegment,
  machOSection,
  machOSignature,
  peCertificateTable,
  seaFuseFlipped,
  seaMainScript,
} from "../../scripts/plugin-binaries.mts";
import { bundlePlugin } from "../../scripts/plugin-bundle.mjs";
import {
  adHocSignatureProblems,
  blobMakers,
  executableName,
  type Runtime,
  runtimeBinary,
  runtimeVersion,
} from "../../scripts/plugin-platforms.mjs";
import { TfeClient } from "../../src/client";
import type { RunningServer } from "../../src/server";
import { startSeededServer } from "../seeded-server";
import { everyPlatformTarball } from "./plugin-artifacts";
import { commandHere, type StartedPlugin, schemaOf, startPlugin } from "./plugin-platforms";
import { PulumiProject } from "./pulumi-project";
import { policiesOnService } from "./service-and-state";

// Every platform's plugin, from the tarballs `npm run package` makes (this machine's shared with the other tests of
// the plugin, the four others made once for this file): each is one executable of its OS and CPU that carries this
// checkout's bundle. What can run here runs:
// linux-arm64 under qemu, started, asked for its schema and driven by `pulumi` (attached) through one create and one
// delete; macOS's script under the Node version macOS carries. What cannot run is read: the macOS signature by
// rcodesign's own verify, the Windows file by osslsigncode. linux-amd64 is what every other test of the plugin runs.

const repoRoot = resolve(__dirname, "..", "..");
const run = promisify(execFile);
const organization = "platforms";
const token = "platforms-token-0123456789abcdef";

/** ELF e_machine, PE machine, Mach-O cputype: what each platform's executable must be built for. */
const expectedFormat: Record<string, string> = {
  "linux-amd64": "ELF x86-64",
  "linux-arm64": "ELF AArch64",
  "windows-amd64": "PE x86-64",
  "darwin-amd64": "Mach-O x86-64",
  "darwin-arm64": "Mach-O arm64",
};

function formatOf(file: Buffer): string {
  if (file.readUInt32BE(0) === 0x7f454c46) return `ELF ${{ 62: "x86-64", 183: "AArch64" }[file.readUInt16LE(18)]}`;
  if (file.readUInt32LE(0) === 0xfeedfacf) {
    return `Mach-O ${{ 16777223: "x86-64", 16777228: "arm64" }[file.readUInt32LE(4)]}`;
  }
  if (file.toString("latin1", 0, 2) === "MZ")
    return `PE ${{ 34404: "x86-64" }[file.readUInt16LE(file.readUInt32LE(0x3c) + 4)]}`;
  return "unknown";
}

describe("the plugin of every platform, as npm run package makes it", () => {
  let scratch: string;
  let bundle: Buffer;
  const executables: Record<string, string> = {};
  let server: RunningServer;
  let client: TfeClient;
  let project: PulumiProject;

  beforeAll(async () => {
    const tarballs = await everyPlatformTarball();
    scratch = await mkdtemp(join(tmpdir(), "tfegov-platform-runs-"));
    for (const [platform, tarball] of Object.entries(tarballs)) {
      await mkdir(join(scratch, platform));
      await run("tar", ["-xzf", tarball, "-C", join(scratch, platform)]);
      executables[platform] = join(scratch, platform, executableName(platform));
    }
    await bundlePlugin(repoRoot, join(scratch, "bundle.js"));
    bundle = await readFile(join(scratch, "bundle.js"));
    server = await startSeededServer({ organization, token });
    client = new TfeClient({ address: server.url, token, rateLimit: false });
    project = await PulumiProject.create({
      name: "platforms",
      files: {
        "Pulumi.yaml": [
          "name: platforms",
          "runtime: yaml",
          "resources:",
          "  guard:",
          "    type: tfegov:index:Policy",
          "    properties:",
          '      code: "main = rule { true }\\n"',
          "      enforcementLevel: advisory",
          "",
        ].join("\n"),
      },
      config: { "tfegov:address": server.url, "tfegov:organization": organization },
      secrets: { "tfegov:token": token },
      engineLog: false,
    });
  }, 900_000);

  afterAll(async () => {
    await server?.close();
    await project?.dispose();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  it("holds one executable per platform, for its OS and CPU, with this checkout's bundle as its script", async () => {
    expect(Object.keys(executables).sort()).toEqual(Object.keys(expectedFormat).sort());
    for (const [platform, executable] of Object.entries(executables)) {
      const file = await readFile(executable);
      expect(`${platform}: ${formatOf(file)}`).toBe(`${platform}: ${expectedFormat[platform]}`);
      expect(seaFuseFlipped(file), `${platform}: the SEA fuse flipped`).toBe(true);
      expect(seaMainScript(file)?.equals(bundle), `${platform}: the blob's script is the bundle`).toBe(true);
      const beside = (await readdir(join(executable, ".."))).sort();
      expect(beside).toEqual([executableName(platform), "docs", "main.wasm.gz", "package.json"].sort());
    }
  });

  it("macOS: signed ad hoc, rcodesign's own verify passes, and the blob lies where Node looks for it", async () => {
    for (const platform of ["darwin-amd64", "darwin-arm64"]) {
      const executable = executables[platform] as string;
      const file = await readFile(executable);
      const signature = machOSignature(file);
      // The signature is the end of the file: it covers every byte before it, the injected blob among them.
      expect(signature && signature.offset + signature.size).toBe(file.length);
      expect(adHocSignatureProblems(executable)).toEqual([]);
      const info = (await run("rcodesign", ["print-signature-info", executable])).stdout;
      expect(info).toMatch(/flags: CodeSignatureFlags\(ADHOC\)/);
      expect(info).toMatch(/identifier: pulumi-resource-tfegov/);
      expect(info).toMatch(/cms: null/);
      // The same verify finds a byte changed in the blob (the bytes the injection added).
      const tampered = join(scratch, `${platform}-tampered`);
      const blob = file.indexOf(bundle);
      await writeFile(tampered, Buffer.concat([file.subarray(0, blob), Buffer.from("X"), file.subarray(blob + 1)]));
      expect(adHocSignatureProblems(tampered).join("\n")).toMatch(/code digest mismatch/);
      expect(machOSection(file, machOSeaSegment, "__NODE_SEA_BLOB")?.includes(bundle)).toBe(true);
    }
  });

  it("Windows: plainly unsigned, and a team's own certificate signs it and verifies", async () => {
    const executable = executables["windows-amd64"] as string;
    expect(peCertificateTable(await readFile(executable))).toMatchObject({ offset: 0, size: 0 });
    // osslsigncode finds no signature (and so nothing to verify), and no stale checksum either.
    const unsigned = await run("osslsigncode", ["verify", "-in", executable]).then(
      () => ({ stdout: "verified", stderr: "" }),
      (error: { stdout: string; stderr: string }) => error,
    );
    expect(`${unsigned.stdout}${unsigned.stderr}`).toMatch(/No signature found/);
    expect(`${unsigned.stdout}${unsigned.stderr}`).not.toMatch(/invalid PE checksum/);
    // As docs/other-languages.md tells a team: its certificate and key, osslsigncode sign, then verify.
    const [key, cert, signed] = ["team.key", "team.crt", "signed.exe"].map((name) => join(scratch, name)) as [
      string,
      string,
      string,
    ];
    await run("openssl", [
      ...["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=Platform Team"],
      ...["-addext", "extendedKeyUsage=codeSigning", "-keyout", key, "-out", cert],
    ]);
    await run("osslsigncode", ["sign", "-certs", cert, "-key", key, "-n", "tfegov", "-in", executable, "-out", signed]);
    const verified = await run("osslsigncode", ["verify", "-CAfile", cert, "-in", signed]);
    expect(verified.stdout).toMatch(/Signature verification: ok/);
  });

  /** Start, port, GetSchema; then `pulumi up` creates the policy and `destroy` deletes it, the engine attached. */
  async function startsAndServes(plugin: StartedPlugin): Promise<void> {
    try {
      expect(JSON.parse(await schemaOf(plugin.port))).toEqual(
        JSON.parse(await readFile(join(repoRoot, "src", "plugin", "schema.json"), "utf8")),
      );
      const attached = { env: { PULUMI_DEBUG_PROVIDERS: `tfegov:${plugin.port}` } };
      await project.run(["up", "--yes", "--skip-preview"], attached);
      expect((await policiesOnService(client, organization)).map((policy) => policy.name)).toEqual(["guard"]);
      await project.run(["destroy", "--yes", "--skip-preview"], attached);
      expect(await policiesOnService(client, organization)).toEqual([]);
    } finally {
      plugin.stop();
    }
  }

  it("linux-arm64, under qemu: starts, prints its port, answers GetSchema, creates and deletes a policy", async () => {
    const [command, args] = commandHere("linux-arm64", executables["linux-arm64"] as string) ?? [];
    await startsAndServes(await startPlugin(command as string, args as string[]));
  }, 300_000);

  it("macOS's script runs under the Node macOS carries (its Linux build): GetSchema, a policy created and deleted", async () => {
    const version = runtimeVersion("darwin-arm64");
    expect(runtimeVersion("darwin-amd64")).toBe(version);
    // Beside the script, what the executable has beside it: its version and docs, hcl2json's WebAssembly.
    const folder = join(scratch, "darwin-script");
    await cp(join(scratch, "darwin-arm64"), folder, { recursive: true });
    await writeFile(
      join(folder, "plugin.js"),
      seaMainScript(await readFile(executables["darwin-arm64"] as string)) as Buffer,
    );
    const node = runtimeBinary(blobMakers[version] as Runtime);
    await startsAndServes(await startPlugin(node, [join(folder, "plugin.js")]));
  }, 120_000);
});
