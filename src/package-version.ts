import { readFileSync } from "node:fs";
import { join } from "node:path";

/** This package's version, from its package.json (beside dist/ once installed, beside src/ in a checkout). */
export const libraryVersion: string = JSON.parse(readFileSync(join(__dirname, "..", "package.json"), "utf8")).version;
