// The providers of every resource type, made anew for each command: providers.ts holds the ones a process serves.

import type * as pulumi from "@pulumi/pulumi";
import { withDerivedSecrets } from "./derived-secrets";
import { clearMembershipDeclarations } from "./memberships";
import { holdsDeprecation, ModuleVersionDeprecationProvider } from "./module-version-deprecation";
import { PolicyProvider } from "./policy";
import { policyProperties } from "./policy/properties";
import { PolicyFolderManifestProvider } from "./policy-folder/manifest";
import { PolicySetProvider } from "./policy-set";
import { policySetProperties, policySetSecrets } from "./policy-set/properties";
import { keyedProperties } from "./property-table";
import { forgetSaidOnce, type ProviderContext, withFailureReports } from "./provider-context";
import { answersWith, withServiceAddress } from "./service-address";
import type { ProviderType } from "./shim";
import { startOperationReads } from "./stricter-changes";
import { withWireKeys } from "./wire-keys";

export type ServedProvider = pulumi.dynamic.ResourceProvider & { context: ProviderContext };

/**
 * Each provider as the engine calls it, wrapped once, innermost first: what it derives from a secret answered as a
 * secret (derived-secrets.ts), the service it talks to recorded and compared (service-address.ts), keys that are
 * labels escaped for the wire (wire-keys.ts), failures said once under their resource.
 */
export function freshProviders(): Record<ProviderType, ServedProvider> {
  return {
    Policy: withFailureReports(
      withServiceAddress(withDerivedSecrets(new PolicyProvider(), policyProperties), "policy", (client, id) =>
        answersWith(() => client.policies.read(id)),
      ),
      "Policy",
    ),
    ModuleVersionDeprecation: withFailureReports(
      withServiceAddress(new ModuleVersionDeprecationProvider(), "module version deprecation", (client, id, props) =>
        holdsDeprecation(client, id, props),
      ),
      "ModuleVersionDeprecation",
    ),
    PolicyFolderManifest: withFailureReports(
      withWireKeys(new PolicyFolderManifestProvider(), ["policies"]),
      "PolicyFolder",
    ),
    PolicySet: withFailureReports(
      withWireKeys(
        withServiceAddress(
          withDerivedSecrets(new PolicySetProvider(), policySetProperties, policySetSecrets),
          "policy set",
          (client, id) => answersWith(() => client.policySets.read(id)),
        ),
        keyedProperties(policySetProperties),
      ),
      "PolicySet",
    ),
  };
}

/**
 * A plugin the engine attached to (PULUMI_DEBUG_PROVIDERS) outlives its command and serves the next one, which starts
 * as a process the engine starts for one command does: with providers that remember nothing of the last command
 * (its listings, the names it claimed, its Ctrl-C), what that one said once unsaid, and its reads of recent runs
 * anew. The Node.js dynamic providers never need it: their process serves one command.
 */
export function startCommand(providers: Record<ProviderType, ServedProvider>): void {
  Object.assign(providers, freshProviders());
  forgetSaidOnce();
  clearMembershipDeclarations();
  startOperationReads();
}
