import * as pulumi from "@pulumi/pulumi";
import type * as pulumiProvider from "@pulumi/pulumi/provider";
import { declareFolder, type FolderResources } from "../resources/policy-folder";

// PolicyFolder as a component of the plugin: the same reading and checks of the folder as in a Node.js program
// (declareFolder), its children the plugin's own resources, registered through the engine like a program's.

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
