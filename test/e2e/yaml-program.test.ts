import { describePluginLoop, loopAccount, type ProgramOptions } from "./plugin-loop";

// A Pulumi YAML program, run by Pulumi's YAML language host (v1.25.0, from the Go module proxy).

const { seededSetId, secretCodeMarker, workspaceId } = loopAccount;

function program(options: ProgramOptions): string {
  // What `pulumi import` wrote is a YAML document of its own: its resources go under the program's.
  const imported = options.imported ? options.imported.slice(options.imported.indexOf("resources:") + 10) : "";
  return `name: tfegov-yaml
runtime: yaml
config:
  apiKey:
    type: string
    secret: true
resources:
  guard:
    type: tfegov:index:Policy
    properties:
      code:
        fn::secret: |
          # ${secretCodeMarker}
          main = rule { true }
      ${options.typo ? "enforcmentLevel" : "enforcementLevel"}: ${options.level ?? "hard-mandatory"}
      policySetIds:
        - ${seededSetId}
      allowWeakening: ${options.allowWeakening === true}
  uploaded:
    type: tfegov:index:PolicySet
    properties:
      directory: policy-set
      workspaceIds:
        - ${workspaceId}
      parameters:
        region: eu-west-1
        apiKey: \${apiKey}
  folder:
    type: tfegov:index:PolicyFolder
    properties:
      directory: folder
  deprecation:
    type: tfegov:index:ModuleVersionDeprecation
    properties:
      moduleName: vpc
      moduleProvider: aws
      version: 1.0.0
      reason: Use 1.1.0, which closes the default security group.
${imported}variables:
  seeded:
    fn::invoke:
      function: tfegov:index:getPolicySet
      arguments:
        id: ${seededSetId}
outputs:
  guardId: \${guard.id}
  folderPolicies: \${folder.policyIds}
  seededSetName: \${seeded.name}
`;
}

describePluginLoop({
  title: "a YAML",
  projectName: "tfegov-yaml",
  program: (options) => ({ "Pulumi.yaml": program(options) }),
  importCode: { file: "imported.yaml", type: /type: tfegov:(index:)?Policy\n/ },
  typoMessage: /enforcmentLevel/,
});
