// A minimal Node.js language host for the Pulumi engine, used only where the project builds the Pulumi CLI
// itself: the Go module proxy serves the CLI (pkg/v3) but not the `pulumi-language-nodejs` module.
//
// It does what the official host does for `run`: start @pulumi/pulumi's own `cmd/run` in the program's
// directory with the monitor and engine addresses, the stack config in PULUMI_CONFIG and the runtime options of
// Pulumi.yaml. Program discovery, TypeScript loading and error reporting are all @pulumi/pulumi's. Plugin
// discovery returns nothing: the only plugin a program of this project needs is the dynamic provider
// (pulumi-resource-pulumi-nodejs), which the engine loads from PATH by itself.
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(import.meta.url);
const grpc = require("@grpc/grpc-js");
const emptyProto = require("google-protobuf/google/protobuf/empty_pb");
const languageProto = require("@pulumi/pulumi/proto/language_pb");
const pluginProto = require("@pulumi/pulumi/proto/plugin_pb");
const { LanguageRuntimeService } = require("@pulumi/pulumi/proto/language_grpc_pb");
const sdkVersion = require("@pulumi/pulumi/package.json").version;

// Exit code with which cmd/run says it already reported the error to the user.
const programReportedItsError = 32;

let engineAddress = process.argv.at(-1);

const reply = (handler) => (call, callback) => {
  Promise.resolve()
    .then(() => handler(call.request))
    .then(
      (response) => callback(null, response),
      (error) => callback({ code: grpc.status.UNKNOWN, details: String(error?.stack ?? error) }),
    );
};

function runtimeOptions(programInfo) {
  const options = programInfo?.getOptions()?.toJavaScript() ?? {};
  return {
    typescript: options.typescript ?? true,
    nodeargs: typeof options.nodeargs === "string" ? options.nodeargs.split(/\s+/).filter(Boolean) : [],
  };
}

function runProgram(request) {
  const info = request.getInfo();
  const programDirectory = info?.getProgramDirectory() || request.getPwd();
  const entryPoint = info?.getEntryPoint() || request.getProgram() || ".";
  const options = runtimeOptions(info);
  const runScript = require.resolve("@pulumi/pulumi/cmd/run", { paths: [programDirectory, request.getPwd()] });

  const config = Object.fromEntries(request.getConfigMap().getEntryList());
  const args = [
    ...options.nodeargs,
    runScript,
    `--monitor=${request.getMonitorAddress()}`,
    `--engine=${engineAddress}`,
    `--organization=${request.getOrganization()}`,
    `--project=${request.getProject()}`,
    `--stack=${request.getStack()}`,
    `--pwd=${request.getPwd()}`,
    `--root-directory=${info?.getRootDirectory() || request.getPwd()}`,
    `--parallel=${request.getParallel()}`,
    ...(request.getDryrun() ? ["--dry-run"] : []),
    path.resolve(programDirectory, entryPoint),
    ...request.getArgsList(),
  ];
  const env = {
    ...process.env,
    PULUMI_CONFIG: JSON.stringify(config),
    PULUMI_CONFIG_SECRET_KEYS: JSON.stringify(request.getConfigsecretkeysList()),
    PULUMI_NODEJS_TYPESCRIPT: String(options.typescript),
  };

  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, {
      cwd: request.getPwd(),
      env,
      stdio: ["ignore", "inherit", "inherit"],
    });
    const response = new languageProto.RunResponse();
    child.on("error", (error) => {
      response.setError(`could not start Node.js: ${error.message}`);
      resolve(response);
    });
    child.on("exit", (code, signal) => {
      if (code === programReportedItsError) response.setBail(true);
      else if (code !== 0) response.setError(`Program exited with ${signal ? `signal ${signal}` : `code ${code}`}`);
      resolve(response);
    });
  });
}

const server = new grpc.Server();
server.addService(LanguageRuntimeService, {
  handshake: reply((request) => {
    engineAddress = request.getEngineAddress() || engineAddress;
    return new languageProto.LanguageHandshakeResponse();
  }),
  getPluginInfo: reply(() => new pluginProto.PluginInfo().setVersion(sdkVersion)),
  getRequiredPlugins: reply(() => new languageProto.GetRequiredPluginsResponse()),
  getRequiredPackages: reply(() => new languageProto.GetRequiredPackagesResponse()),
  getProgramDependencies: reply(() => new languageProto.GetProgramDependenciesResponse()),
  runtimeOptionsPrompts: reply(() => new languageProto.RuntimeOptionsResponse()),
  about: reply(() => new languageProto.AboutResponse().setExecutable(process.execPath).setVersion(process.version)),
  installDependencies: (call) => call.end(),
  run: reply(runProgram),
  cancel: reply(() => new emptyProto.Empty()),
});

server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (error, port) => {
  if (error) {
    console.error(`language host could not listen: ${error.message}`);
    process.exit(1);
  }
  console.log(port);
});
