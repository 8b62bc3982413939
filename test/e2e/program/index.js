// The end-to-end tests' Pulumi program: it declares what spec.json (rewritten by the test between steps) says.
const { readFileSync } = require("node:fs");
const { ModuleVersionDeprecation, Policy } = require("pulumi-tfe-governance");

const spec = JSON.parse(readFileSync("spec.json", "utf8"));
const policies = {};
for (const { resource, ...args } of spec.policies) policies[resource] = new Policy(resource, args).policyId;
for (const { resource, ...args } of spec.deprecations) new ModuleVersionDeprecation(resource, args);

exports.policyIds = policies;
