import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { describePluginLoop, loopAccount, type ProgramOptions } from "./plugin-loop";

// A Python program, run by Pulumi's Python language host (v3.68.0, built from the Go module proxy), with `pulumi`
// from PyPI and the generated SDK installed from its wheel into the project's virtualenv, as a user installs them.

const run = promisify(execFile);
const { seededSetId, secretCodeMarker, workspaceId } = loopAccount;
/** The `pulumi` package from PyPI the virtualenv gets: the SDK's wheel asks for >=3.165,<4. */
const pulumiPython = "pulumi==3.272.0";

function program(options: ProgramOptions): string {
  const level = `${options.typo ? "enforcment_level" : "enforcement_level"}="${options.level ?? "hard-mandatory"}"`;
  return `import pulumi
import pulumi_tfegov as tfegov

config = pulumi.Config()

guard = tfegov.Policy(
    "guard",
    code=pulumi.Output.secret("# ${secretCodeMarker}\\n${options.rule ?? "main = rule { true }"}\\n"),
    ${level},
    policy_set_ids=["${seededSetId}"],
    allow_weakening=${options.allowWeakening === true ? "True" : "False"},
)
uploaded = tfegov.PolicySet(
    "uploaded",
    directory="policy-set",
    workspace_ids=["${workspaceId}"],
    parameters={"region": "eu-west-1", "apiKey": config.require_secret("apiKey")},
)
folder = tfegov.PolicyFolder("folder", directory="folder")
deprecation = tfegov.ModuleVersionDeprecation(
    "deprecation",
    module_name="vpc",
    module_provider="aws",
    version="1.0.0",
    reason="Use 1.1.0, which closes the default security group.",
)
seeded = tfegov.get_policy_set(id="${seededSetId}")

pulumi.export("guardId", guard.id)
pulumi.export("folderPolicies", folder.policy_ids)
pulumi.export("seededSetName", seeded.name)
${options.imported ?? ""}`;
}

describePluginLoop({
  title: "a Python",
  projectName: "tfegov-python",
  program: (options) => ({
    "Pulumi.yaml": "name: tfegov-python\nruntime: python\n",
    "__main__.py": program(options),
  }),
  importCode: {
    handWritten: (policy) =>
      `made_outside = tfegov.Policy(${JSON.stringify(policy.name)}, name=${JSON.stringify(policy.name)}, ` +
      `description=${JSON.stringify(policy.description)}, kind="sentinel", ` +
      `enforcement_level=${JSON.stringify(policy.level)}, code=${JSON.stringify(policy.code)})\n`,
  },
  typoMessage: /unexpected keyword argument 'enforcment_level'/,
  argument: (name) => name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`),
  argumentTrue: (name) => `${name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`)}=True`,
  downloaded: true,
  async setUp(project, artifacts, path) {
    // Pulumi's Python host v3.68 runs the python it finds on PATH: the virtualenv's, first.
    const venv = join(project.dir, "venv");
    await run("python3", ["-m", "venv", venv]);
    await run(join(venv, "bin", "pip"), ["install", "--quiet", pulumiPython, artifacts.wheel], {
      maxBuffer: 16 * 1024 * 1024,
    });
    project.setEnv({ VIRTUAL_ENV: venv, PATH: `${join(venv, "bin")}:${path}` });
  },
});
