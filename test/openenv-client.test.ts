import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { REPO_ROOT } from "./support/node-server.js";
import { lastJsonLine, pinnedVenvPython, runPython, serverPair, type PythonRun } from "./support/python-client.js";

/*
 * openenv-core's own client against edgegym's OpenEnv wire, on the real Node server:
 * reverse-text, tic-tac-toe (with the socket dropped mid-episode and the episode continued
 * on a new one), tool-math, and seats (kuhn-poker with one client per seat, each shown its
 * own card only; tic-tac-toe-2p with one client for both seats), over WebSocket and HTTP
 * (test/openenv/drive_openenv.py).
 * The venv comes from scripts/openenv-venv.sh (openenv-core 0.3.0 from PyPI), which
 * `npm test` runs first; without it this is skipped with a note, and failed when
 * EDGEGYM_REQUIRE_OPENENV=1.
 */
const { python, ready } = pinnedVenvPython({ name: "openenv", envVar: "OPENENV" }, "openenv client test");

const drive = (url: string, key?: string): Promise<PythonRun> => runPython(python, [join(REPO_ROOT, "test/openenv/drive_openenv.py"), url, ...(key ? [key] : [])]);

describe.skipIf(!ready)("openenv-core's client against /openenv/{env}", () => {
  const servers = serverPair("edgegym-openenv-", "alice:sk-alice");

  it("plays reverse-text, tic-tac-toe with a reconnect, tool-math and seated games over WebSocket and HTTP", async () => {
    const run = await drive(servers.open.url);
    expect(run.code, `${run.err}\n${servers.open.output()}`).toBe(0);
    const seen = lastJsonLine(run.out);
    expect(seen).toMatchObject({ reverse_text_ws_reward: 1.2, reverse_text_http_reward: 1.2, tool_math_ws_reward: 1.1, tool_math_http_reward: 1.1, tool_math_mcp_client_reward: 1.1, ws_errors: "ok" });
    // Seats: one client per kuhn-poker seat (hidden cards), one client for both tic-tac-toe-2p seats.
    expect(seen.kuhn_poker_seats).toEqual({ p1: expect.any(Number), p2: expect.any(Number) });
    expect(seen.tic_tac_toe_2p_moves).toBeGreaterThanOrEqual(5);
    expect(seen.tic_tac_toe?.last).toMatch(/^(You win!|You lose\.|Draw)/);
  }, 120_000);

  it("does the same with a Bearer key, through the EnvClient subclass that sends it", async () => {
    const run = await drive(servers.keyed.url, "sk-alice");
    expect(run.code, `${run.err}\n${servers.keyed.output()}`).toBe(0);
  }, 120_000);

  it("refuses the socket and the routes without the key", async () => {
    const { keyed } = servers;
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
