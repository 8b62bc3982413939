import { execFileSync } from "node:child_process";
import { type Browser, chromium } from "playwright-core";

// A real headless Chromium, driven by playwright-core: the one the toolchain found or installed (TFEGOV_CHROMIUM,
// scripts/toolchain.sh), else the first on PATH. playwright-core downloads no browser of its own.
function chromiumPath(): string {
  if (process.env.TFEGOV_CHROMIUM) return process.env.TFEGOV_CHROMIUM;
  for (const name of ["chromium", "chromium-browser", "google-chrome"]) {
    try {
      return execFileSync("sh", ["-c", `command -v ${name}`], { encoding: "utf8" }).trim();
    } catch {}
  }
  throw new Error(
    "no Chromium for the browser test: run the tests through `npm test` (which installs Debian's chromium as root), " +
      "install chromium, or set TFEGOV_CHROMIUM to a Chromium or Chrome executable",
  );
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: chromiumPath(), headless: true });
}
