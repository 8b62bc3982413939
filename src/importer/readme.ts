import { libraryVersion } from "../process/package-version";
import {
  type ImportReport,
  type ImportSource,
  importedCounts,
  type Language,
  type LibraryDependency,
  programFileOf,
  settingsNamespaceOf,
} from "./model";

/** How a program of each language protects a resource, as the README names it. */
const protectOption: Record<Language, string> = {
  typescript: "{ protect: true }",
  yaml: "protect: true",
  python: "protect=True",
};

/** A Markdown table cell: pipes and line breaks would end the cell or the row. */
function cell(text: string): string {
  return text.replace(/\|/g, "\\|").replace(/\r?\n/g, " ");
}

function table(header: string[], rows: string[][]): string[] {
  return [
    `| ${header.join(" | ")} |`,
    `| ${header.map(() => "---").join(" | ")} |`,
    ...rows.map((row) => `| ${row.map(cell).join(" | ")} |`),
  ];
}

function credentialSteps(source: ImportSource, language: Language): string[] {
  const host = new URL(source.address).host;
  const namespace = settingsNamespaceOf(language);
  return [
    "Give the program a token that may manage policies (and modules, for deprecations), in one of these ways:",
    "",
    "   ```sh",
    `   pulumi config set --secret ${`${namespace}:token`.padEnd(10)} <API token>   # encrypted in the stack's config`,
    "   export TFE_TOKEN=<API token>                       # or in the environment",
    `   terraform login ${host.padEnd(34)} # or in Terraform's credentials file`,
    "   ```",
    "",
    source.isDefaultAddress
      ? `   The program talks to ${source.address}; for another host set \`pulumi config set ${namespace}:hostname <host>\`.`
      : `   Pulumi.yaml already points the program at ${source.address} (\`${namespace}:address\`).`,
  ];
}

function adjustments(report: ImportReport): string[] {
  const lines: string[] = [];
  if (report.skipped.length > 0) {
    lines.push(
      "",
      "## Left out",
      "",
      ...table(
        ["object", "why, and what to do"],
        report.skipped.map((s) => [s.name, s.reason]),
      ),
    );
  }
  if (report.notes.length > 0) {
    lines.push(
      "",
      "## Adjusted",
      "",
      ...table(
        ["policy", "note"],
        report.notes.map((n) => [n.name, n.note]),
      ),
    );
  }
  return lines;
}

/** The config a sensitive parameter needs before the first up: the service never sends its value back. */
function secretSteps(report: ImportReport): string[] {
  const secrets = report.policySets.flatMap((policySet) =>
    policySet.secretConfig.map((entry) => ({ ...entry, set: policySet.name })),
  );
  if (secrets.length === 0) return [];
  const plain = secrets.filter((secret) => secret.plainOnService);
  return [
    "   Give each sensitive parameter of a policy set its value: the service never shows one, so the import could",
    "   not read it, and the first `pulumi up` sends each once.",
    ...(plain.length > 0
      ? [
          "   A parameter whose name says it holds a credential, which the service holds in plain text, is given the same",
          "   way (its value is never written into this project): copy it from the set's parameters, and the first `pulumi",
          "   up` makes it sensitive.",
        ]
      : []),
    "",
    "   ```sh",
    ...secrets.map(
      ({ key, parameter, set, plainOnService }) =>
        `   pulumi config set --secret ${key} <value>   # ${set}: ${parameter}${plainOnService ? " (plain on the service now)" : ""}`,
    ),
    "   ```",
  ];
}

/** What destroy does to what this project adopted, and how to let one go. */
function destroySection(source: ImportSource, language: Language): string[] {
  const protect = protectOption[language];
  return [
    "",
    "## What `pulumi destroy` does here",
    "",
    "Every object this project adopted existed before it, and may be relied on by others (another stack, another",
    `team's workspaces), so each resource is protected (\`${protect}\`, as \`pulumi import\` protects what it`,
    "adopts): `pulumi destroy` fails on it and deletes nothing of it. To stop managing the organization without",
    "changing the service, remove the stack's state: `pulumi stack rm --force`. To let Pulumi delete one object on",
    `purpose, in a reviewed change: take \`${protect}\` off its resource and run \`pulumi up\` (or`,
    "`pulumi state unprotect '<urn>'`), then remove the resource from the program and run `pulumi up`.",
    "",
    `The project is named \`${source.projectName}\` (Pulumi.yaml): one name per organization and layout, so that`,
    "another import on the same backend makes stacks of its own; `tfe-governance import --project NAME` chooses another.",
  ];
}

function policySetSection(report: ImportReport): string[] {
  if (report.policySets.length === 0) return [];
  const folders = report.policySets.filter((policySet) => policySet.directory !== undefined);
  const fromVersionControl = report.policySets.filter((policySet) => policySet.holds === "version control");
  return [
    "",
    "## Policy sets",
    "",
    ...table(
      ["policy set", "id", "kind", "holds"],
      report.policySets.map((policySet) => [
        policySet.name,
        policySet.id,
        policySet.kind,
        policySet.directory !== undefined ? `folder ${policySet.directory}` : policySet.holds,
      ]),
    ),
    ...(folders.length > 0
      ? [
          "",
          "A set of uploaded versions evaluates its folder, and the service offers no download of a version's files:",
          "put each set's folder (as version control holds it) at its path above before the first `pulumi up`,",
          "which uploads it once, as a new version; preview refuses a missing folder. What that upload replaces",
          "cannot be read, so it cannot be compared with the folder: preview refuses it as a weakening it cannot rule",
          "out. Once the folder is the set's, approve that one run: `TFE_ALLOW_WEAKENING=true pulumi up` (its",
          "preview lists what it lets through as warnings). Later changes of the folder are compared as usual.",
        ]
      : []),
    ...(fromVersionControl.length > 0
      ? [
          "",
          "A set read from version control evaluates its repository, which this project cannot read without a local",
          "clone: give each such set `vcsCheckout` (the path of a clone at the set's branch, at the commit the set",
          "evaluates) and adoption compares the program with what it enforces. Without one, preview refuses the",
          "adoption as a weakening it cannot rule out, and the first run needs the same approval:",
          "`TFE_ALLOW_WEAKENING=true pulumi up`.",
        ]
      : []),
  ];
}

/** Step 1 of the next steps: what the program needs installed. */
function installSteps(language: Language, library: LibraryDependency): string[] {
  if (language === "typescript") {
    return [
      "1. Install the dependencies: `npm install`. pulumi-tfe-governance is on no public registry yet: `package.json`",
      ...(library.spec.startsWith("file:vendor/")
        ? [
            `   installs it from \`${library.spec}\`, a copy of the tarball this import's copy came from: commit`,
            "   `vendor/` with `package.json` and `package-lock.json`, so that `npm ci` on a fresh CI runner finds it.",
          ]
        : [
            `   installs it from \`${library.spec}\`, where this import's copy came from. If that moves, point it at a`,
            "   tarball committed in this project (`vendor/`), a git URL or your private registry: not at a path",
            "   outside the project, which a fresh CI runner does not have.",
          ]),
    ];
  }
  const plugin = [
    `1. Install the provider plugin, \`pulumi-resource-tfegov\`: \`npm run package\` in a clone of pulumi-tfe-governance`,
    "   makes it (and the Python SDK) in `artifacts/`; Node.js 22.19 or newer on PATH runs it. Keep the files where a",
    "   fresh CI runner finds them (in this repository, or your artifact store).",
    "",
    "   ```sh",
    `   pulumi plugin install resource tfegov ${libraryVersion} -f pulumi-resource-tfegov-v${libraryVersion}.tar.gz`,
  ];
  if (language === "yaml") return [...plugin, "   ```"];
  return [
    ...plugin,
    "   python3 -m venv venv && . venv/bin/activate",
    `   pip install pulumi_tfegov-${libraryVersion}-py3-none-any.whl   # the SDK: on no package index yet`,
    "   pip install -r requirements.txt",
    "   ```",
    "",
    "   Pulumi runs the `python` it finds first on PATH: run `pulumi` with the virtualenv active.",
  ];
}

function projectReadme(source: ImportSource, report: ImportReport, library: LibraryDependency): string[] {
  const programFile = programFileOf(report.language);
  const where =
    report.layout === "program"
      ? `declared in \`${programFile}\` one \`Policy\` each, with the code of each policy in \`policies/\``
      : "in the service's own policy-set folder format under `policy-sets/` (one folder per combination of policy " +
        "sets, named after them: a `sentinel.hcl` beside the `.sentinel` files, or a `policies.hcl` beside the " +
        "`.rego` files), " +
        `declared in \`${programFile}\` one \`PolicyFolder\` each`;
  return [
    `# Policies of organization ${source.organization}`,
    "",
    `Written by \`tfe-governance import\` from ${source.address}: ${importedCounts(report).join(", ")}; the policies ${where}.`,
    "",
    "## Next steps",
    "",
    ...installSteps(report.language, library),
    "2. Choose where Pulumi keeps the state and make a stack: `pulumi login` (or `pulumi login --local`), then",
    "   `pulumi stack init <name>`.",
    `3. ${credentialSteps(source, report.language).join("\n")}`,
    ...secretSteps(report),
    "4. `pulumi up`. Every resource shows as a create: each declares `adoptExisting: true`, so a policy or a set is",
    "   looked up by name and taken over as it is, and a deprecation that already holds its reason and link is taken",
    "   over too. Where the program and the service agree, nothing is sent to the service but reads; the exceptions",
    "   are listed under Policy sets below (a folder uploaded once, and a set read from version control with no",
    "   `vcsCheckout`, which need `TFE_ALLOW_WEAKENING=true` for that first run; sensitive parameters sent once).",
    "5. `pulumi preview --expect-no-changes` passes right after. From now on edit the policy files (and, in folders,",
    `   their \`.hcl\` files) and \`${programFile}\`, review with \`pulumi preview\`, apply with \`pulumi up\`, and catch changes made outside`,
    "   Pulumi with `pulumi preview --refresh --expect-no-changes` (in CI, on a schedule).",
    "",
    ...destroySection(source, report.language),
    "",
    "If Terraform's `tfe` provider managed these policies, remove them from its state before its next apply",
    "(`terraform state rm tfe_policy.<name>`), and put the ids below where its configuration referenced them:",
    "the pulumi-tfe-governance README has the whole migration path.",
    ...adjustments(report),
    ...(report.layout === "folder"
      ? [
          "",
          "## Folders",
          "",
          ...table(
            ["folder", "kind", "policy sets", "policies"],
            report.folders.map((folder) => [
              folder.path,
              folder.kind,
              folder.policySetIds.join(", ") || "(none)",
              String(folder.policyCount),
            ]),
          ),
        ]
      : []),
    ...policySetSection(report),
    "",
    "## Policies",
    "",
    ...table(
      ["policy", "id", "kind", "code"],
      report.policies.map((policy) => [policy.name, policy.id, policy.kind, policy.file]),
    ),
    ...(report.deprecations.length > 0
      ? [
          "",
          "## Module version deprecations",
          "",
          ...table(
            ["resource", "module version"],
            report.deprecations.map((d) => [d.resourceName, d.moduleVersion]),
          ),
        ]
      : []),
  ];
}

export function renderReadme(source: ImportSource, report: ImportReport, library: LibraryDependency): string {
  return `${projectReadme(source, report, library).join("\n")}\n`;
}
