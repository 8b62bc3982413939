import "../process/node-version";

// `pulumi-resource-tfegov`: started by the engine with its address (`127.0.0.1:<port>`), it serves the provider
// (serve.ts); started by a user with a command (`pending-creates`, `import`, `check-folder`), it runs that command as
// `tfe-governance` does, so that a team of another language, with no Node.js, has the recovery command its messages
// name.
const [first] = process.argv.slice(2);
if (first !== undefined && !first.startsWith("-") && !/^[\w.[\]-]*:\d+$/.test(first)) {
  (require("../cli/tfe-governance-main") as typeof import("../cli/tfe-governance-main")).run(process.argv.slice(2));
} else {
  require("./serve");
}
