/* global process, console -- a plain Node script outside the TypeScript build */
// In a checkout (tsconfig.build.json beside package.json), the CLI runs from dist/. This
// compiles it only when dist/ is missing or a file under src/ is newer than it, so `npm start`
// on an up-to-date build starts at once (it used to run tsc on every start: ~20 s). `npm
// install` no longer builds (no prepare script: npm 11 flags it in every package that installs
// edgegym's tarball); the first CLI run does. An installed package has no tsconfig.build.json
// and ships dist/ built (prepack), so nothing here runs there.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const MARKER = join(ROOT, "dist", "server", "node", "cli.js");

/** Newest modification time of the files tsc compiles (tests are left out of the build). */
function newestSource(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(path));
    else if (!entry.name.endsWith(".test.ts")) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

/** Why dist/ must be rebuilt, or null when it is current. */
export function staleReason() {
  if (!existsSync(join(ROOT, "tsconfig.build.json")) || !existsSync(join(ROOT, "src"))) return null;
  if (!existsSync(MARKER)) return "dist/ is missing";
  const built = statSync(MARKER).mtimeMs;
  if (newestSource(join(ROOT, "src")) > built) return "src/ changed since the last build";
  return null;
}

export function ensureBuild() {
  compileIfStale();
  ensureConsole();
}

/**
 * The web console (/ui) and the API reference (/docs) are a vite build of their own, which
 * tsc does not make: built here once when a checkout has none, so `npm start` on a fresh
 * clone serves both as the README says. scripts/ensure-console.sh locks, so CLI processes
 * started at once build it once.
 */
export function ensureConsole() {
  if (!existsSync(join(ROOT, "tsconfig.build.json")) || !existsSync(join(ROOT, "console"))) return;
  if (existsSync(join(ROOT, "dist", "console", "ui", "index.html"))) return;
  if (!existsSync(join(ROOT, "node_modules", "vite"))) return;
  const run = spawnSync("bash", [join(ROOT, "scripts", "ensure-console.sh")], { cwd: ROOT, stdio: ["ignore", "ignore", "inherit"] });
  // The API works without it: /ui and /docs then answer that the console is not built.
  if (run.status !== 0) console.error("edgegym: building the web console failed (above); /ui and /docs stay off until `npm run build` succeeds.");
}

function compileIfStale() {
  const reason = staleReason();
  if (!reason) return;
  const tsc = join(ROOT, "node_modules", "typescript", "bin", "tsc");
  if (!existsSync(tsc)) {
    console.error(`edgegym: ${reason} and TypeScript is not installed here; run \`npm install\`, then this command again.`);
    process.exit(1);
  }
  console.error(`edgegym: ${reason}; compiling (npm run build)…`);
  const run = spawnSync(process.execPath, [tsc, "-p", join(ROOT, "tsconfig.build.json")], { stdio: "inherit" });
  if (run.status !== 0) {
    console.error("edgegym: the build failed (above); fix it or run `npm run build` to see it again.");
    process.exit(1);
  }
}
