// Loaded at run time by the provider text every resource's state holds (see shim.ts): not part of the public API,
// but a contract with every state ever written. The entry point `pulumi-tfe-governance/providers`, the export
// `providers` and its keys (the resource types) must keep their names in every later version: a state file names
// them, and refresh or destroy of that stack loads them from the library installed then.

import "../provider-process";
import type * as pulumi from "@pulumi/pulumi";
import { keepCompiledCode } from "../compile-cache";
import { ModuleVersionDeprecationProvider } from "./module-version-deprecation";
import { PolicyProvider } from "./policy";
import { PolicyFolderManifestProvider } from "./policy-folder-manifest";
import { PolicySetProvider } from "./policy-set";
import { GovernanceRefusal, type ProviderContext, withRecordedConfigAdvice } from "./provider-context";
import type { ProviderType } from "./shim";

export const providers: Record<ProviderType, pulumi.dynamic.ResourceProvider & { context: ProviderContext }> = {
  Policy: withRecordedConfigAdvice(new PolicyProvider()),
  ModuleVersionDeprecation: withRecordedConfigAdvice(new ModuleVersionDeprecationProvider()),
  PolicyFolderManifest: new PolicyFolderManifestProvider(),
  PolicySet: withRecordedConfigAdvice(new PolicySetProvider()),
};

// Everything the provider loads up front is loaded now (undici comes with the first client, and keeps itself).
keepCompiledCode();

// The engine shows a refusal thrown from diff under its resource; the dynamic-provider host also prints every error
// it passes on to stderr (`${error}: ${error.stack}`), which the engine shows a second time under the stack. A
// refusal is said once, where it belongs.
const printError = console.error.bind(console);
console.error = (...args: unknown[]) => {
  if (typeof args[0] === "string" && args[0].startsWith(`${GovernanceRefusal.name}: `)) return;
  printError(...args);
};
