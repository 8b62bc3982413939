import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

// Messages name a resource's arguments as the program writes them: `allowWeakening: true` in YAML (and in the
// schema), `allow_weakening=True` in Python, `AllowWeakening: pulumi.Bool(true)` in Go, `AllowWeakening = true` in
// C#. The plugin learns the language from the project's Pulumi.yaml (the engine starts it in the project's
// directory and says nothing else of the program). Stack settings (`tfegov:allowWeakening`) and environment variables
// keep their one spelling. No I/O but reading Pulumi.yaml.

export type ProgramLanguage = "yaml" | "python" | "go" | "dotnet" | "nodejs" | "java" | "other";

/** The runtime of the Pulumi project in `dir` (`runtime: python`, or `runtime:` with `name: python`). */
export function programLanguage(dir: string): ProgramLanguage {
  for (const name of ["Pulumi.yaml", "Pulumi.yml"]) {
    const path = join(dir, name);
    if (!existsSync(path)) continue;
    const text = readFileSync(path, "utf8");
    const runtime =
      /^runtime:[ \t]*([A-Za-z]+)[ \t]*$/m.exec(text)?.[1] ??
      /^runtime:[ \t]*\n[ \t]+name:[ \t]*([A-Za-z]+)/m.exec(text)?.[1];
    const known = ["yaml", "python", "go", "dotnet", "nodejs", "java"] as const;
    return (known as readonly string[]).includes(runtime ?? "") ? (runtime as ProgramLanguage) : "other";
  }
  return "other";
}

const snake = (name: string) => name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
const pascal = (name: string) => name[0]?.toUpperCase() + name.slice(1);

/** How `language` writes argument `name` set to a boolean, and the name alone. */
const spellings: Partial<
  Record<ProgramLanguage, { set(name: string, value: string): string; name(name: string): string }>
> = {
  python: { set: (name, value) => `${snake(name)}=${value === "true" ? "True" : "False"}`, name: snake },
  go: { set: (name, value) => `${pascal(name)}: pulumi.Bool(${value})`, name: pascal },
  dotnet: { set: (name, value) => `${pascal(name)} = ${value}`, name: pascal },
};

/**
 * `text` with each of `names` (the resources' arguments, in the schema's camelCase) as `language` spells it. A name
 * after `:`, `.` or a word character (a stack setting `tfegov:allowWeakening`, a path `folderPolicies.deny`) is left.
 */
export function inProgramLanguage(text: string, language: ProgramLanguage, names: readonly string[]): string {
  const spelling = spellings[language];
  const camel = names.filter((name) => /[A-Z]/.test(name));
  if (!spelling || camel.length === 0) return text;
  const alternatives = [...camel].sort((a, b) => b.length - a.length).join("|");
  return text
    .replace(new RegExp(`(?<![\\w:.\\-])(${alternatives}): (true|false)\\b`, "g"), (_, name: string, value: string) =>
      spelling.set(name, value),
    )
    .replace(new RegExp(`(?<![\\w:.\\-])(${alternatives})\\b(?![\\w:(])`, "g"), (name: string) => spelling.name(name));
}
