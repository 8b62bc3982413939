import type * as pulumi from "@pulumi/pulumi";

/** Resource types whose provider implementation `pulumi-tfe-governance/providers` exports. */
export type ProviderType = "Policy" | "ModuleVersionDeprecation";

/**
 * The provider object Pulumi serializes into every resource's state. It holds no logic and captures nothing but
 * the resource type: each method loads the installed library at run time, so `refresh` and `destroy` of an
 * existing stack run the library version installed now (an upgrade fixes them), the serialized text stays a few
 * hundred bytes, and it never changes between versions (which would otherwise show as a change of every resource).
 */
export function thinProvider(type: ProviderType): pulumi.dynamic.ResourceProvider {
  const load = () => require("pulumi-tfe-governance/providers").providers[type];
  return {
    configure: (request) => load().configure(request),
    check: (olds, news) => load().check(olds, news),
    diff: (id, olds, news) => load().diff(id, olds, news),
    create: (inputs) => load().create(inputs),
    read: (id, props) => load().read(id, props),
    update: (id, olds, news) => load().update(id, olds, news),
    delete: (id, props) => load().delete(id, props),
  };
}
