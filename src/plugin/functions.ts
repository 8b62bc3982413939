import {
  getModuleVersion,
  getPolicy,
  getPolicySet,
  listModuleVersions,
  listPolicies,
  listPolicyResults,
  listPolicySets,
} from "../read-functions";
import type { ProviderContext } from "../resources/provider-context";

// The read functions as the plugin's invokes (`tfegov:index:getPolicy`, ...): the same functions a Node.js program
// calls, with the provider's client and organization (`tfegov:organization`, then TFE_ORGANIZATION) for a list that
// names none. A list comes back as `{ items }`, as a function's result is an object.

const functions: Record<string, (args: Record<string, unknown>, context: ProviderContext) => Promise<object>> = {
  getPolicy: (args, context) => getPolicy(args as never, { client: context.client }),
  listPolicies: async (args, context) => ({
    items: await listPolicies(args as never, { client: context.client, organization: context.defaultOrganization }),
  }),
  getPolicySet: (args, context) => getPolicySet(args as never, { client: context.client }),
  listPolicySets: async (args, context) => ({
    items: await listPolicySets(args as never, { client: context.client, organization: context.defaultOrganization }),
  }),
  getModuleVersion: (args, context) => getModuleVersion(args as never, { client: context.client }),
  listModuleVersions: async (args, context) => ({
    items: await listModuleVersions(args as never, { client: context.client }),
  }),
  listPolicyResults: async (args, context) => ({
    items: await listPolicyResults(args as never, {
      client: context.client,
      organization: context.defaultOrganization,
    }),
  }),
};

export const functionNames = Object.keys(functions);

export async function invokeFunction(
  token: string,
  args: Record<string, unknown>,
  context: ProviderContext,
): Promise<Record<string, unknown>> {
  const name = token.split(":").pop() ?? "";
  const call = functions[name];
  if (!call || !token.endsWith(`:index:${name}`)) throw new Error(`${token} is no function of this package`);
  try {
    return JSON.parse(JSON.stringify(await call(args, context))) as Record<string, unknown>;
  } catch (error) {
    // The settings a failure names, as this program's language spells them (tfegov:organization).
    if (error instanceof Error) error.message = context.wording(error.message);
    throw error;
  }
}
