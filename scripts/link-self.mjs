// Links node_modules/pulumi-tfe-governance to this checkout, so that programs inside the repository (the
// quickstart, the end-to-end tests) resolve the package by name exactly as a user's program does. The serialized
// provider shim loads "pulumi-tfe-governance/providers" that way.
import { lstatSync, symlinkSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const link = join(root, "node_modules", "pulumi-tfe-governance");
try {
  lstatSync(link);
} catch {
  symlinkSync("..", link, "dir");
}
