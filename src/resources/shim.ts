import type * as pulumi from "@pulumi/pulumi";

/** Resource types whose provider implementation `pulumi-tfe-governance/providers` exports. */
export type ProviderType = "Policy" | "ModuleVersionDeprecation";

const shims = new Map<ProviderType, pulumi.dynamic.ResourceProvider>();

/**
 * The provider object Pulumi serializes into every resource's state. It holds no logic and captures nothing but
 * the resource type: each method loads the installed library at run time, so `refresh` and `destroy` of an
 * existing stack run the library version installed now (an upgrade fixes them), the serialized text stays a few
 * hundred bytes, and it never changes between versions (which would otherwise show as a change of every resource).
 *
 * One object per type, made once: @pulumi/pulumi caches the serialized text by provider object, so every further
 * resource of the type reuses it instead of running the closure serializer again (seconds for hundreds of them).
 */
export function thinProvider(type: ProviderType): pulumi.dynamic.ResourceProvider {
  let shim = shims.get(type);
  if (!shim) {
    const load = () => require("pulumi-tfe-governance/providers").providers[type];
    shim = {
      configure: (request) => load().configure(request),
      check: (olds, news) => load().check(olds, news),
      diff: (id, olds, news) => load().diff(id, olds, news),
      create: (inputs) => load().create(inputs),
      read: (id, props) => load().read(id, props),
      update: (id, olds, news) => load().update(id, olds, news),
      delete: (id, props) => load().delete(id, props),
    };
    shims.set(type, shim);
  }
  return shim;
}
