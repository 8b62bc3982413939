import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { expect, it } from "vitest";

const run = promisify(execFile);

// README's main-job command, from scratch, to the end: the local server, `pulumi up` of the top-level Pulumi.yaml,
// and the report of what the server holds. A second run changes nothing.
it("npm run quickstart creates the quickstart's policies and deprecation, then is idempotent", async () => {
  const dataDir = await mkdtemp(join(tmpdir(), "quickstart-"));
  const options = { cwd: resolve(__dirname, "..", ".."), env: { ...process.env, QUICKSTART_DATA_DIR: dataDir } };
  try {
    const first = await run("npm", ["run", "quickstart"], options);
    expect(first.stdout).toMatch(/\+ 5 created/);
    expect(first.stdout).toMatch(/policy require-tags\s+sentinel soft-mandatory\s+\d+ bytes of code, in 1 policy set/);
    expect(first.stdout).toMatch(/policy restrict-instance-types\s+sentinel hard-mandatory/);
    expect(first.stdout).toMatch(/policy deny-public-buckets\s+opa\s+mandatory/);
    expect(first.stdout).toMatch(/acme\/vpc\/aws 1\.0\.0\s+deprecated: 1\.0\.0 creates one NAT gateway/);
    expect(first.stdout).toMatch(/acme\/vpc\/aws 1\.1\.0\s+active/);

    const second = await run("npm", ["run", "quickstart"], options);
    expect(second.stdout).toMatch(/5 unchanged/);
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}, 300_000);
