import { readFileSync } from "node:fs";
import { z } from "zod";
import { invalidDocument, issueMessages } from "./errors";

/** The pseudo-route of reading an uploaded policy set version. */
export const ingressRoute = "INGRESS /policy-set-versions";

const faultRule = z
  .strictObject({
    /** `"<METHOD> <route pattern>"` as registered, e.g. `"POST /api/v2/organizations/:organization/policies"`, or `"*"`. */
    route: z.string().regex(/^(\*|[A-Z]+ \/\S*)$/, 'must be "*" or "<METHOD> <route pattern>"'),
    status: z.union([z.literal(500), z.literal(502), z.literal(503), z.literal(504)]).optional(),
    reset: z.boolean().optional(),
    latencyMs: z.number().int().min(0).max(60_000).optional(),
    /** Share of matching requests hit, 0 to 1. */
    share: z.number().min(0).max(1).default(1),
    /** Hit at most this many requests, then stop. */
    times: z.number().int().min(1).optional(),
    /** Let the handler run (and change data) first, then fail the response: a lost answer, not a lost request. */
    afterHandler: z.boolean().default(false),
    /**
     * With route `"INGRESS /policy-set-versions"`: the next uploaded versions are errored with this message, as the
     * service errors on a folder for reasons a client cannot check (its runtime, its own limits).
     */
    versionError: z.string().min(1).optional(),
  })
  .refine(
    (rule) =>
      rule.status !== undefined || rule.reset || rule.latencyMs !== undefined || rule.versionError !== undefined,
    { message: "needs status, reset, latencyMs or versionError" },
  )
  .refine((rule) => (rule.versionError !== undefined) === (rule.route === ingressRoute), {
    message: `versionError goes with route "INGRESS /policy-set-versions", and only there`,
  })
  .refine((rule) => !(rule.status !== undefined && rule.reset), { message: "takes status or reset, not both" });

export const faultPlanSchema = z.union([
  z.array(faultRule),
  z.strictObject({ seed: z.number().int().default(1), rules: z.array(faultRule) }),
]);
export type FaultRule = z.input<typeof faultRule>;
export type FaultPlan = z.input<typeof faultPlanSchema>;

export interface Fault {
  status: number | undefined;
  reset: boolean;
  latencyMs: number;
  versionError?: string | undefined;
}

/** Reads a fault plan given inline (JSON text starting with `[` or `{`) or as the path of a JSON file. */
export function readFaultPlan(text: string): FaultPlan {
  const json = /^\s*[[{]/.test(text) ? text : readFileSync(text, "utf8");
  return JSON.parse(json) as FaultPlan;
}

// mulberry32: tiny, seedable and good enough to pick which requests fail, the same ones on every run.
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = state;
    mixed = Math.imul(mixed ^ (mixed >>> 15), mixed | 1);
    mixed ^= mixed + Math.imul(mixed ^ (mixed >>> 7), mixed | 61);
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Decides which requests fail. Requests draw from one seeded sequence in arrival order, so the same plan and
 * seed fail the same requests of the same request sequence.
 */
export class FaultInjector {
  private rules: (z.output<typeof faultRule> & { hits: number })[] = [];
  private random = seededRandom(1);

  constructor(plan: FaultPlan = []) {
    this.replace(plan);
  }

  replace(plan: FaultPlan): void {
    const result = faultPlanSchema.safeParse(plan, { error: issueMessages });
    if (!result.success) throw invalidDocument("faults", result.error);
    const { seed, rules } = Array.isArray(result.data) ? { seed: 1, rules: result.data } : result.data;
    this.rules = rules.map((rule) => ({ ...rule, hits: 0 }));
    this.random = seededRandom(seed);
  }

  /** The fault for this request at this point (before or after the handler), if any. */
  pick(method: string, routePattern: string | undefined, afterHandler: boolean): Fault | undefined {
    const route = `${method} ${routePattern ?? ""}`;
    for (const rule of this.rules) {
      if (rule.afterHandler !== afterHandler) continue;
      if (rule.route !== "*" && rule.route !== route) continue;
      if (rule.route === "*" && route === ingressRoute) continue;
      if (rule.times !== undefined && rule.hits >= rule.times) continue;
      if (this.random() >= rule.share) continue;
      rule.hits++;
      return {
        status: rule.status,
        reset: rule.reset ?? false,
        latencyMs: rule.latencyMs ?? 0,
        versionError: rule.versionError,
      };
    }
    return undefined;
  }
}
