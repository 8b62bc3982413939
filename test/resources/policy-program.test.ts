import * as pulumi from "@pulumi/pulumi";
import { beforeAll, expect, it } from "vitest";
import { Policy } from "../../src/resources/policy";

// The Policy resource as a program declares it, under Pulumi's mocks: what the engine receives as inputs.

const registered = new Map<string, Record<string, unknown>>();

beforeAll(() => {
  pulumi.runtime.setMocks(
    {
      newResource: (args) => {
        registered.set(args.name, args.inputs);
        return { id: args.id || `${args.name}-id`, state: args.inputs };
      },
      call: () => ({}),
    },
    "project",
    "stack",
    false,
  );
});

function inputsOf(policy: Policy, name: string): Promise<Record<string, unknown>> {
  return new Promise((resolve) => policy.id.apply(() => resolve(registered.get(name) ?? {})));
}

/**
 * A FileAsset made by another copy of @pulumi/pulumi: the program's own, when its version differs from the one
 * this library pins. Pulumi tells assets apart by this marker, not by class, and so must the library.
 */
class FileAssetOfAnotherCopy {
  readonly __pulumiAsset = true;
  readonly path: Promise<string>;
  constructor(path: string) {
    this.path = Promise.resolve(path);
  }
}

it("sends a FileAsset's path as codeFile", async () => {
  const policy = new Policy("own", {
    organization: "acme",
    codeFile: new pulumi.asset.FileAsset("policies/own.sentinel"),
  });
  expect((await inputsOf(policy, "own")).codeFile).toBe("policies/own.sentinel");
});

it("sends the path of a FileAsset from another copy of @pulumi/pulumi as codeFile too", async () => {
  const policy = new Policy("other", {
    organization: "acme",
    codeFile: new FileAssetOfAnotherCopy("policies/other.sentinel") as unknown as pulumi.asset.FileAsset,
  });
  expect((await inputsOf(policy, "other")).codeFile).toBe("policies/other.sentinel");
});

it("has every declared output, for inputs left out and for Policy.get too", async () => {
  const outputs = [
    "organization",
    "name",
    "description",
    "kind",
    "query",
    "enforcementLevel",
    "policySetIds",
    "codeFile",
    "codeHash",
    "codeSize",
    "policyId",
    "policySetCount",
    "updatedAt",
  ] as const;
  const minimal = new Policy("minimal", { organization: "acme", code: "main = rule { true }" });
  const read = Policy.get("read", "pol-read");
  for (const policy of [minimal, read]) {
    const missing = outputs.filter((output) => !pulumi.Output.isInstance(policy[output]));
    expect(missing).toEqual([]);
  }
});
