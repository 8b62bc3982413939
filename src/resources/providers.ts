// Loaded at run time by the serialized provider shim (see shim.ts): not part of the public API.
import { PolicyProvider } from "./policy";
import type { ProviderType } from "./shim";

export const providers: Partial<Record<ProviderType, PolicyProvider>> = {
  Policy: new PolicyProvider(),
};
