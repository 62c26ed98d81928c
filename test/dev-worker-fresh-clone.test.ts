import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { ChildServer } from "./support/child-server.js";
import { startDevWorker } from "./support/dev-worker.js";
import { REPO_ROOT } from "./support/node-server.js";

/**
 * The README's Workers paragraph on a fresh clone: `npm run dev:worker -- --port N` with no
 * dist/ (git ignores it, and `npm start` builds only the server) must build the console the
 * Worker serves as its assets, then answer. The clone is this checkout's HEAD plus its
 * uncommitted changes: every file git tracks or would add (nothing it ignores: no dist/,
 * node_modules, .wrangler or venvs), copied into a temporary folder, with node_modules linked
 * as `npm install` would have made it.
 */
const work = mkdtempSync(join(tmpdir(), "edgegym-fresh-clone-"));
let server: ChildServer | undefined;
afterAll(async () => {
  await server?.stop();
  rmSync(work, { recursive: true, force: true });
});

function freshClone(into: string): void {
  const listed = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], { cwd: REPO_ROOT, encoding: "utf8", maxBuffer: 64 << 20 });
  for (const path of listed.split("\0")) {
    const from = join(REPO_ROOT, path);
    // A tracked file deleted in the working tree is not in the clone either.
    if (!path || !existsSync(from) || !statSync(from).isFile()) continue;
    mkdirSync(dirname(join(into, path)), { recursive: true });
    copyFileSync(from, join(into, path));
  }
  symlinkSync(join(REPO_ROOT, "node_modules"), join(into, "node_modules"), "dir");
}

describe("npm run dev:worker on a fresh clone", () => {
  it("builds the console it serves, then serves the Worker", async () => {
    const clone = join(work, "edgegym");
    freshClone(clone);
    expect(existsSync(join(clone, "dist"))).toBe(false);
    const started = await startDevWorker({ cwd: clone, persistTo: join(work, "state"), startTimeoutMs: 150_000 });
    server = started.server;
    const { baseUrl } = started;
    expect(existsSync(join(clone, "dist/console/ui/index.html"))).toBe(true);
    const ui = await fetch(`${baseUrl}/ui/`);
    expect([ui.status, ui.headers.get("content-type")]).toEqual([200, expect.stringContaining("text/html")]);
    const docs = await fetch(`${baseUrl}/docs`);
    expect(docs.status).toBe(200);
    const envs = (await (await fetch(`${baseUrl}/v1/envs`)).json()) as { envs: { id: string }[] };
    expect(envs.envs.map((e) => e.id)).toContain("reverse-text");
  }, 200_000);
});
