// The end-to-end tests' Pulumi program: it declares what spec.json (rewritten by the test between steps) says.
const { readFileSync } = require("node:fs");
const pulumi = require("@pulumi/pulumi");
const { ModuleVersionDeprecation, Policy, PolicySet } = require("pulumi-tfe-governance");

const spec = JSON.parse(readFileSync("spec.json", "utf8"));
const policies = {};
const declared = {};
// A policy whose code is a secret gives it as `secretCode`; one made only after others lists them in `after`.
for (const { resource, secretCode, after, ...args } of spec.policies) {
  const code = secretCode === undefined ? {} : { code: pulumi.secret(secretCode) };
  const options = after === undefined ? {} : { dependsOn: after.map((name) => declared[name]) };
  declared[resource] = new Policy(resource, { ...args, ...code }, options);
  policies[resource] = declared[resource].policyId;
}
for (const { resource, ...args } of spec.deprecations) new ModuleVersionDeprecation(resource, args);
// A set lists its policies by resource name; the rest of its arguments are PolicySet's own.
const policySets = {};
for (const { resource, policies: members, ...args } of spec.policySets ?? []) {
  const policyIds = members ? { policyIds: members.map((member) => policies[member]) } : {};
  policySets[resource] = new PolicySet(resource, { ...args, ...policyIds }).policySetId;
}

exports.policyIds = policies;
exports.policySetIds = policySets;
