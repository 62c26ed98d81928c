import { existsSync } from "node:fs";
import { chromium, type Browser } from "playwright-core";

/**
 * Debian's chromium (apt: chromium), driven by playwright-core: no browser is downloaded.
 * EDGEGYM_CHROMIUM names another binary. Missing, the browser tests are skipped with a note,
 * or fail when EDGEGYM_REQUIRE_BROWSER=1 (CI installs the package).
 */
export const CHROMIUM = process.env.EDGEGYM_CHROMIUM ?? ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((p) => existsSync(p)) ?? "";

export function browserOrSkip(): boolean {
  if (CHROMIUM && existsSync(CHROMIUM)) return true;
  const why = "no chromium found (apt-get install chromium, or set EDGEGYM_CHROMIUM)";
  if (process.env.EDGEGYM_REQUIRE_BROWSER === "1") throw new Error(why);
  console.warn(`browser tests: ${why} (skipping)`);
  return false;
}

export function launchChromium(): Promise<Browser> {
  // --no-sandbox: CI runs as root, where Chromium's own sandbox refuses to start.
  return chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"] });
}
