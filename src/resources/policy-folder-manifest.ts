import { createHash } from "node:crypto";
import type * as pulumi from "@pulumi/pulumi";
import { type PolicyKind, weakensEnforcement } from "../contract/policies";
import { type CheckFailure, ContextProvider, sameValue } from "./provider-context";
import { ShimResource } from "./shim";

/**
 * What a PolicyFolder declared at its last `up`: each policy's name and level. A policy block removed from the folder
 * deletes its Policy, and a provider sees no delete at preview; this resource's check does see the folder's old and
 * new manifest, so a removed policy or a lowered level fails `pulumi preview` before any request, every one listed
 * at once. It makes no request itself: its state is all it is.
 */
export interface PolicyFolderManifestInputs {
  kind: PolicyKind;
  /** Level by policy name. */
  policies: Record<string, string>;
  allowWeakening: boolean;
}

export class PolicyFolderManifestProvider extends ContextProvider implements pulumi.dynamic.ResourceProvider {
  async check(olds: Record<string, unknown>, news: Record<string, unknown>): Promise<pulumi.dynamic.CheckResult> {
    const inputs = { ...news, allowWeakening: news.allowWeakening === true } as unknown as PolicyFolderManifestInputs;
    const previous = olds as Partial<PolicyFolderManifestInputs>;
    if (!previous.policies || previous.kind !== inputs.kind) return { inputs };
    const weakenings = folderWeakenings(inputs.kind, previous.policies, inputs.policies);
    if (weakenings.length === 0) return { inputs };
    const failures: CheckFailure[] = [];
    await this.context.refuseWeakeningUnlessAllowed(failures, {
      subject: "the policy folder's change",
      weakenings,
      allowedOnResource: inputs.allowWeakening,
      urn: news.__urn,
    });
    return { inputs, failures };
  }

  async diff(_id: string, olds: PolicyFolderManifestInputs, news: PolicyFolderManifestInputs) {
    return { changes: !sameValue(olds.policies, news.policies) || olds.kind !== news.kind };
  }

  async create(inputs: PolicyFolderManifestInputs): Promise<pulumi.dynamic.CreateResult> {
    // An id of its own content at creation: nothing on the service stands behind it.
    const id = `manifest-${createHash("sha256").update(JSON.stringify(inputs.policies)).digest("hex").slice(0, 16)}`;
    return { id, outs: inputs };
  }

  async update(_id: string, _olds: PolicyFolderManifestInputs, news: PolicyFolderManifestInputs) {
    return { outs: news };
  }

  async read(id: string, props: PolicyFolderManifestInputs): Promise<pulumi.dynamic.ReadResult> {
    return { id, props };
  }
}

/** Every removed policy and every lowered level, in the order of the names. */
function folderWeakenings(kind: PolicyKind, before: Record<string, string>, after: Record<string, string>): string[] {
  return Object.keys(before)
    .sort()
    .flatMap((name) => {
      const [from, to] = [before[name] as string, after[name]];
      if (to === undefined) return [`policy "${name}" (${from}) is removed`];
      return weakensEnforcement(kind, from, to) ? [`policy "${name}" goes from ${from} to ${to}`] : [];
    });
}

/** The manifest a PolicyFolder keeps; type token `pulumi-nodejs:dynamic/tfe:PolicyFolderManifest`. */
export class PolicyFolderManifest extends ShimResource {
  constructor(name: string, args: pulumi.Input<PolicyFolderManifestInputs>, opts?: pulumi.CustomResourceOptions) {
    super("PolicyFolderManifest", name, args as pulumi.Inputs, opts);
  }
}
