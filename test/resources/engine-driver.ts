import { createRequire } from "node:module";
import type * as pulumi from "@pulumi/pulumi";
import type { TfeClient } from "../../src/client";
import { isSecretEnvelope } from "../../src/resources/derived-secrets";
import { clearMembershipDeclarations } from "../../src/resources/memberships";
import { PolicyProvider } from "../../src/resources/policy";
import { PolicySetProvider } from "../../src/resources/policy-set";
import { policySetProperties } from "../../src/resources/policy-set/properties";
import { keyedProperties } from "../../src/resources/property-table";
import type { ContextProvider } from "../../src/resources/provider-context";
import { startOperationReads } from "../../src/resources/stricter-changes";
import { unknownValue } from "../../src/resources/unknown";
import { withWireKeys } from "../../src/resources/wire-keys";

/** Protobuf's Struct, through which the engine passes every value between a provider and the state. */
const { Struct } = createRequire(require.resolve("@pulumi/pulumi"))("google-protobuf/google/protobuf/struct_pb") as {
  Struct: { fromJavaScript(value: object): { toJavaScript(): Record<string, unknown> } };
};

/**
 * A value as it comes back from the engine: the SDK leaves out what is undefined, protobuf's Struct assigns each key
 * (`__proto__` sets the prototype instead of a property, and vanishes), and a secret reaches a provider that takes
 * none (the dynamic provider) as its plain value.
 */
function overTheWire(value: unknown): Record<string, unknown> {
  const defined = JSON.parse(
    JSON.stringify(value ?? {}, (_key, entry) => (isSecretEnvelope(entry) ? entry.value : entry)),
  );
  return Struct.fromJavaScript(defined).toJavaScript();
}

// The Pulumi engine's calls to a provider, as the oracle test needs them many times a second: a `pulumi up` (a
// preview of every resource, then the same again with each change applied), a `pulumi refresh`. What it does is
// what the real engine does with a dynamic provider, step for step (test/e2e/engine-driver.test.ts runs the same
// sequence through both and compares): check with the state's inputs, diff with the state's outputs, a replacement
// as create and delete in the order diff asks, refresh replacing the state's outputs and inputs with read's. One
// provider per operation, as the engine starts one process per command.

export type ResourceType = "Policy" | "PolicySet";

/** A resource as the program declares it: its arguments, which may name other resources' ids. */
export interface Declared {
  name: string;
  type: ResourceType;
  args: (idOf: (name: string) => unknown) => Record<string, unknown>;
}

export interface Recorded {
  type: ResourceType;
  id: string;
  inputs: Record<string, unknown>;
  outputs: Record<string, unknown>;
}

export type Outcome = { applied: true } | { applied: false; refusal: string };

type Provider = ContextProvider & pulumi.dynamic.ResourceProvider;

export class EngineDriver {
  /** The stack's state, by resource name. */
  readonly state = new Map<string, Recorded>();

  constructor(
    private readonly client: TfeClient,
    private readonly stackConfig: Record<string, string> = {},
    /** When each operation starts, as its reads of recent runs count their window; by default, the clock's now. */
    private readonly now: () => Date = () => new Date(),
  ) {}

  private providers(env: Record<string, string>): Record<ResourceType, Provider> {
    // Each command is a process of its own to the engine: what one remembers, the next starts without.
    clearMembershipDeclarations();
    startOperationReads(this.now());
    // Wrapped as the library's providers module wraps them (providers.ts), so keys survive the wire the same way.
    const providers = {
      Policy: new PolicyProvider(),
      PolicySet: withWireKeys(new PolicySetProvider(), keyedProperties(policySetProperties)),
    };
    for (const provider of Object.values(providers)) {
      const config = { ...this.stackConfig };
      if (env.TFE_ALLOW_WEAKENING === "true") config.allowWeakening = "true";
      void provider.configure({ config: { get: (key: string) => config[key.replace(/^tfe:/, "")] } } as never);
      provider.context.useClient(this.client);
    }
    return providers;
  }

  /** `pulumi preview`: every resource checked and diffed as the engine does, nothing applied. */
  preview(program: readonly Declared[], env: Record<string, string> = {}): Promise<Outcome> {
    return this.pass(program, env, false);
  }

  /** `pulumi up`: the preview first (nothing applied when it fails), then each change, in the program's order. */
  async up(program: readonly Declared[], env: Record<string, string> = {}): Promise<Outcome> {
    const preview = await this.pass(program, env, false);
    if (!preview.applied) return preview;
    try {
      return await this.pass(program, env, true);
    } catch (error) {
      return { applied: false, refusal: `failed: ${(error as Error).message}` };
    }
  }

  /** `pulumi refresh`: each resource read; the state takes what read answers, and drops what is gone. */
  async refresh(): Promise<void> {
    const providers = this.providers({});
    for (const [name, recorded] of [...this.state]) {
      const result = await (providers[recorded.type].read as NonNullable<Provider["read"]>)(
        recorded.id,
        recorded.outputs,
      );
      if (!result.props) {
        this.state.delete(name);
        continue;
      }
      this.state.set(name, {
        ...recorded,
        id: result.id ?? recorded.id,
        outputs: overTheWire(result.props),
        inputs: result.inputs ? overTheWire(result.inputs) : recorded.inputs,
      });
    }
  }

  /**
   * `pulumi import` of a resource the state holds: the engine reads it by id with no state at all, and records what
   * read answers as its inputs and outputs (what its versions enforce is then not known).
   */
  async reimport(name: string): Promise<void> {
    const recorded = this.state.get(name);
    if (!recorded) return;
    const providers = this.providers({});
    const result = await (providers[recorded.type].read as NonNullable<Provider["read"]>)(recorded.id, {});
    if (!result.props) {
      this.state.delete(name);
      return;
    }
    this.state.set(name, {
      ...recorded,
      outputs: overTheWire(result.props),
      inputs: overTheWire(result.inputs ?? {}),
    });
  }

  private async pass(program: readonly Declared[], env: Record<string, string>, apply: boolean): Promise<Outcome> {
    const providers = this.providers(env);
    const idOf = (name: string) => this.state.get(name)?.id ?? unknownValue;
    for (const declared of program) {
      const provider = providers[declared.type];
      const recorded = this.state.get(declared.name);
      const news = overTheWire({
        ...declared.args(idOf),
        __urn: `urn:pulumi:driver::oracle::pulumi-nodejs:dynamic/tfe:${declared.type}::${declared.name}`,
      });
      let checked: pulumi.dynamic.CheckResult | undefined;
      try {
        checked = await provider.check?.(recorded?.inputs ?? {}, news);
      } catch (error) {
        // A check that throws (a refusal said at a create's check, which has no diff) fails the preview.
        return { applied: false, refusal: (error as Error).message };
      }
      if (checked?.failures?.length) {
        return { applied: false, refusal: checked.failures.map((failure) => failure.reason).join("\n") };
      }
      const inputs = overTheWire(checked?.inputs ?? news);
      if (!recorded) {
        if (apply) await this.create(provider, declared, inputs);
        continue;
      }
      let diff: pulumi.dynamic.DiffResult;
      try {
        diff = (await provider.diff?.(recorded.id, recorded.outputs, inputs)) ?? { changes: false };
      } catch (error) {
        return { applied: false, refusal: (error as Error).message };
      }
      if (!apply || !diff.changes) continue;
      if ((diff.replaces ?? []).length > 0) {
        // The engine checks the replacement again as a create (no old inputs) before it makes it.
        const recheck = await provider.check?.({}, news);
        if (recheck?.failures?.length) {
          return { applied: false, refusal: recheck.failures.map((failure) => failure.reason).join("\n") };
        }
        const replacement = recheck?.inputs ? overTheWire(recheck.inputs) : inputs;
        if (diff.deleteBeforeReplace) {
          await provider.delete?.(recorded.id, recorded.outputs);
          this.state.delete(declared.name);
          await this.create(provider, declared, replacement);
        } else {
          await this.create(provider, declared, replacement);
          await provider.delete?.(recorded.id, recorded.outputs);
        }
        continue;
      }
      try {
        const updated = await provider.update?.(recorded.id, recorded.outputs, inputs);
        this.state.set(declared.name, {
          ...recorded,
          inputs,
          outputs: overTheWire(updated?.outs ?? {}),
        });
      } catch (error) {
        // A partial failure: the engine records what the provider says the service holds.
        const properties = (error as { properties?: Record<string, unknown> }).properties;
        if (properties) this.state.set(declared.name, { ...recorded, inputs, outputs: overTheWire(properties) });
        throw error;
      }
    }
    return { applied: true };
  }

  private async create(provider: Provider, declared: Declared, inputs: Record<string, unknown>) {
    const created = await provider.create(inputs);
    this.state.set(declared.name, {
      type: declared.type,
      id: created.id,
      inputs,
      outputs: overTheWire(created.outs),
    });
  }
}
