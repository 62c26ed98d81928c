import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../src/server/worker/index.js";

// The OpenEnv wire inside workerd over D1: the HTTP routes, and the /ws session through
// Hono's upgradeWebSocket for Cloudflare (a WebSocketPair), including a reconnect.

const call = async (method: string, path: string, body?: unknown) => {
  const init: RequestInit = { method, headers: body === undefined ? {} : { "content-type": "application/json" } };
  if (body !== undefined) init.body = JSON.stringify(body);
  const ctx = createExecutionContext();
  const res = await worker.fetch(new Request(`http://edgegym.test${path}`, init), env, ctx);
  await waitOnExecutionContext(ctx);
  const text = await res.text();
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- assertions walk the body freely
  return { status: res.status, json: JSON.parse(text) as any };
};

/** Opens the Worker's socket from inside workerd: the 101 response carries the client end. */
async function socket(path: string) {
  const ctx = createExecutionContext();
  const res = await worker.fetch(new Request(`http://edgegym.test${path}`, { headers: { Upgrade: "websocket" } }), env, ctx);
  expect(res.status).toBe(101);
  const ws = (res as unknown as { webSocket: WebSocket }).webSocket;
  (ws as unknown as { accept(): void }).accept();
  const frames: string[] = [];
  const waiting: ((s: string) => void)[] = [];
  ws.addEventListener("message", (e) => {
    const next = waiting.shift();
    if (next) next(String(e.data));
    else frames.push(String(e.data));
  });
  return {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- frames are asserted field by field
    send: async (message: unknown): Promise<any> => {
      ws.send(JSON.stringify(message));
      const text = frames.shift() ?? (await new Promise<string>((resolve) => waiting.push(resolve)));
      return JSON.parse(text);
    },
    close: () => ws.close(1000),
  };
}

describe("the OpenEnv wire on the Worker", () => {
  it("plays reverse-text over HTTP with the reward once done, and answers errors in FastAPI's shape", async () => {
    expect((await call("GET", "/openenv/reverse-text/health")).json).toEqual({ status: "healthy" });
    const reset = await call("POST", "/openenv/reverse-text/reset", { index: 0 });
    expect(reset.status).toBe(200);
    const obs = reset.json.observation;
    const text = obs.messages.at(-1).content as string;
    const step = await call("POST", "/openenv/reverse-text/step", { episode_id: obs.episode_id, action: { content: `<answer>${Array.from(text).reverse().join("")}</answer>`, turn: 0 } });
    expect(step.json.done).toBe(true);
    expect(step.json.reward).toBeCloseTo(1.2, 10);
    expect((await call("GET", `/openenv/reverse-text/state?episode_id=${obs.episode_id}`)).json).toMatchObject({ step_count: 1, done: true });
    const bad = await call("POST", "/openenv/reverse-text/step", { episode_id: obs.episode_id, action: { content: "x" } });
    expect([bad.status, bad.json.detail[0].loc]).toEqual([422, ["body", "action", "turn"]]);
  });

  it("plays tic-tac-toe over the socket, drops it, and continues on a new one", async () => {
    const first = await socket("/openenv/tic-tac-toe/ws");
    const opening = (await first.send({ type: "reset", data: { seed: 2, args: { opponent: "random" } } })).data.observation;
    const one = await first.send({ type: "step", data: { content: "<move>5</move>" } });
    expect(one.data.observation.turn).toBe(1);
    first.close();
    const second = await socket("/openenv/tic-tac-toe/ws");
    const resumed = await second.send({ type: "reset", data: { episode_id: opening.episode_id } });
    expect(resumed.data.observation).toMatchObject({ turn: 1, resumed: true });
    const retried = await second.send({ type: "step", data: { content: "<move>5</move>", turn: 0 } });
    expect(retried.data).toEqual(one.data);
    expect((await second.send({ type: "dance" })).data.code).toBe("UNKNOWN_TYPE");
    expect((await second.send({ type: "state" })).data.step_count).toBe(1);
    second.close();
  });
});
