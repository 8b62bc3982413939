import * as pulumi from "@pulumi/pulumi";
import * as messages from "@pulumi/pulumi/proto/provider_pb";
import type * as pulumiProvider from "@pulumi/pulumi/provider";
import type { Struct } from "google-protobuf/google/protobuf/struct_pb";
import { declareFolder, type FolderResources } from "../resources/policy-folder";
import { toStruct } from "./struct";

// PolicyFolder as a component of the plugin: the same reading and checks of the folder as in a Node.js program
// (declareFolder), its children the plugin's own resources, registered through the engine like a program's.
//
// A Construct call runs as the Node.js SDK runs a component in a provider: the SDK's runtime pointed at the engine's
// resource monitor for this call, the inputs as outputs that keep their dependencies and secrecy, the options the
// program gave; the component's state goes back with the URNs it depends on. The SDK keeps these steps in modules it
// does not declare as API; they are named once here, with the types this file uses.
const runtime = {
  settings: require("@pulumi/pulumi/runtime/settings") as {
    resetOptions(...args: [string, string, number, string, string, boolean, string]): void;
    awaitFeatureSupport(): Promise<void>;
    waitForRPCs(): Promise<void>;
  },
  config: require("@pulumi/pulumi/runtime/config") as {
    setAllConfig(config: Record<string, string>, secretKeys?: string[]): void;
  },
  state: require("@pulumi/pulumi/runtime/state") as { withLocalStorage<T>(run: () => Promise<T>): Promise<T> },
  rpc: require("@pulumi/pulumi/runtime/rpc") as typeof import("@pulumi/pulumi/runtime/rpc"),
  server: require("@pulumi/pulumi/provider/server") as {
    deserializeInputs(inputs: Struct | undefined, dependencies: unknown): Promise<pulumi.Inputs>;
  },
  hooks: require("@pulumi/pulumi/runtime/resource") as { hookBindingFromProto(binding: unknown): unknown },
  /** An output's value, known or not (a URN always is). */
  value: <T>(output: pulumi.Input<T>) => (pulumi.output(output) as unknown as { promise(): Promise<T> }).promise(),
};

const packageName = "tfegov";

/** A custom resource of this package, served by this plugin. */
class PackageResource extends pulumi.CustomResource {
  constructor(type: string, name: string, args: pulumi.Inputs, opts: pulumi.CustomResourceOptions) {
    super(`${packageName}:index:${type}`, name, args, opts);
  }
}

/** The children a PolicyFolder of the plugin declares: custom resources of this package. */
const pluginResources: FolderResources<PackageResource> = {
  policy: (name, args, opts) => new PackageResource("Policy", name, args, opts),
  manifest: (name, args, opts) => new PackageResource("PolicyFolderManifest", name, { ...args }, opts),
  policyId: (policy) => policy.id,
};

class PluginPolicyFolder extends pulumi.ComponentResource {
  constructor(name: string, opts: pulumi.ComponentResourceOptions) {
    super(`${packageName}:index:PolicyFolder`, name, {}, opts);
  }

  /**
   * The SDK registers a component's outputs itself, empty, once its `initialize` resolves, and ignores every later
   * call: the folder's outputs, known only once the folder is read, would never reach the state. That empty call is
   * let pass; `finish` registers the folder's.
   */
  override registerOutputs(outputs?: pulumi.Inputs | Promise<pulumi.Inputs> | pulumi.Output<pulumi.Inputs>): void {
    if (outputs !== undefined) super.registerOutputs(outputs);
  }

  finish(outputs: pulumi.Inputs): void {
    this.registerOutputs(outputs);
  }
}

export async function constructPolicyFolder(
  name: string,
  inputs: pulumi.Inputs,
  options: pulumi.ComponentResourceOptions,
): Promise<pulumiProvider.ConstructResult> {
  // The folder is read while the component registers: its directory is a plain path in every program; the other
  // arguments (the sets' ids) may be outputs of other resources, and go to the policies as they are.
  const folder = new PluginPolicyFolder(name, options);
  const policies = await declareFolder(folder, name, inputs, pluginResources, packageName);
  const policyIds = pulumi.all(
    Object.fromEntries(Object.entries(policies).map(([block, policy]) => [block, pluginResources.policyId(policy)])),
  );
  folder.finish({ policyIds });
  return { urn: folder.urn, state: { policyIds } };
}

type Construct = (
  name: string,
  type: string,
  inputs: pulumi.Inputs,
  options: pulumi.ComponentResourceOptions,
) => Promise<pulumiProvider.ConstructResult>;

/** Runs one Construct request through `construct`, with the SDK's runtime set up for it (see the top of this file). */
export function runConstruct(
  request: messages.ConstructRequest,
  engineAddress: string | undefined,
  construct: Construct,
): Promise<messages.ConstructResponse> {
  return runtime.state.withLocalStorage(async () => {
    if (engineAddress === undefined) throw new Error("fatal: Missing <engine> address");
    const { settings, config, rpc, server } = runtime;
    settings.resetOptions(
      request.getProject(),
      request.getStack(),
      request.getParallel(),
      engineAddress,
      request.getMonitorendpoint(),
      request.getDryrun(),
      request.getOrganization(),
    );
    await settings.awaitFeatureSupport();
    config.setAllConfig(Object.fromEntries(request.getConfigMap().entries()), request.getConfigsecretkeysList());
    const inputs = await server.deserializeInputs(request.getInputs(), request.getInputdependenciesMap());
    const result = await construct(request.getName(), request.getType(), inputs, componentOptions(request));
    const response = new messages.ConstructResponse().setUrn(await runtime.value(result.urn));
    const label = `construct(${request.getType()}, ${request.getName()})`;
    const [state, dependencies] = await rpc.serializeResourceProperties(label, result.state);
    for (const [key, resources] of dependencies) {
      const urns = await Promise.all([...resources].map((resource) => runtime.value(resource.urn)));
      response
        .getStatedependenciesMap()
        .set(key, new messages.ConstructResponse.PropertyDependencies().setUrnsList(urns));
    }
    response.setState(toStruct(state));
    await settings.waitForRPCs();
    return response;
  });
}

/** The options the program gave the component, as the SDK's provider server rebuilds them. */
function componentOptions(request: messages.ConstructRequest): pulumi.ComponentResourceOptions {
  const providerOf = (reference: string) => new pulumi.DependencyProviderResource(reference);
  const aliases = request.getAliasesList().map((alias): pulumi.Input<string | pulumi.Alias> => {
    if (alias.hasUrn()) return alias.getUrn();
    const spec = alias.getSpec();
    return {
      ...(spec?.getName() ? { name: spec.getName() } : {}),
      ...(spec?.getProject() ? { project: spec.getProject() } : {}),
      ...(spec?.getStack() ? { stack: spec.getStack() } : {}),
      ...(spec?.hasParenturn()
        ? { parent: spec.getParenturn() }
        : spec?.getNoparent()
          ? { parent: pulumi.rootStackResource }
          : {}),
    };
  });
  const replacementTrigger = request.getReplacementTrigger();
  return {
    aliases,
    dependsOn: request.getDependenciesList().map((urn) => new pulumi.DependencyResource(urn)),
    protect: request.getProtect(),
    providers: Object.fromEntries([...request.getProvidersMap().entries()].map(([pkg, ref]) => [pkg, providerOf(ref)])),
    parent: request.getParent() ? new pulumi.DependencyResource(request.getParent()) : undefined,
    ignoreChanges: request.getIgnorechangesList(),
    replaceOnChanges: request.getReplaceonchangesList(),
    customTimeouts: request.getCustomtimeouts()?.toObject(),
    retainOnDelete: request.getRetainondelete(),
    hooks: runtime.hooks.hookBindingFromProto(request.getResourceHooks()) as pulumi.ComponentResourceOptions["hooks"],
    ...(request.getDeletedwith() ? { deletedWith: providerOf(request.getDeletedwith()) } : {}),
    ...(replacementTrigger
      ? { replacementTrigger: runtime.rpc.deserializeProperty(replacementTrigger.toJavaScript(), true) }
      : {}),
  };
}
