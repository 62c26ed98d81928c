import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { REPO_ROOT, startNodeServer, type ChildServer } from "./support/node-server.js";

/*
 * openenv-core's own client against edgegym's OpenEnv wire, on the real Node server:
 * reverse-text, tic-tac-toe (with the socket dropped mid-episode and the episode continued
 * on a new one) and tool-math, over WebSocket and HTTP (test/openenv/drive_openenv.py).
 * The venv comes from scripts/openenv-venv.sh (openenv-core 0.3.0 from PyPI), which
 * `npm test` runs first; without it this is skipped with a note, and failed when
 * EDGEGYM_REQUIRE_OPENENV=1.
 */
const python = process.env.EDGEGYM_OPENENV_PYTHON ?? join(REPO_ROOT, "trainer-adapter/.venv-openenv/bin/python");
const ready = existsSync(python);
if (!ready) {
  const why = `openenv client test: no ${python}; run bash scripts/openenv-venv.sh`;
  if (process.env.EDGEGYM_REQUIRE_OPENENV === "1") throw new Error(why);
  console.warn(`${why} (skipping)`);
}

async function drive(url: string, key?: string): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn(python, [join(REPO_ROOT, "test/openenv/drive_openenv.py"), url, ...(key ? [key] : [])], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr.on("data", (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  return { code, out, err };
}

describe.skipIf(!ready)("openenv-core's client against /openenv/{env}", () => {
  let dir: string;
  let open: ChildServer;
  let keyed: ChildServer;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "edgegym-openenv-"));
    [open, keyed] = await Promise.all([
      startNodeServer({ db: join(dir, "open.db") }),
      startNodeServer({ db: join(dir, "keyed.db"), env: { EDGEGYM_API_KEYS: "alice:sk-alice" } }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([open?.stop(), keyed?.stop()]);
    rmSync(dir, { recursive: true, force: true });
  });

  it("plays reverse-text, tic-tac-toe with a reconnect, and tool-math over WebSocket and HTTP", async () => {
    const run = await drive(open.url);
    expect(run.code, `${run.err}\n${open.output()}`).toBe(0);
    const seen = JSON.parse(run.out.trim().split("\n").at(-1) ?? "{}");
    expect(seen).toMatchObject({ reverse_text_ws_reward: 1.2, reverse_text_http_reward: 1.2, tool_math_ws_reward: 1.1, tool_math_http_reward: 1.1, tool_math_mcp_client_reward: 1.1, ws_errors: "ok" });
    expect(seen.tic_tac_toe.last).toMatch(/^(You win!|You lose\.|Draw)/);
  }, 120_000);

  it("does the same with a Bearer key, through the EnvClient subclass that sends it", async () => {
    const run = await drive(keyed.url, "sk-alice");
    expect(run.code, `${run.err}\n${keyed.output()}`).toBe(0);
  }, 120_000);

  it("refuses the socket and the routes without the key", async () => {
    const reset = await fetch(`${keyed.url}/openenv/reverse-text/reset`, { method: "POST" });
    expect(reset.status).toBe(401);
    expect(((await reset.json()) as { detail: { code: string } }).detail.code).toBe("unauthorized");
    const status = await new Promise<number>((resolve, reject) => {
      const socket = new WebSocket(`${keyed.url.replace("http", "ws")}/openenv/reverse-text/ws`);
      socket.on("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
      socket.on("open", () => reject(new Error("socket opened without a key")));
      socket.on("error", () => undefined);
    });
    expect(status).toBe(401);
  });
});
