import { afterEach, expect, it, vi } from "vitest";

const realVersions = Object.getOwnPropertyDescriptor(process, "versions") as PropertyDescriptor;
const realVersion = Object.getOwnPropertyDescriptor(process, "version") as PropertyDescriptor;

function runningOnNode(version: string) {
  Object.defineProperty(process, "versions", { ...realVersions, value: { ...process.versions, node: version } });
  Object.defineProperty(process, "version", { ...realVersion, value: `v${version}` });
  vi.resetModules();
}

afterEach(() => {
  Object.defineProperty(process, "versions", realVersions);
  Object.defineProperty(process, "version", realVersion);
  vi.resetModules();
});

it.each(["22.18.0", "20.20.2"])(
  "loading the library on Node.js %s fails with the minimum it needs",
  async (version) => {
    runningOnNode(version);
    await expect(import("../../src/index.js")).rejects.toThrow(
      `pulumi-tfe-governance needs Node.js 22.19.0 or newer; this is Node.js v${version}.`,
    );
  },
);

it.each(["22.19.0", "24.0.0"])("the library loads on Node.js %s", async (version) => {
  runningOnNode(version);
  await expect(import("../../src/index.js")).resolves.toHaveProperty("Policy");
});
