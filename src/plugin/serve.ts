import "../process/node-version";
import "../process/provider-process";
import * as pulumiProvider from "@pulumi/pulumi/provider";
import { closestName } from "../contract/names";
import { keepCompiledCode } from "../process/compile-cache";
import { EngineLog } from "../resources/engine-log";
import { settingKeys, settingValueProblem } from "../resources/provider-settings";
import { providers } from "../resources/providers";
import { GovernanceProvider, packageName } from "./provider";
import { unwrapSecrets } from "./secrets";

// `pulumi-resource-tfegov`: the resource provider plugin that serves this library to every Pulumi language. Pulumi's
// Node.js SDK serves the protocol (`@pulumi/pulumi/provider`: check, diff, the CRUD calls, construct for the
// PolicyFolder component, invoke for the read functions); this entry answers what that server does not: the
// provider's own configuration (CheckConfig, DiffConfig, Configure), which it would leave unread, and a Read with no
// properties, which `pulumi import` sends.

// The plugin runs as one bundle (scripts/package-plugin.mjs): these are the very modules @pulumi/pulumi's provider
// server loads, one copy of each in the bundle (the packaging checks it), so that our override of addService and our
// messages are the server's own.
const grpc = require("@grpc/grpc-js") as typeof import("@grpc/grpc-js");
const providerMessages = require("@pulumi/pulumi/proto/provider_pb.js");
const structMessages = require("google-protobuf/google/protobuf/struct_pb.js");
const emptyMessages = require("google-protobuf/google/protobuf/empty_pb.js");
EngineLog.engineModules = {
  grpc,
  services: require("@pulumi/pulumi/proto/engine_grpc_pb.js"),
  messages: require("@pulumi/pulumi/proto/engine_pb.js"),
};

type Callback = (error: unknown, response?: unknown) => void;
type Call = { request: Record<string, (...args: unknown[]) => unknown> };

const provider = new GovernanceProvider();

/**
 * CheckConfig: the provider's settings, each key one it knows (with the closest where not) and each value one of its
 * setting (settingValueProblem), passed on as given.
 */
function checkConfig(call: Call, callback: Callback) {
  const news =
    (call.request.getNews?.() as { toJavaScript(): Record<string, unknown> } | undefined)?.toJavaScript() ?? {};
  const response = new providerMessages.CheckResponse();
  const failures: unknown[] = [];
  const fail = (key: string, reason: string) => {
    const failure = new providerMessages.CheckFailure();
    failure.setProperty(key);
    failure.setReason(reason);
    failures.push(failure);
  };
  for (const key of Object.keys(news)) {
    if (key.startsWith("__") || key === "version") continue;
    if ((settingKeys as readonly string[]).includes(key)) {
      const problem = settingValueProblem(key, unwrapSecrets(news[key]).plain, packageName);
      if (problem) fail(key, problem);
      continue;
    }
    const near = closestName(key, [...settingKeys]);
    fail(
      key,
      `${packageName}:${key} is no setting of this provider${near ? `: did you mean ${packageName}:${near}?` : ""}; its settings are ${settingKeys.join(", ")}`,
    );
  }
  response.setInputs(structMessages.Struct.fromJavaScript(news));
  response.setFailuresList(failures);
  callback(null, response);
}

/** DiffConfig: a changed setting updates the provider in place; it never replaces its resources. */
function diffConfig(call: Call, callback: Callback) {
  const plain = (name: string) =>
    unwrapSecrets((call.request[name]?.() as { toJavaScript(): unknown } | undefined)?.toJavaScript() ?? {})
      .plain as Record<string, unknown>;
  const [olds, news] = [plain("getOlds"), plain("getNews")];
  const changed = [...new Set([...Object.keys(olds), ...Object.keys(news)])].filter(
    (key) => !key.startsWith("__") && JSON.stringify(olds[key]) !== JSON.stringify(news[key]),
  );
  const response = new providerMessages.DiffResponse();
  response.setChanges(
    changed.length > 0
      ? providerMessages.DiffResponse.DiffChanges.DIFF_SOME
      : providerMessages.DiffResponse.DiffChanges.DIFF_NONE,
  );
  response.setDiffsList(changed);
  callback(null, response);
}

/** Configure: the settings reach every provider; secrets arrive wrapped, and are answered wrapped. */
function configure(call: Call, callback: Callback) {
  const config: Record<string, unknown> = {};
  const variables = call.request.getVariablesMap?.() as
    | { forEach(each: (value: string, key: string) => void): void }
    | undefined;
  variables?.forEach((value, key) => {
    config[key.startsWith(`${packageName}:`) ? key.slice(packageName.length + 1) : key] = value;
  });
  const args = (call.request.getArgs?.() as { toJavaScript(): Record<string, unknown> } | undefined)?.toJavaScript();
  Object.assign(config, args ?? {});
  provider.configure(config);
  const response = new providerMessages.ConfigureResponse();
  response.setAcceptsecrets(true);
  response.setAcceptresources(true);
  response.setAcceptoutputs(true);
  // No supportsPreview: the engine would then call create and update at preview too, expecting them to send nothing.
  callback(null, response);
}

/**
 * Read: as the SDK's, but `pulumi import` sends no properties at all (the SDK's would fail on them), and a resource
 * that is gone answers an empty response, which the engine takes as "does not exist" (and drops from state).
 */
function read(call: Call, callback: Callback) {
  const request = call.request;
  const properties =
    (request.getProperties?.() as { toJavaScript(): Record<string, unknown> } | undefined)?.toJavaScript() ?? {};
  provider
    .read(request.getId?.() as string, request.getUrn?.() as string, properties)
    .then((result) => {
      const response = new providerMessages.ReadResponse();
      if (result.id) {
        response.setId(result.id);
        response.setProperties(structMessages.Struct.fromJavaScript(result.props));
        if (result.inputs) response.setInputs(structMessages.Struct.fromJavaScript(result.inputs));
      }
      callback(null, response);
    })
    .catch((error: unknown) => callback(error));
}

/**
 * Diff: as the SDK's, with the detailed diff of the properties the program wrote (the SDK's server sends none, and
 * the engine then shows every input, internal ones among them, as changed).
 */
function diff(call: Call, callback: Callback) {
  const request = call.request;
  const struct = (name: string) =>
    (request[name]?.() as { toJavaScript(): Record<string, unknown> } | undefined)?.toJavaScript();
  provider
    .diff(
      request.getId?.() as string,
      request.getUrn?.() as string,
      struct("getOlds") ?? {},
      struct("getNews") ?? {},
      struct("getOldInputs"),
    )
    .then((result) => {
      const response = new providerMessages.DiffResponse();
      const { DiffChanges } = providerMessages.DiffResponse;
      response.setChanges(
        result.changes === true
          ? DiffChanges.DIFF_SOME
          : result.changes === false
            ? DiffChanges.DIFF_NONE
            : DiffChanges.DIFF_UNKNOWN,
      );
      if (result.replaces?.length) response.setReplacesList(result.replaces);
      if (result.deleteBeforeReplace) response.setDeletebeforereplace(true);
      if (result.detailedDiff) {
        const map = response.getDetaileddiffMap();
        for (const [path, kind] of Object.entries(result.detailedDiff)) {
          const property = new providerMessages.PropertyDiff();
          property.setKind(kind);
          property.setInputdiff(true);
          map.set(path, property);
        }
        response.setDiffsList([...new Set(Object.keys(result.detailedDiff).map((path) => /^[^.[]+/.exec(path)?.[0]))]);
        response.setHasdetaileddiff(true);
      }
      callback(null, response);
    })
    .catch((error: unknown) => callback(error));
}

/**
 * Cancel: the engine asks the plugin to stop (Ctrl-C). Every provider's client stops sending (ProviderContext.cancel),
 * so the operations in flight end at their next request, a write already sent let finish and recorded.
 */
function cancel(_call: Call, callback: Callback) {
  for (const served of Object.values(providers)) served.context.cancel();
  callback(null, new emptyMessages.Empty());
}

const overrides: Record<string, (call: Call, callback: Callback) => void> = {
  cancel,
  checkConfig,
  diff,
  diffConfig,
  configure,
  read,
};

// The SDK's server adds the provider service once; ours answers the configuration calls, the SDK's the rest.
const addService = grpc.Server.prototype.addService;
grpc.Server.prototype.addService = function (service, implementation) {
  const served = Object.fromEntries(
    Object.keys(service).map((method) => {
      const sdk = (implementation as Record<string, unknown>)[method];
      const own = overrides[method];
      return [method, own ?? (typeof sdk === "function" ? sdk.bind(implementation) : sdk)];
    }),
  );
  return addService.call(this, service, served as typeof implementation);
};

const args = process.argv.slice(2);
EngineLog.engineAddress = args.filter((arg) => !arg.startsWith("-")).at(0);
pulumiProvider.main(provider, args).then(keepCompiledCode, (error: unknown) => {
  console.error(error);
  process.exit(1);
});
