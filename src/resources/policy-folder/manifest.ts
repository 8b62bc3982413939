import { createHash } from "node:crypto";
import type * as pulumi from "@pulumi/pulumi";
import type { PolicyKind } from "../../contract/policies";
import { checkedThisOperation, stampChecked } from "../operation";
import { ContextProvider, GovernanceRefusal, sameValue } from "../provider-context";
import { ShimResource } from "../shim";

/**
 * What a PolicyFolder declared at its last `up`: each policy's name and level. A policy block removed from the folder
 * deletes its Policy, and a provider sees no delete at preview; this resource's diff does see the folder's old and
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
  async check(_olds: Record<string, unknown>, news: Record<string, unknown>): Promise<pulumi.dynamic.CheckResult> {
    return { inputs: stampChecked({ ...news, allowWeakening: news.allowWeakening === true }) };
  }

  /**
   * The folder's new manifest against the one its last `up` recorded (the outputs): every removed policy and every
   * lowered level at once, and a kind change, which replaces every policy and cannot be compared.
   */
  async diff(_id: string, olds: PolicyFolderManifestInputs, news: PolicyFolderManifestInputs) {
    const changes = !sameValue(olds.policies, news.policies) || olds.kind !== news.kind;
    // The diff a refresh asks for, to show what changed outside, is no change to guard.
    if (!checkedThisOperation(news)) return { changes };
    const refusal = await this.context.judge({
      subject: "the policy folder's change",
      what: "policy folder",
      before: { kind: olds.kind, policies: olds.policies ?? {} },
      after: { kind: news.kind, policies: news.policies },
      allowedOnResource: news.allowWeakening,
      urn: (news as unknown as Record<string, unknown>).__urn,
    });
    if (refusal) throw new GovernanceRefusal(refusal);
    return { changes };
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

/** The manifest a PolicyFolder keeps; type token `pulumi-nodejs:dynamic/tfe:PolicyFolderManifest`. */
export class PolicyFolderManifest extends ShimResource {
  constructor(name: string, args: pulumi.Input<PolicyFolderManifestInputs>, opts?: pulumi.CustomResourceOptions) {
    super("PolicyFolderManifest", name, args as pulumi.Inputs, opts);
  }
}
