// The plugin's code as one CommonJS file: dist/plugin/main.js and exactly the modules it loads, bundled by esbuild
// from node_modules as the lockfile installed them. A Node single-executable application runs one script and can
// require nothing but Node's own modules, and a bundle is also what starts fastest (one file to read and compile).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as esbuild from "esbuild";

/**
 * Modules @pulumi/pulumi loads at its top level for what a provider never does: serializing a program's functions
 * (closure/codePaths.js builds npm's dependency tree with @npmcli/arborist; the closure serializer parses code with
 * TypeScript). Together 11 of 13 MB. Each is replaced by an object that fails, naming itself, when anything is
 * read from it; a test (test/e2e/plugin-bundle.test.ts) holds that the plugin serves every call without them.
 */
const leftOut = ["typescript", "@npmcli/arborist"];

/**
 * Packages the plugin's code (src/plugin/serve.ts) shares with Pulumi's generated gRPC code: the server, the engine's
 * client and the messages must be one copy's, or a message built with one is refused by the other's serializer.
 */
const sharedWithPulumi = ["@grpc/grpc-js", "google-protobuf"];

/** @cdktn/hcl2json reads its WebAssembly from the package's root: in the plugin, it lies beside the bundle. */
const hclWasm = {
  name: "hcl2json-wasm-beside-the-bundle",
  setup(build) {
    build.onLoad({ filter: /@cdktn[\\/]hcl2json[\\/]build[\\/]bridge\.js$/ }, ({ path }) => {
      const source = readFileSync(path, "utf8");
      const from = '(0, path_1.join)(__dirname, "..", "main.wasm.gz")';
      if (!source.includes(from)) throw new Error(`${path} no longer reads ${from}: see how it finds its wasm now`);
      return { contents: source.replace(from, '(0, path_1.join)(__dirname, "main.wasm.gz")'), loader: "js" };
    });
  },
};

const leaveOut = {
  name: "leave-out-what-a-provider-never-runs",
  setup(build) {
    const filter = new RegExp(`^(${leftOut.map((name) => name.replace(/[/.]/g, "\\$&")).join("|")})$`);
    build.onResolve({ filter }, ({ path }) => ({ path, namespace: "left-out" }));
    build.onLoad({ filter: /.*/, namespace: "left-out" }, ({ path }) => ({
      contents:
        `module.exports = new Proxy({}, { get(_, key) { if (key === "__esModule" || typeof key === "symbol") return undefined; ` +
        `throw new Error(${JSON.stringify(`${path} is not part of the tfegov plugin (read: `)} + String(key) + ")"); } });`,
      loader: "js",
    }));
  },
};

/** Bundles the built plugin (dist/) into `outfile`; returns the packages it holds, each with its size in bytes. */
export async function bundlePlugin(root, outfile) {
  const result = await esbuild.build({
    entryPoints: [join(root, "dist", "plugin", "main.js")],
    absWorkingDir: root,
    bundle: true,
    platform: "node",
    target: "node22",
    format: "cjs",
    outfile,
    // hcl2json's Go runtime asks for `performance` where Node has none as a global; Node 22 has it.
    external: ["performance"],
    plugins: [hclWasm, leaveOut],
    define: { __PLUGIN_BUNDLE__: "true" },
    metafile: true,
    minifySyntax: true,
    minifyWhitespace: true,
    legalComments: "eof",
    logLevel: "error",
  });
  const packages = new Map();
  const copies = new Map();
  for (const [input, { bytes }] of Object.entries(result.metafile.inputs)) {
    const match = /(.*node_modules\/)((?:@[^/]+\/)?[^/]+)\//.exec(input);
    if (!match) continue;
    const [, folder, name] = match;
    packages.set(name, (packages.get(name) ?? 0) + bytes);
    copies.set(name, new Set([...(copies.get(name) ?? []), folder + name]));
  }
  for (const name of sharedWithPulumi) {
    const found = [...(copies.get(name) ?? [])];
    if (found.length !== 1) {
      throw new Error(`the bundle holds ${found.length} copies of ${name} (${found.join(", ")}): the plugin needs one`);
    }
  }
  return packages;
}
