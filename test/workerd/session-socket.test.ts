import { createExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../src/server/worker/index.js";

// edgegym's own session socket (GET /v1/ws) inside workerd over D1, through Hono's
// upgradeWebSocket for Cloudflare (a WebSocketPair): episodes at once on one socket, and a
// dropped socket whose episode continues on a new one.

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- frames are asserted field by field
type Frame = { id: string | number | null; status: number; body?: any; error?: any; text: string };

async function socket() {
  const res = await worker.fetch(new Request("http://edgegym.test/v1/ws", { headers: { Upgrade: "websocket" } }), env, createExecutionContext());
  expect(res.status).toBe(101);
  const ws = (res as unknown as { webSocket: WebSocket }).webSocket;
  (ws as unknown as { accept(): void }).accept();
  const pending = new Map<string | number | null, (f: Frame) => void>();
  ws.addEventListener("message", (e) => {
    const text = String(e.data);
    const frame = { ...(JSON.parse(text) as Omit<Frame, "text">), text };
    pending.get(frame.id)?.(frame);
    pending.delete(frame.id);
  });
  let seq = 0;
  return {
    ask: (request: Record<string, unknown>): Promise<Frame> => {
      const id = (request.id as string | number | undefined) ?? ++seq;
      const reply = new Promise<Frame>((resolve) => pending.set(id, resolve));
      ws.send(JSON.stringify({ ...request, id }));
      return reply;
    },
    close: () => ws.close(1000),
  };
}

describe("the /v1/ws session socket on the Worker", () => {
  it("refuses an upgrade from a page of another origin with the typed 403 body, and opens for its own origin", async () => {
    const upgrade = (origin: string) => worker.fetch(new Request("http://edgegym.test/v1/ws", { headers: { Upgrade: "websocket", Origin: origin } }), env, createExecutionContext());
    const refused = await upgrade("https://evil.example");
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ error: { code: "origin_not_allowed", details: { origin: "https://evil.example" } } });
    const own = await upgrade("http://edgegym.test");
    expect(own.status).toBe(101);
    const ws = (own as unknown as { webSocket: WebSocket }).webSocket;
    (ws as unknown as { accept(): void }).accept();
    ws.close(1000);
  });

  it("plays several reverse-text episodes at once on one socket, replies matched by id", async () => {
    const s = await socket();
    const resets = await Promise.all([0, 1, 2, 3].map((i) => s.ask({ id: `r${i}`, op: "reset", env_id: "reverse-text", body: { index: i } })));
    expect(resets.map((r) => [r.id, r.status])).toEqual([0, 1, 2, 3].map((i) => [`r${i}`, 201]));
    const steps = await Promise.all(
      resets.map((r) => {
        const text = r.body.messages.at(-1).content as string;
        return s.ask({ op: "step", episode_id: r.body.episode_id, body: { turn: 0, message: { role: "assistant", content: `<answer>${Array.from(text).reverse().join("")}</answer>` } } });
      }),
    );
    expect(steps.every((f) => f.status === 200 && f.body.done === true)).toBe(true);
    const score = await s.ask({ op: "score", episode_id: resets[0]?.body.episode_id });
    expect(score.body.score.reward).toBeCloseTo(1.2, 10);
    expect(await s.ask({ op: "step", episode_id: "ep_missing", body: { turn: 0, message: { role: "assistant", content: "x" } } })).toMatchObject({ status: 404, error: { code: "episode_not_found" } });
    s.close();
  });

  it("continues a tic-tac-toe episode on a new socket after the first is dropped; the retried step is the same bytes", async () => {
    const first = await socket();
    const id = (await first.ask({ op: "reset", env_id: "tic-tac-toe", body: { seed: 2, args: { opponent: "random" } } })).body.episode_id as string;
    const one = await first.ask({ op: "step", episode_id: id, body: { turn: 0, message: { role: "assistant", content: "<move>5</move>" } } });
    first.close();
    const second = await socket();
    const retried = await second.ask({ id: one.id, op: "step", episode_id: id, body: { turn: 0, message: { role: "assistant", content: "<move>5</move>" } } });
    expect(retried.text).toBe(one.text);
    expect(await second.ask({ op: "get", episode_id: id })).toMatchObject({ status: 200, body: { turn: 1, status: "active" } });
    second.close();
  });
});
