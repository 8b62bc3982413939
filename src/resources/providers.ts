// Loaded at run time by the provider text every resource's state holds (see shim.ts): not part of the public API,
// but a contract with every state ever written. The entry point `pulumi-tfe-governance/providers`, the export
// `providers` and its keys (the resource types) must keep their names in every later version: a state file names
// them, and refresh or destroy of that stack loads them from the library installed then.

import "../process/provider-process";
import { keepCompiledCode } from "../process/compile-cache";
import { silenceQuietFailures } from "./failure-report";
import { freshProviders, type ServedProvider } from "./provider-set";
import type { ProviderType } from "./shim";

/** Every resource type's provider, as the engine calls it (provider-set.ts makes them). */
export const providers: Record<ProviderType, ServedProvider> = freshProviders();

// Everything the provider loads up front is loaded now (undici comes with the first client, and keeps itself).
keepCompiledCode();

// A failure is said once, under its resource: the provider host's own print of it to stderr is left out.
silenceQuietFailures();
