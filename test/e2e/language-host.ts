import { readFile } from "node:fs/promises";

/** Flags that make `pulumi` write its own log to stderr, including which plugin binaries it launched. */
export const engineLogArgs = ["-v=9", "--logflow", "--logtostderr"];

// The engine logs JSON lines; plugins that log through glog write lines such as "I1122 11:12:45.213180 28223 x.go:75] ...".
const engineLogLine = /^(\{"time":"|[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ \S+:\d+\] )/;

/** Splits a run's stderr into the engine's log and what the user sees. */
export function splitEngineLog(stderr: string): { engineLog: string; userStderr: string } {
  const log: string[] = [];
  const user: string[] = [];
  for (const line of stderr.split("\n")) (engineLogLine.test(line) ? log : user).push(line);
  return { engineLog: log.join("\n"), userStderr: user.join("\n") };
}

export interface LanguageHost {
  path: string;
  /** The Go main package the binary was built from, as `go version -m` reports it. */
  mainPackage: string;
  module: string;
  moduleVersion: string;
}

// Up to v3.68 the host lived in the sdk/v3 module; later releases build it as a module of its own.
const pulumiNodejsHostPackage = /^github\.com\/pulumi\/pulumi\/sdk\/(v3\/)?nodejs\/cmd\/pulumi-language-nodejs(\/v3)?$/;

const described = new Map<string, Promise<LanguageHost>>();

/**
 * The Node.js language host that the engine's log says it launched, checked to be Pulumi's own (a Go program built
 * from Pulumi's host package), and announced once per binary so that every test run says which host ran.
 * Undefined when the run launched no Node.js program.
 */
export async function launchedLanguageHost(engineLog: string): Promise<LanguageHost | undefined> {
  const path = /Launching plugin 'nodejs' from '([^']+)'/.exec(engineLog)?.[1];
  if (path === undefined) return undefined;
  let host = described.get(path);
  if (host === undefined) {
    host = describeLanguageHost(path);
    described.set(path, host);
    const { mainPackage, module, moduleVersion } = await host;
    console.log(
      `The engine launched the Node.js language host ${path}\n  built from ${mainPackage} (${module} ${moduleVersion})`,
    );
  }
  return host;
}

async function describeLanguageHost(path: string): Promise<LanguageHost> {
  const info = goBuildInfo(await readFile(path));
  const mainPackage = info.get("path")?.[0];
  if (mainPackage === undefined || !pulumiNodejsHostPackage.test(mainPackage)) {
    throw new Error(
      `The engine launched ${path}, which is not Pulumi's Node.js language host ` +
        `(built from ${mainPackage ?? "no Go package"}). Put Pulumi's own on PATH, or let scripts/toolchain.sh build it.`,
    );
  }
  const [module = "", moduleVersion = ""] = info.get("mod") ?? [];
  return { path, mainPackage, module, moduleVersion };
}

// A Go (1.18+) executable embeds its build info after the 16-byte-aligned magic "\xff Go buildinf:": a 32-byte
// header, then two length-prefixed strings, the Go version and the module info ("path\t...", "mod\t...\t...").
function goBuildInfo(binary: Buffer): Map<string, string[]> {
  const magic = Buffer.from("\xff Go buildinf:", "latin1");
  const inlineStrings = 0x2;
  for (let at = binary.indexOf(magic); at >= 0; at = binary.indexOf(magic, at + 1)) {
    if (at % 16 !== 0 || ((binary[at + 15] ?? 0) & inlineStrings) === 0) continue;
    let offset = at + 32;
    const readString = () => {
      let length = 0;
      for (let shift = 0, byte = 0x80; byte & 0x80; shift += 7) {
        byte = binary[offset++] ?? 0;
        length += (byte & 0x7f) * 2 ** shift;
      }
      offset += length;
      return binary.toString("latin1", offset - length, offset);
    };
    readString();
    // The module info sits between two 16-byte sentinels.
    const lines = readString().slice(16, -16).split("\n");
    return new Map(lines.map((line) => line.split("\t")).map(([key = "", ...values]) => [key, values]));
  }
  return new Map();
}
