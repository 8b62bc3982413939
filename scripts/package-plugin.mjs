// Builds everything a user of another language installs, into one folder (default artifacts/):
//   pulumi-resource-tfegov-v<version>.tar.gz   the plugin: `pulumi plugin install resource tfegov <version> -f <file>`
//                                              (a launcher, the library's code, its dependencies: nothing is fetched
//                                              at run time; it needs Node.js 22.19+ on PATH)
//   pulumi_tfegov-<version>-py3-none-any.whl   the Python SDK: `pip install <file>`
//   go/                                        the Go SDK, a module: `go mod edit -replace` to it
//   dotnet/                                    the C# SDK, a project: `dotnet add reference` (or `dotnet pack`) it
//   nodejs/                                    the generated Node.js SDK (Node.js programs use the library itself)
// Run after a build, with the toolchain (python3 for the wheel): npm run package [-- <folder>]
import { execFileSync } from "node:child_process";
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const out = resolve(process.argv[2] ?? join(root, "artifacts"));
const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const { version } = manifest;
const run = (command, args, cwd) => execFileSync(command, args, { cwd, stdio: ["ignore", "pipe", "inherit"] });

if (!existsSync(join(root, "dist", "plugin", "main.js")))
  throw new Error("no dist/plugin/main.js: run npm run build first");
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

// The plugin: the library as an installed package, with its dependencies and @pulumi/pulumi (whose provider server
// it runs) at the versions this checkout builds and tests with.
const staging = mkdtempSync(join(tmpdir(), "tfegov-plugin-"));
const installed = (name) => JSON.parse(readFileSync(join(root, "node_modules", name, "package.json"), "utf8")).version;
const dependencies = Object.fromEntries(
  [...Object.keys(manifest.dependencies), "@pulumi/pulumi"].map((name) => [name, installed(name)]),
);
writeFileSync(join(staging, "package.json"), JSON.stringify({ private: true, dependencies }, null, 2));
run("npm", ["install", "--omit=dev", "--ignore-scripts", "--prefer-offline", "--no-audit", "--no-fund"], staging);
const library = join(staging, "node_modules", "pulumi-tfe-governance");
mkdirSync(library, { recursive: true });
cpSync(join(root, "dist"), join(library, "dist"), { recursive: true });
writeFileSync(
  join(library, "package.json"),
  JSON.stringify({ name: manifest.name, version, type: manifest.type, main: manifest.main, exports: manifest.exports }),
);
const entry = "node_modules/pulumi-tfe-governance/dist/plugin/main.js";
writeFileSync(
  join(staging, "pulumi-resource-tfegov"),
  `#!/bin/sh\n# The tfegov resource plugin: Node.js 22.19 or newer on PATH runs it.\nexec node "$(dirname "$0")/${entry}" "$@"\n`,
);
chmodSync(join(staging, "pulumi-resource-tfegov"), 0o755);
writeFileSync(join(staging, "pulumi-resource-tfegov.cmd"), `@node "%~dp0\\${entry.replaceAll("/", "\\")}" %*\r\n`);
rmSync(join(staging, "package-lock.json"), { force: true });
const tarball = join(out, `pulumi-resource-tfegov-v${version}.tar.gz`);
run("tar", ["-czf", tarball, "-C", staging, "."], root);
rmSync(staging, { recursive: true, force: true });

// The SDKs, as generated and committed under sdk/ (npm run generate:sdks).
// pip builds in the folder it is given (build/, *.egg-info): a copy, so that sdk/ stays as generated.
const python = mkdtempSync(join(tmpdir(), "tfegov-python-"));
cpSync(join(root, "sdk", "python"), python, { recursive: true });
run("python3", ["-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", out, python], root);
rmSync(python, { recursive: true, force: true });
for (const language of ["go", "dotnet", "nodejs"]) {
  cpSync(join(root, "sdk", language), join(out, language), { recursive: true });
}
console.log(
  `wrote ${out}: the plugin ${tarball.slice(out.length + 1)}, the Python wheel, and the go, dotnet and nodejs SDKs`,
);
