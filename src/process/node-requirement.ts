// undici 8, the client's HTTP stack, declares Node.js >= 22.19.0, the highest floor of all dependencies; on an older
// Node it dies at load with an unrelated TypeError. This module imports nothing, so that the commands can check
// first and say so in one line.

export const minimumNode = "22.19.0";

/** Whether this Node.js is older than the library needs. */
export function nodeTooOld(version: string = process.versions.node): boolean {
  const [major = 0, minor = 0] = version.split(".").map(Number);
  return major < 22 || (major === 22 && minor < 19);
}

/** The one line that says so, and what to do. */
export function nodeRequirement(subject: string): string {
  return (
    `${subject} needs Node.js ${minimumNode} or newer; this is Node.js ${process.version}. ` +
    "Install Node.js 24 LTS (or 22.19+) and run it again"
  );
}
