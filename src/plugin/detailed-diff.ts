import type { PropertyTable } from "../resources/property-table";

// The detailed diff the plugin answers, so that a program of another language sees the properties its author wrote
// (`code`, `parameters.apiKey`) instead of what the provider derives (`codeHash`) or every input. The providers
// say which properties changed (DiffWithChanges); this names each as the program wrote it. No I/O.

/** The engine's PropertyDiff.Kind. */
export const diffKinds = {
  add: 0,
  addReplace: 1,
  delete: 2,
  deleteReplace: 3,
  update: 4,
  updateReplace: 5,
} as const;

/** A property path as the engine writes one: `a.b` for names, `a["b.c"]` for any other key. */
export function propertyPath(segments: readonly string[]): string {
  return segments
    .map((segment, index) =>
      /^[A-Za-z_][A-Za-z0-9_]*$/.test(segment) ? `${index === 0 ? "" : "."}${segment}` : `[${JSON.stringify(segment)}]`,
    )
    .join("");
}

function present(value: unknown): boolean {
  return value !== undefined && value !== null;
}

function valueAt(properties: Record<string, unknown>, path: readonly string[]): unknown {
  let value: unknown = properties;
  for (const segment of path) {
    if (typeof value !== "object" || value === null || !Object.hasOwn(value, segment)) return undefined;
    value = (value as Record<string, unknown>)[segment];
  }
  return value;
}

/**
 * Each changed path (as the provider found it, keys as they travel) named as the program wrote it, with its kind:
 * added, deleted or updated, and whether it replaces. `oldInputs` are the inputs of the last update.
 */
export function detailedDiff(
  table: PropertyTable,
  oldInputs: Record<string, unknown>,
  news: Record<string, unknown>,
  changed: readonly (readonly string[])[],
  replaces: readonly string[],
): Record<string, number> {
  const result: Record<string, number> = {};
  for (const path of changed) {
    const root = path[0] as string;
    const spec = table[root];
    const shownAs = spec?.argument ? undefined : spec?.shownAs;
    const shown = shownAs ? [shownAs.find((name) => present(news[name])) ?? (shownAs[0] as string)] : [...path];
    const [before, after] = [present(valueAt(oldInputs, shown)), present(valueAt(news, shown))];
    const kind = shownAs || (before && after) ? "update" : after ? "add" : "delete";
    const replacing = replaces.includes(root);
    result[propertyPath(shown)] = diffKinds[replacing ? (`${kind}Replace` as const) : kind];
  }
  return result;
}
