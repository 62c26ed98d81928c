import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";

export const ROOT = join(import.meta.dirname, "..", "..");

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(path));
    else if (!entry.name.endsWith(".test.ts")) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

/**
 * Process tests run the real CLI from dist/. `npm test` builds first; when a test runs
 * alone and dist/ is missing or older than src/, this builds it (about 10 s), so a process
 * test never runs stale code.
 */
export function ensureBuiltDist(): void {
  const marker = join(ROOT, "dist", "server", "node", "cli.js");
  if (existsSync(marker) && statSync(marker).mtimeMs >= newestSource(join(ROOT, "src"))) return;
  execFileSync(process.execPath, [join(ROOT, "node_modules", "typescript", "bin", "tsc"), "-p", join(ROOT, "tsconfig.build.json")], { stdio: "inherit" });
}
