// The engine benchmark's Pulumi program (see bench/engine.mts). spec.json, rewritten by the benchmark before each
// operation, says how many resources to declare and whether they are this library's (`ours`) or the engine's
// floor: the same resources with the same inputs under a dynamic provider that makes no request and does no work.
const { readFileSync } = require("node:fs");
const pulumi = require("@pulumi/pulumi");

const spec = JSON.parse(readFileSync("spec.json", "utf8"));

const policies = Array.from({ length: spec.policies }, (_, index) => ({
  name: `policy-${index}`,
  description: `Benchmark policy ${index}`,
  enforcementLevel: spec.enforcementLevel,
  codeFile: `policies/policy-${index}.sentinel`,
}));
const deprecations = Array.from({ length: spec.deprecations }, (_, index) => ({
  moduleName: spec.moduleName,
  moduleProvider: spec.moduleProvider,
  version: `1.0.${index}`,
  reason: `Version 1.0.${index} is superseded; upgrade to 2.0.0.`,
  link: "https://example.com/upgrade",
}));

if (spec.variant === "ours") {
  const { ModuleVersionDeprecation, Policy } = require("pulumi-tfe-governance");
  for (const args of policies) new Policy(args.name, args);
  for (const args of deprecations) new ModuleVersionDeprecation(`deprecation-${args.version}`, args);
} else {
  // One provider object for every resource, as Pulumi's serialization cache wants: the floor pays no
  // serialization per resource either.
  const sameValues = (olds, news) =>
    Object.keys(news).every((key) => key === "__provider" || JSON.stringify(olds[key]) === JSON.stringify(news[key]));
  const noRequestProvider = {
    check: async (_olds, news) => ({ inputs: news }),
    diff: async (_id, olds, news) => ({ changes: !sameValues(olds, news) }),
    create: async (inputs) => ({ id: inputs.name ?? inputs.version, outs: inputs }),
    read: async (id, props) => ({ id, props }),
    update: async (_id, _olds, news) => ({ outs: news }),
    delete: async () => {},
  };
  class Floor extends pulumi.dynamic.Resource {
    constructor(type, name, props) {
      super(noRequestProvider, name, props, undefined, "bench", type);
    }
  }
  for (const args of policies) new Floor("Policy", args.name, args);
  for (const args of deprecations) new Floor("ModuleVersionDeprecation", `deprecation-${args.version}`, args);
}
