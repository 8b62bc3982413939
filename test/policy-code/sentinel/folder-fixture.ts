import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

/** Writes `files` (path relative to `root` → text) under `root`. */
export function writeFiles(root: string, files: Record<string, string>): void {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
}

/** A case of restrict-instance-type: the module it imports, a tfplan/v2 mock (`mock` is the block's body). */
function instanceTypeCase(mock: string, main: boolean, extra = ""): string {
  return `module "plan-functions" {
  source = "../../modules/plan-functions.sentinel"
}

mock "tfplan/v2" {
  ${mock}
}

${extra}test {
  rules = {
    main = ${main}
  }
}
`;
}

/**
 * A small Sentinel library laid out as `sentinel test` reads it: a policy using a module, a mocked tfplan/v2 and a
 * parameter; a passing and a failing case of each verdict; a policy importing http (not run).
 */
export const sentinelLibrary: Record<string, string> = {
  "sentinel.hcl": `module "plan-functions" {
  source = "./modules/plan-functions.sentinel"
}

policy "restrict-instance-type" {
  source            = "./restrict-instance-type.sentinel"
  enforcement_level = "hard-mandatory"
}

policy "check-api" {
  source            = "./check-api.sentinel"
  enforcement_level = "advisory"
}
`,
  "modules/plan-functions.sentinel": `import "tfplan/v2" as tfplan

find_resources = func(type) {
  return filter tfplan.resource_changes as _, rc {
    rc.type is type and rc.change.actions is not ["delete"]
  }
}
`,
  "restrict-instance-type.sentinel": `import "plan-functions" as plan
import "strings"

param allowed_types default ["t3.micro", "t3.small"]

violations = filter plan.find_resources("aws_instance") as address, rc {
  rc.change.after.instance_type not in allowed_types
}

for violations as address, _ {
  print(address, "has a type that is not allowed")
}

main = rule {
  length(violations) is 0
}
`,
  "check-api.sentinel": `import "http"

main = rule { http.get("https://example.com").status_code is 200 }
`,
  "test/restrict-instance-type/mock-small.sentinel": `resource_changes = {
  "aws_instance.web": {
    "type": "aws_instance",
    "change": { "actions": ["create"], "after": { "instance_type": "t3.small" } },
  },
}
`,
  "test/restrict-instance-type/mock-large.sentinel": `resource_changes = {
  "aws_instance.web": {
    "type": "aws_instance",
    "change": { "actions": ["create"], "after": { "instance_type": "m5.24xlarge" } },
  },
}
`,
  "test/restrict-instance-type/pass.hcl": instanceTypeCase('module {\n    source = "mock-small.sentinel"\n  }', true),
  "test/restrict-instance-type/fail.hcl": instanceTypeCase('module {\n    source = "mock-large.sentinel"\n  }', false),
  "test/restrict-instance-type/param-allows-large.hcl": instanceTypeCase(
    `data = {
    resource_changes = {
      "aws_instance.big" = {
        type   = "aws_instance"
        change = { actions = ["update"], after = { instance_type = "m5.24xlarge" } }
      }
    }
  }`,
    true,
    'param "allowed_types" {\n  value = ["m5.24xlarge"]\n}\n',
  ),
  "test/restrict-instance-type/wrong-expectation.hcl": instanceTypeCase(
    'module {\n    source = "mock-large.sentinel"\n  }',
    true,
  ),
  "test/check-api/pass.hcl": `test {
  rules = {
    main = true
  }
}
`,
};
