// Imported before undici, so that a user on an older Node reads what to do instead of undici's TypeError.
import { nodeRequirement, nodeTooOld } from "./node-requirement";

if (nodeTooOld()) throw new Error(`${nodeRequirement("pulumi-tfe-governance")}.`);
