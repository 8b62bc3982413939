// Builds everything a user of another language installs, into one folder (default artifacts/):
//   pulumi-resource-tfegov-v<version>-<os>-<arch>.tar.gz  the plugin, one per platform (scripts/plugin-platforms.mjs):
//                                     what the engine downloads from the SDK's pluginDownloadURL, or
//                                     `pulumi plugin install resource tfegov <version> -f <file>` installs
//   SHA256SUMS                        the checksum of every file here, as `sha256sum -c` reads it
//   schema.json                       the package's schema, with pluginDownloadURL where one is given
//   pulumi_tfegov-<version>-py3-none-any.whl  the Python SDK: `pip install <file>`
//   go/                               the Go SDK, a module: `go mod edit -replace` to it (or publish it as a module)
//   dotnet/, nodejs/                  the C# and Node.js SDKs (Node.js programs use the library itself)
//
// npm run package -- [<folder>] [--plugin-download-url <url>] [--platforms linux-amd64,...] [--sdks-only]
//   --plugin-download-url  where the tarballs will be published (a GitHub release's download folder, any HTTP(S)
//                          folder): the SDKs are generated again with it, so that the engine fetches the plugin itself
//   --platforms            only these (default: every one); --sdks-only makes no plugin
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { bundlePlugin } from "./plugin-bundle.mjs";
import { platforms, progress, reproducibleTarball, runtimeVersion, writePluginFolders } from "./plugin-platforms.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const { values: options, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    "plugin-download-url": { type: "string" },
    platforms: { type: "string" },
    "sdks-only": { type: "boolean", default: false },
  },
});
const out = resolve(positionals[0] ?? join(root, "artifacts"));
const downloadUrl = options["plugin-download-url"];
if (downloadUrl !== undefined && !/^(https?:\/\/[^\s]+|github:\/\/api\.github\.com\/[\w.-]+)$/.test(downloadUrl)) {
  throw new Error(
    `--plugin-download-url ${downloadUrl}: give the folder the tarballs are published in, as https://host/path/ ` +
      "(http:// for a server on a closed network) or github://api.github.com/<owner> (releases of <owner>/pulumi-tfegov)",
  );
}
const chosen = options.platforms?.split(",") ?? platforms;
for (const platform of chosen) {
  if (!platforms.includes(platform)) throw new Error(`--platforms: ${platform} is none of ${platforms.join(", ")}`);
}
const { version } = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
// SOURCE_DATE_EPOCH: the wheel's files dated alike at every build (zip keeps no time before 1980).
const run = (command, args, cwd) =>
  execFileSync(command, args, {
    cwd,
    stdio: ["ignore", "pipe", "inherit"],
    env: { ...process.env, SOURCE_DATE_EPOCH: "315532800" },
  });

if (!existsSync(join(root, "dist", "plugin", "main.js")))
  throw new Error("no dist/plugin/main.js: run npm run build first");
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const work = mkdtempSync(join(tmpdir(), "tfegov-package-"));

try {
  if (!options["sdks-only"]) {
    const bundle = join(work, "plugin.js");
    progress("bundling the plugin's code (esbuild)");
    await bundlePlugin(root, bundle);
    // Beside the executable: hcl2json's WebAssembly, and the version and docs that messages name
    // (src/process/package-version.ts).
    writeFileSync(join(work, "package.json"), `${JSON.stringify({ name: "pulumi-resource-tfegov", version })}\n`);
    const shared = {
      "main.wasm.gz": join(root, "node_modules", "@cdktn", "hcl2json", "main.wasm.gz"),
      "package.json": join(work, "package.json"),
      docs: join(root, "docs"),
    };
    const tarballs = [];
    await writePluginFolders(chosen, {
      bundle,
      shared,
      workDir: work,
      done: (platform, folder, seconds) => {
        const signed = platform.startsWith("darwin") ? ", signed ad hoc (rcodesign) and verified" : "";
        progress(
          `${platform}: Node ${runtimeVersion(platform)} with the plugin injected${signed} (${seconds.toFixed(1)} s)`,
        );
        const name = `pulumi-resource-tfegov-v${version}-${platform}.tar.gz`;
        const written = reproducibleTarball(folder, join(out, name)).then(() => progress(`wrote ${name}`));
        written.catch(() => {}); // awaited below, with the others
        tarballs.push(written);
      },
    });
    await Promise.all(tarballs);
  }

  // The SDKs: as committed under sdk/, or generated again from a schema that says where the plugin is published.
  const schema = JSON.parse(readFileSync(join(root, "src", "plugin", "schema.json"), "utf8"));
  let sdks = join(root, "sdk");
  if (downloadUrl !== undefined) {
    schema.pluginDownloadURL = downloadUrl;
    writeFileSync(join(work, "schema.json"), JSON.stringify(schema, null, 2));
    sdks = join(work, "sdk");
    progress(`the SDKs again, for --plugin-download-url ${downloadUrl}`);
    run(
      "bash",
      [join(root, "scripts", "generate-sdks.sh"), "--schema", join(work, "schema.json"), "--into", sdks],
      root,
    );
  }
  writeFileSync(join(out, "schema.json"), `${JSON.stringify(schema, null, 2)}\n`);
  // pip builds in the folder it is given (build/, *.egg-info): a copy, so that sdk/ stays as generated.
  progress("the Python SDK's wheel (pip wheel)");
  const python = join(work, "python");
  cpSync(join(sdks, "python"), python, { recursive: true });
  run("python3", ["-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", out, python], root);
  for (const language of ["go", "dotnet", "nodejs"]) {
    cpSync(join(sdks, language), join(out, language), { recursive: true });
  }

  const files = readdirSync(out).filter((name) => /\.(tar\.gz|whl|json)$/.test(name));
  const sums = files.sort().map((name) => {
    const digest = createHash("sha256")
      .update(readFileSync(join(out, name)))
      .digest("hex");
    return `${digest}  ${name}\n`;
  });
  writeFileSync(join(out, "SHA256SUMS"), sums.join(""));
  console.log(`wrote ${out}: ${files.join(", ")}, SHA256SUMS, and the go, dotnet and nodejs SDKs`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
