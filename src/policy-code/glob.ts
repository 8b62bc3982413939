// One glob language for the folders a policy set is made of: go-slug's (the .terraformignore rules an upload
// follows), which policy-update-patterns follow too.

/**
 * go-slug's translation of a pattern into a regular expression: `**` spans folders, `*` and `?` stay within one,
 * `.` and `$` are literal, `\` escapes the next character, and every other character goes into the expression as
 * it is (so `[abc]` is a class there too). A pattern that does not compile matches nothing, as in go-slug.
 */
export function globRegExp(pattern: string): RegExp | null {
  let source = "^";
  const characters = [...pattern];
  for (let index = 0; index < characters.length; index++) {
    const character = characters[index] as string;
    if (character === "*") {
      if (characters[index + 1] === "*") {
        index++;
        if (characters[index + 1] === "/") index++;
        source += index + 1 >= characters.length ? ".*" : "(.*/)?";
      } else source += "[^/]*";
    } else if (character === "?") source += "[^/]";
    else if (character === "." || character === "$") source += `\\${character}`;
    else if (character === "\\") {
      source += index + 1 < characters.length ? `\\${characters[++index]}` : "\\\\";
    } else source += character;
  }
  try {
    return new RegExp(`${source}$`, "u");
  } catch {
    return null;
  }
}
