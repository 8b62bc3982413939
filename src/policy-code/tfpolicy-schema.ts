import { closestName } from "../contract/names";
import { blockAddress, type HclBlock, isObject, lineOf } from "./hcl";

// HashiCorp's schema for Terraform policy files (`github.com/hashicorp/terraform-schema`, `schema/policy` and
// `schema/policytest`, 1.16), and the check of a file's blocks against it: structure only, nothing evaluated.

/** Nested blocks come from hcl2json as arrays of objects; anything else is an attribute. */
export function isBlockList(value: unknown): value is Record<string, unknown>[] {
  return Array.isArray(value) && value.length > 0 && value.every(isObject);
}

/** What a body may hold: attributes (required or not), nested blocks with their label count and bounds. */
export interface BodySchema {
  attributes?: Record<string, { required?: true }>;
  /** Any attribute name (the entries of `locals`, `inputs`, `required_providers`, `plugins`). */
  anyAttribute?: true;
  blocks?: Record<string, BlockSchema>;
}

interface BlockSchema {
  labels: number;
  /** What the labels are, for messages: `"<resource type>" "<name>"`. */
  labelNames?: string;
  max?: number;
  min?: number;
  body: BodySchema;
}

const anyAttributes: BodySchema = { anyAttribute: true };
const terraformConfig: BlockSchema = { labels: 0, max: 1, body: { attributes: { required_version: {} } } };
const plugins: BlockSchema = { labels: 0, max: 1, body: anyAttributes };

function policyBlockBody(withOperations: boolean): BodySchema {
  return {
    attributes: {
      filter: {},
      enforcement_level: {},
      ...(withOperations ? { operations: {} } : {}),
    },
    blocks: {
      enforce: {
        labels: 0,
        min: 1,
        body: { attributes: { condition: { required: true }, error_message: {}, info_message: {} } },
      },
      locals: { labels: 0, max: 1, body: anyAttributes },
    },
  };
}

/** `*.policy.hcl` (schema/policy, 1.16). */
export const policyFileSchema: BodySchema = {
  blocks: {
    policy: {
      labels: 0,
      max: 1,
      body: {
        blocks: {
          terraform_config: terraformConfig,
          plugins,
          required_providers: { labels: 0, max: 1, body: anyAttributes },
        },
      },
    },
    input: {
      labels: 1,
      labelNames: '"<name>"',
      body: { attributes: { type: { required: true }, default: {}, description: {}, nullable: {}, sensitive: {} } },
    },
    locals: { labels: 0, body: anyAttributes },
    resource_policy: { labels: 2, labelNames: '"<resource type>" "<name>"', body: policyBlockBody(true) },
    provider_policy: { labels: 2, labelNames: '"<provider>" "<name>"', body: policyBlockBody(false) },
    module_policy: { labels: 2, labelNames: '"<module source>" "<name>"', body: policyBlockBody(false) },
  },
};

const mockInputs: BlockSchema = { labels: 0, max: 1, body: anyAttributes };
function mockBlock(labelNames: string, attributes: string[]): BlockSchema {
  return {
    labels: 2,
    labelNames,
    body: {
      attributes: Object.fromEntries(["expect_failure", "skip", ...attributes].map((name) => [name, {}])),
      blocks: { inputs: mockInputs },
    },
  };
}

/** `*.policytest.hcl` (schema/policytest, 1.16). */
export const policyTestFileSchema: BodySchema = {
  blocks: {
    policytest: {
      labels: 0,
      max: 1,
      body: { attributes: { targets: {} }, blocks: { terraform_config: terraformConfig, plugins } },
    },
    inputs: { labels: 0, max: 1, body: anyAttributes },
    locals: { labels: 0, body: anyAttributes },
    resource: mockBlock('"<resource type>" "<test case>"', ["attrs", "prior_attrs", "meta"]),
    provider: mockBlock('"<provider>" "<test case>"', ["attrs", "meta"]),
    module: mockBlock('"<module source>" "<test case>"', ["attrs", "meta"]),
    data: {
      labels: 2,
      labelNames: '"<data source type>" "<name>"',
      body: { attributes: { attrs: { required: true } } },
    },
  },
};

export function labelCounts(schema: BodySchema): Record<string, number> {
  return Object.fromEntries(Object.entries(schema.blocks ?? {}).map(([type, block]) => [type, block.labels]));
}

/** Every block and attribute against the schema: names, label counts, bounds, required attributes. */
export function checkBlocks(
  path: string,
  text: string,
  blocks: HclBlock[],
  schema: BodySchema,
  what: string,
): string[] {
  const problems: string[] = [];
  const known = Object.keys(schema.blocks ?? {});
  const counts = new Map<string, number>();
  for (const block of blocks) {
    const line = lineOf(text, block);
    const spec = schema.blocks?.[block.type];
    if (!spec) {
      const near = closestName(block.type, known);
      const asAttribute = Object.keys(block.body).length === 1 && Object.hasOwn(block.body, "value");
      problems.push(
        `${path}:${line ?? "?"}: ${block.type} is not ${asAttribute ? "an attribute" : "a block"} of ${what}` +
          `${near ? `: did you mean ${near}?` : `: it holds ${known.join(", ")} blocks`}`,
      );
      continue;
    }
    counts.set(block.type, (counts.get(block.type) ?? 0) + 1);
    const at = `${path}:${line ?? "?"}: ${blockAddress(block)}`;
    if (
      block.labels.length !== spec.labels ||
      (Object.keys(block.body).length === 1 && Object.hasOwn(block.body, "value") && spec.labels === 0)
    ) {
      problems.push(
        `${at}: takes ${spec.labels === 0 ? "no label" : `${spec.labels} label${spec.labels === 1 ? "" : "s"}`}: write ${block.type}${spec.labelNames ? ` ${spec.labelNames}` : ""} { ... }`,
      );
      continue;
    }
    problems.push(...checkBody(at, block.body, spec.body));
  }
  for (const [type, count] of counts) {
    const max = schema.blocks?.[type]?.max;
    if (max !== undefined && count > max)
      problems.push(`${path}: ${count} ${type} blocks: ${what} holds at most ${max}`);
  }
  return problems;
}

function checkBody(at: string, body: Record<string, unknown>, schema: BodySchema): string[] {
  const problems: string[] = [];
  const names = [...Object.keys(schema.attributes ?? {}), ...Object.keys(schema.blocks ?? {})];
  for (const [name, value] of Object.entries(body)) {
    const nested = schema.blocks?.[name];
    if (nested) {
      if (!isBlockList(value)) {
        problems.push(`${at}: ${name} is a block: write ${name} { ... }`);
        continue;
      }
      if (nested.max !== undefined && value.length > nested.max) {
        problems.push(`${at}: ${value.length} ${name} blocks: at most ${nested.max}`);
      }
      value.forEach((inner, index) => {
        const where = value.length > 1 ? `${at}: ${name} #${index + 1}` : `${at}: ${name}`;
        problems.push(...checkBody(where, inner, nested.body));
      });
      continue;
    }
    if (schema.anyAttribute || Object.hasOwn(schema.attributes ?? {}, name)) {
      if (isBlockList(value) && !schema.anyAttribute)
        problems.push(`${at}: ${name} is an attribute: write ${name} = ...`);
      continue;
    }
    const near = closestName(name, names);
    problems.push(
      `${at}: ${name} is not an argument here${near ? `: did you mean ${near}?` : names.length > 0 ? `: it takes ${names.join(", ")}` : ""}`,
    );
  }
  for (const [name, attribute] of Object.entries(schema.attributes ?? {})) {
    if (attribute.required && !Object.hasOwn(body, name)) problems.push(`${at}: ${name} is required`);
  }
  for (const [name, nested] of Object.entries(schema.blocks ?? {})) {
    const count = isBlockList(body[name]) ? (body[name] as unknown[]).length : 0;
    if (nested.min !== undefined && count < nested.min) {
      problems.push(`${at}: needs at least ${nested.min} ${name} block${nested.min === 1 ? "" : "s"}`);
    }
  }
  return problems;
}
