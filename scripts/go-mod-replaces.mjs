// Prints the replace directives of a go.mod file as `old=new@version` lines for `go mod edit -replace`,
// leaving out replacements by local paths, which only make sense inside their own repository.
import { readFileSync } from "node:fs";

const goMod = readFileSync(process.argv[2], "utf8");
const directives = [];
for (const block of goMod.matchAll(/^replace\s*\(([\s\S]*?)^\)/gm)) directives.push(...block[1].split("\n"));
for (const line of goMod.matchAll(/^replace\s+([^(\n][^\n]*)$/gm)) directives.push(line[1]);

for (const directive of directives) {
  const match = directive.trim().match(/^(\S+)(?:\s+(\S+))?\s+=>\s+(\S+)(?:\s+(\S+))?$/);
  if (!match) continue;
  const [, oldPath, oldVersion, newPath, newVersion] = match;
  if (newPath.startsWith(".") || newPath.startsWith("/")) continue;
  const from = oldVersion ? `${oldPath}@${oldVersion}` : oldPath;
  console.log(`${from}=${newVersion ? `${newPath}@${newVersion}` : newPath}`);
}
