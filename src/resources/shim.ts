import * as pulumi from "@pulumi/pulumi";
import { secretInputsKey } from "./derived-secrets";

/** Resource types whose provider implementation `pulumi-tfe-governance/providers` exports. */
export type ProviderType = "Policy" | "ModuleVersionDeprecation" | "PolicyFolderManifest" | "PolicySet";

/**
 * The provider Pulumi keeps in every resource's state (`__provider`, in inputs and outputs alike): the engine's
 * dynamic-provider host loads it as a module and calls `handler()`. It holds no logic and names nothing but the
 * resource type: the installed library is loaded at run time, so `refresh` and `destroy` of an existing stack run
 * the library version installed now (an upgrade fixes them), and the text never changes between versions (which
 * would otherwise show as a change of every resource).
 *
 * Written out rather than produced by Pulumi's closure serializer, which is what `pulumi.dynamic.Resource` would
 * do: the serializer turns the same few lines into 2.2 KB (a wrapper per method), stored twice per resource and
 * rewritten at every checkpoint of the stack, and costs the program milliseconds per resource.
 */
export function providerSource(type: ProviderType): string {
  return `exports.handler = () => require("pulumi-tfe-governance/providers").providers.${type};\n`;
}

/**
 * A dynamic resource (type token `pulumi-nodejs:dynamic/tfe:<type>`) whose provider is {@link providerSource}:
 * what `pulumi.dynamic.Resource` registers, with the provider's text given instead of serialized.
 */
export abstract class ShimResource extends pulumi.CustomResource {
  constructor(type: ProviderType, name: string, props: pulumi.Inputs, opts?: pulumi.CustomResourceOptions) {
    // While the resource registers, @pulumi/pulumi records a stack trace for each of the four promises behind every
    // property, only to print them should a promise leak, and the Node host formats each through source maps: with
    // the 15 properties of a Policy that was 40% of the program's time in a preview of 200 policies. None is taken
    // here. The resource's own source position is unaffected (the SDK lifts the limit to read it), and an error
    // thrown in here gets its stack taken again, where the limit is back.
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      const token = `pulumi-nodejs:dynamic/tfe:${type}`;
      // The resource's URN, for the provider's warnings to be shown under it (see EngineLog); an internal input
      // (`__`), so no diff shows it and no change of it updates anything.
      super(
        token,
        name,
        {
          ...props,
          __provider: providerSource(type),
          __urn: urnOf(name, token, opts),
          [secretInputsKey]: secretInputsAmong(props),
        },
        opts,
      );
    } catch (error) {
      Error.stackTraceLimit = stackTraceLimit;
      if (error instanceof Error) Error.captureStackTrace(error);
      throw error;
    } finally {
      Error.stackTraceLimit = stackTraceLimit;
    }
  }
}

/**
 * The URN the resource will have, as a promise rather than an output: an output of the parent's URN would make the
 * resource depend on its parent, and depending on a component waits for every child of it, this one included.
 */
function urnOf(
  name: string,
  token: string,
  opts: pulumi.CustomResourceOptions | undefined,
): Promise<string | undefined> {
  // A parent that is no resource fails the registration itself, with Pulumi's own message; no URN is made for it.
  if (opts?.parent !== undefined && !pulumi.Resource.isInstance(opts.parent)) return Promise.resolve(undefined);
  const urn = pulumi.createUrn(name, token, opts?.parent) as unknown as { promise(): Promise<string> };
  return urn.promise();
}

/**
 * The names of the inputs given as secrets, as a plain promise (an output of them would be a secret itself): the
 * provider sees plain values only, and marks what it computes from these as secrets (derived-secrets.ts).
 */
async function secretInputsAmong(props: pulumi.Inputs): Promise<string[]> {
  const names = await Promise.all(
    Object.entries(props).map(async ([name, value]) =>
      pulumi.Output.isInstance(value) && (await pulumi.isSecret(value)) ? name : undefined,
    ),
  );
  return names.filter((name): name is string => name !== undefined).sort();
}
