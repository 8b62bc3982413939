import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, onTestFinished } from "vitest";

/**
 * A fresh directory under the system's temporary one, removed when the tests that use it are done: after the
 * test file when made at its top level (collection), after the test when made inside one. It is a repository of
 * its own (it holds a `.git`), as a project's folder is: the file-access rule reads a program's files inside their
 * repository only.
 */
export function temporaryDirectory(prefix: string, within: "file" | "test" = "file"): string {
  const directory = mkdtempSync(join(tmpdir(), prefix));
  mkdirSync(join(directory, ".git"));
  const remove = () => rmSync(directory, { recursive: true, force: true });
  if (within === "test") onTestFinished(remove);
  else afterAll(remove);
  return directory;
}
