import * as pulumi from "@pulumi/pulumi";
import { TfeClient } from "../client/client";
import { segmentProblem } from "../contract/paths";

/** The value Pulumi puts in inputs that are not known yet (outputs of other resources during preview). */
export const unknownValue = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

export function isUnknown(value: unknown): boolean {
  return value === unknownValue;
}

export type CheckFailure = pulumi.dynamic.CheckFailure;

/**
 * What every provider of this library shares: the client, built from the provider's stack config (`tfe:token`,
 * `tfe:address`, `tfe:hostname`) when the engine configures it, else from the environment and the Terraform
 * credentials file. The token stays inside the client; nothing here returns or logs it.
 */
export class ProviderContext {
  private stackConfig: { get(key: string): string | undefined } | undefined;
  private cachedClient: TfeClient | undefined;

  configure(request: pulumi.dynamic.ConfigureRequest): void {
    const config = request.config;
    this.stackConfig = {
      get: (key) => {
        const value: unknown = config.get(`tfe:${key}`);
        return typeof value === "string" ? value : undefined;
      },
    };
    this.cachedClient = undefined;
  }

  get client(): TfeClient {
    if (!this.cachedClient) {
      this.cachedClient = TfeClient.fromConfig({ stackConfig: this.stackConfig });
    }
    return this.cachedClient;
  }

  /** Lets tests and scripts use an explicit client. */
  useClient(client: TfeClient): void {
    this.cachedClient = client;
  }
}

/** What every provider of this library starts from: its context, configured by the engine. */
export abstract class ContextProvider {
  readonly context = new ProviderContext();

  async configure(request: pulumi.dynamic.ConfigureRequest): Promise<void> {
    this.context.configure(request);
  }
}

/** In a Pulumi program: the organization a resource uses when none is given (`tfe:organization`, then the env). */
export function defaultOrganization(): string | undefined {
  return new pulumi.Config("tfe").get("organization") ?? process.env.TFE_ORGANIZATION;
}

/** Validates a value that goes into a request path; the failure names the property. */
export function checkPathValue(failures: CheckFailure[], property: string, value: unknown, fix: string): void {
  if (isUnknown(value)) return;
  const problem = segmentProblem(value);
  if (problem) failures.push({ property, reason: `${property} ${problem}: ${fix}` });
}

/** The organization rule every resource shares. */
export function checkOrganization(failures: CheckFailure[], value: unknown): void {
  checkPathValue(failures, "organization", value, 'set it, or set "pulumi config set tfe:organization <name>"');
}

/** The `keys` whose new value is not known yet or differs from the old one. */
export function changedProperties<K extends string>(
  olds: { [P in K]?: unknown },
  news: { [P in K]?: unknown },
  keys: readonly K[],
): K[] {
  return keys.filter((key) => isUnknown(news[key]) || !sameValue(olds[key], news[key]));
}

/** `a` and `b` hold the same value, treating `undefined` and `null` alike. */
export function sameValue(a: unknown, b: unknown): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}
