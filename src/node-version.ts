// undici 8, the client's HTTP stack, declares Node.js >= 22.19.0, the highest floor of all dependencies; on an older
// Node it dies at load with an unrelated TypeError. Imported before undici, so that the user reads this instead.
const minimum = "22.19.0";
const [major = 0, minor = 0] = process.versions.node.split(".").map(Number);
if (major < 22 || (major === 22 && minor < 19)) {
  throw new Error(`pulumi-tfe-governance needs Node.js ${minimum} or newer; this is Node.js ${process.version}.`);
}
