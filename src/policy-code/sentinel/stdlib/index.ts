// The standard imports this evaluator implements, by name. No I/O.
import { NotSupported } from "../errors";
import type { Position } from "../lexer";
import { terraformImports } from "../standard-imports";
import type { HostObject, Value } from "../values";
import { decimalImport, versionImport } from "./numbers";
import { base64Import, jsonImport, stringsImport, typesImport, unitsImport } from "./text";
import { collectionImport, collectionMapsImport, sockaddrImport, timeImport } from "./time";

export interface StandardImportContext {
  /** The moment `time.now` gives, in milliseconds since the epoch. */
  now: number;
  /** Calls a function value (for imports that call a policy's predicate). */
  call(fn: Value, args: Value[], at: Position): Value;
}

/** The standard import of that name; NotSupported for one this evaluator does not run; undefined for no such import. */
export function standardImport(name: string, context: StandardImportContext): HostObject | undefined {
  switch (name) {
    case "strings":
      return stringsImport();
    case "types":
      return typesImport();
    case "units":
      return unitsImport();
    case "json":
      return jsonImport();
    case "base64":
      return base64Import();
    case "decimal":
      return decimalImport();
    case "version":
      return versionImport();
    case "time":
      return timeImport(context.now);
    case "sockaddr":
      return sockaddrImport();
    case "collection":
      return collectionImport(context.call);
    case "collection/maps":
      return collectionMapsImport();
    case "http":
      throw new NotSupported('import "http" is not run: it would send requests from the test; mock it in the case');
  }
  if (terraformImports.has(name)) {
    throw new NotSupported(`import "${name}" has no mock in this case: give it with a mock "${name}" block`);
  }
  if (["runtime", "uuid", "collection/lists"].includes(name)) {
    throw new NotSupported(`import "${name}" is not implemented by this evaluator`);
  }
  return undefined;
}
