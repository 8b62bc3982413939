// What a `Policy` is: its arguments, inputs and outputs, the property table every operation derives from, and the pure
// mappings between the service's policy and the state (no request, no disk but the code file a program names).

import { createHash } from "node:crypto";
import type * as pulumi from "@pulumi/pulumi";
import type { Policy as ServicePolicy } from "../../client/policies";
import type { PolicyKind } from "../../contract/policies";
import { policySetIdPattern } from "../../contract/policy-sets";
import { FileAccess } from "../../policy-code/file-access";
import type { Enforcement } from "../guard";
import { propertiesThat, propertyTable, readFromService } from "../property-table";
import type { IdShape } from "../provider-context";

export interface PolicyArgs {
  /** Organization of the policy; default: stack config `tfe:organization`, then `TFE_ORGANIZATION`. */
  organization?: pulumi.Input<string>;
  /** Policy name (letters, digits, `-`, `_`), unique in the organization; default: the resource's name. */
  name?: pulumi.Input<string>;
  /** What the policy checks, shown on the service; none by default. */
  description?: pulumi.Input<string>;
  /** `sentinel` (default) or `opa`. */
  kind?: pulumi.Input<PolicyKind>;
  /** OPA only, and required there, e.g. `data.terraform.deny`. */
  query?: pulumi.Input<string>;
  /**
   * sentinel: `hard-mandatory`, `soft-mandatory` (default), `advisory`; opa: `mandatory`, `advisory` (default).
   */
  enforcementLevel?: pulumi.Input<string>;
  /** @deprecated The service's old `enforce` array; use `enforcementLevel`. Its single entry's `mode` is used. */
  enforce?: pulumi.Input<pulumi.Input<{ path?: pulumi.Input<string>; mode: pulumi.Input<string> }>[]>;
  /**
   * Policy sets that hold the policy. A change updates it in place: the policy joins and leaves sets through each
   * set's `relationships/policies`, keeping its id and code. Leaving a set weakens governance (see `allowWeakening`).
   */
  policySetIds?: pulumi.Input<pulumi.Input<string>[]>;
  /**
   * The policy's code from a file, relative to the program's directory (Pulumi.yaml's `main`, else the project
   * directory). Only the path, the SHA-256 and the size go into state. Exactly one of `codeFile` and `code`.
   */
  codeFile?: pulumi.Input<string> | pulumi.asset.FileAsset;
  /** The policy's code, inline. Exactly one of `codeFile` and `code`. */
  code?: pulumi.Input<string>;
  /** Take over a policy that already has this name instead of failing. */
  adoptExisting?: pulumi.Input<boolean>;
  /**
   * Allow a change that lowers `enforcementLevel` (hard-mandatory > soft-mandatory > advisory; mandatory > advisory),
   * which otherwise fails `pulumi preview`. Stack config `tfe:allowWeakening: true` allows it for every resource.
   */
  allowWeakening?: pulumi.Input<boolean>;
  /**
   * Approve a raised level that recent runs failed: with stack config `tfe:requireNoBlockedRuns: true`, preview
   * refuses a raise that would have blocked a run of the window (or whose reads did not finish), unless this is set.
   */
  allowStricter?: pulumi.Input<boolean>;
  /**
   * OPA: the Rego dialect of the policy sets the policy joins, which preview checks the code in (with `opa`):
   * `"v0"` (default) for sets on `latest` (the service runs OPA 0.61.x for it) or a 0.x runtime, `"v1"` for sets
   * pinned to an OPA 1.x runtime. Rego v1 with `import rego.v1` reads in both.
   */
  regoVersion?: pulumi.Input<"v0" | "v1">;
}

/** The inputs as the provider holds them once checked. */
export interface PolicyInputs {
  organization: string;
  name: string;
  description: string | null;
  kind: PolicyKind;
  query: string | null;
  enforcementLevel: string;
  policySetIds: string[];
  codeFile?: string;
  code?: string;
  /** SHA-256 of the code the service holds, as uploaded: a change of code is a change of hash. */
  codeHash: string | null;
  /** Size of that code in bytes. */
  codeSize: number;
  adoptExisting: boolean;
  allowWeakening: boolean;
  allowStricter?: boolean;
}

export interface PolicyOutputs extends PolicyInputs {
  policyId: string;
  /** How many policy sets hold the policy, as the service counts them (those of other owners included). */
  policySetCount: number;
  /** When the service last changed the policy: a refresh downloads the code only when this moved. */
  updatedAt: string | null;
}

/**
 * What a policy enforces, for the guard: its level, and the sets it declares (the memberships it owns). Outputs
 * give the service's (the baseline), checked inputs the program's.
 */
export function policyEnforcement(props: {
  kind?: unknown;
  enforcementLevel?: unknown;
  policySetIds?: unknown;
}): Enforcement {
  return {
    kind: props.kind as PolicyKind,
    policies: { "": props.enforcementLevel as string },
    memberships: {
      property: "policySetIds",
      ids: props.policySetIds ?? [],
      whenReplaced: "a PolicySet that is replaced gets a new id, and the policy leaves the old set",
    },
  };
}

export const policySetIdShape: IdShape = {
  what: "policy set",
  pattern: policySetIdPattern,
  example: "polset-3yVQZvHzf5j3WRJ1",
};

export const defaultEnforcementLevel: Record<PolicyKind, string> = { sentinel: "soft-mandatory", opa: "advisory" };
/**
 * Every property of a policy, once. The code counts by its hash; `code` too, so that moving between inline code and
 * a file shows. Not `codeFile`: the same file at another path (an absolute path from another checkout) changes
 * nothing on the service. Not `adoptExisting`: it acts only at creation. Either would fail `pulumi preview
 * --expect-no-changes` for nothing. `enforce` is read into `enforcementLevel`.
 */
export const policyProperties = propertyTable<PolicyArgs>()({
  organization: { argument: "string", change: "replaces", output: true, service: { read: "held, else declared" } },
  name: { argument: "string", change: "replaces", output: true, service: { sent: "create", read: "as held" } },
  description: {
    argument: "string",
    change: "updates",
    output: true,
    service: { sent: "create and update", clears: true, read: "as held" },
  },
  kind: { argument: "string", change: "replaces", output: true, service: { sent: "create", read: "as held" } },
  query: {
    argument: "string",
    change: "updates",
    output: true,
    service: { sent: "create and update", read: "as held" },
  },
  enforcementLevel: {
    argument: "string",
    change: "updates",
    output: true,
    service: { sent: "create and update", read: "held, else declared" },
  },
  enforce: { argument: "list", change: "none", output: false },
  // Sent at create; an update changes it through the sets' relationships, not the PATCH (see `update`).
  policySetIds: {
    argument: "string list",
    change: "updates",
    output: true,
    service: { sent: "create", read: "held, else declared" },
  },
  codeFile: { argument: "string", change: "none", output: true },
  code: { argument: "string", change: "updates", output: false },
  codeHash: { change: "updates", output: true, secretWith: ["code"], shownAs: ["code", "codeFile"] },
  codeSize: { change: "none", output: true, secretWith: ["code"] },
  adoptExisting: { argument: "boolean", change: "none", output: false },
  allowWeakening: { argument: "boolean", change: "none", output: false },
  allowStricter: { argument: "boolean", change: "none", output: false },
  regoVersion: { argument: "string", change: "none", output: false },
  policyId: { change: "none", output: true, service: { as: "id", read: "as held" }, changesWith: [] },
  policySetCount: { change: "none", output: true, service: { read: "as held" }, changesWith: ["policySetIds"] },
  // An update keeps what state knew of the code's last verified change unless it uploads code (see `update`).
  updatedAt: { change: "none", output: true, service: { read: "as held" }, changesWith: ["codeHash"] },
});
export const replacingProperties = propertiesThat(policyProperties, "replaces");
export const updatableProperties = propertiesThat(policyProperties, "updates");

export function hashCode(code: Uint8Array): string {
  return createHash("sha256").update(code).digest("hex");
}

export function loadCode(inputs: Pick<PolicyInputs, "code" | "codeFile">): Buffer {
  if (inputs.code !== undefined) return Buffer.from(inputs.code, "utf8");
  const codeFile = inputs.codeFile as string;
  return FileAccess.forFile(codeFile).read(codeFile, `codeFile ${codeFile}`);
}

export function toOutputs(
  inputs: PolicyInputs,
  policy: ServicePolicy,
  codeHash: string | null,
  codeSize: number,
): PolicyOutputs {
  const held = readFromService<Omit<PolicyOutputs, "codeHash" | "codeSize" | "adoptExisting" | "allowWeakening">>(
    policyProperties,
    declaredMemberships(policy, inputs.policySetIds),
    inputs,
  );
  const outputs: PolicyOutputs = {
    ...held,
    codeHash,
    codeSize,
    adoptExisting: inputs.adoptExisting ?? false,
    allowWeakening: inputs.allowWeakening ?? false,
  };
  if (inputs.codeFile !== undefined) outputs.codeFile = inputs.codeFile;
  if (inputs.code !== undefined) outputs.code = inputs.code;
  return outputs;
}

/**
 * The policy with only the set memberships it declares: one in a set that a PolicySet's policyIds (or anyone else)
 * made is that owner's, not drift of this resource; one it declares and that was removed outside Pulumi is. A
 * policy read without a declaration (`Policy.get`) keeps them all.
 */
export function declaredMemberships(policy: ServicePolicy, declared: readonly string[] | undefined): ServicePolicy {
  if (!Array.isArray(declared) || policy.policySetIds === undefined) return policy;
  return { ...policy, policySetIds: policy.policySetIds.filter((setId) => declared.includes(setId)) };
}
