// Loaded at run time by the serialized provider shim (see shim.ts): not part of the public API.
import type * as pulumi from "@pulumi/pulumi";
import { ModuleVersionDeprecationProvider } from "./module-version-deprecation";
import { PolicyProvider } from "./policy";
import { type ProviderContext, withRecordedConfigAdvice } from "./provider-context";
import type { ProviderType } from "./shim";

export const providers: Record<ProviderType, pulumi.dynamic.ResourceProvider & { context: ProviderContext }> = {
  Policy: withRecordedConfigAdvice(new PolicyProvider()),
  ModuleVersionDeprecation: withRecordedConfigAdvice(new ModuleVersionDeprecationProvider()),
};
