import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { startNodeServer, type RunningServer } from "../src/server/node/serve.js";

/*
 * edgegym's own session socket (GET /v1/ws) on the real Node entry (@hono/node-server + ws):
 * many episodes on one socket at once, replies matched by id, a socket dropped mid-episode
 * and the episode continued on a new one (and after a server restart), auth on the upgrade,
 * and the socket limits. The limits on requests in flight are tested without timing in
 * src/server/sockets/message-socket.test.ts.
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- frames are asserted field by field
type Frame = { id: string | number | null; status: number; body?: any; error?: any; replayed?: boolean; retry_after?: number };

class Client {
  private readonly pending = new Map<string | number | null, (f: Frame & { text: string }) => void>();
  private readonly untagged: (Frame & { text: string })[] = [];
  private seq = 0;
  closed: Promise<number>;
  private constructor(readonly socket: WebSocket) {
    socket.on("message", (raw) => {
      const text = String(raw);
      const frame = { ...(JSON.parse(text) as Frame), text };
      const waiter = this.pending.get(frame.id);
      if (waiter) {
        this.pending.delete(frame.id);
        waiter(frame);
      } else this.untagged.push(frame);
    });
    this.closed = new Promise((resolve) => socket.on("close", (code) => resolve(code)));
  }
  static async open(url: string, headers: Record<string, string> = {}): Promise<Client> {
    const socket = new WebSocket(url, { headers });
    await new Promise((resolve, reject) => {
      socket.once("open", resolve);
      socket.once("error", reject);
    });
    return new Client(socket);
  }
  /** Sends a request under a fresh id (or the given one) and resolves with its reply. */
  ask(request: Record<string, unknown>): Promise<Frame & { text: string }> {
    const id = (request.id as string | number | undefined) ?? ++this.seq;
    const reply = new Promise<Frame & { text: string }>((resolve) => this.pending.set(id, resolve));
    this.socket.send(JSON.stringify({ ...request, id }));
    return reply;
  }
}

/** The status an upgrade is refused with, and its headers. */
function refusedUpgrade(url: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const s = new WebSocket(url, { headers });
    s.on("unexpected-response", (_req, res) => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
    s.on("open", () => reject(new Error("the socket opened")));
    s.on("error", () => undefined);
  });
}

const reversed = (text: string) => `<answer>${Array.from(text).reverse().join("")}</answer>`;

describe("the /v1/ws session socket on Node", () => {
  let dir: string;
  let server: RunningServer;
  let ws: string;
  const start = async () => {
    server = await startNodeServer({
      port: 0,
      host: "127.0.0.1",
      dbPath: join(dir, "edgegym.db"),
      reapIntervalMs: 0,
      config: { bodyLimitBytes: 64 * 1024, apiKeys: ["alice:sk-alice", "bob:sk-bob"], socketMaxOpen: 4 },
    });
    ws = `${server.url.replace("http", "ws")}/v1/ws`;
  };
  const alice = { Authorization: "Bearer sk-alice" };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "edgegym-session-ws-"));
    await start();
  });
  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("plays 32 episodes at once on one socket, each reply under its request's id, and HTTP sees the same episodes", async () => {
    const client = await Client.open(ws, alice);
    const resets = await Promise.all(Array.from({ length: 32 }, (_, i) => client.ask({ id: `reset-${i}`, op: "reset", env_id: "reverse-text", body: { index: i } })));
    expect(resets.map((r) => [r.id, r.status])).toEqual(resets.map((_, i) => [`reset-${i}`, 201]));
    const steps = await Promise.all(
      resets.map((r) => client.ask({ op: "step", episode_id: r.body.episode_id, body: { turn: 0, message: { role: "assistant", content: reversed(r.body.messages.at(-1).content) } } })),
    );
    expect(steps.every((s) => s.status === 200 && s.body.done === true)).toBe(true);
    const scores = await Promise.all(resets.map((r) => client.ask({ op: "score", episode_id: r.body.episode_id })));
    expect(scores.every((s) => Math.abs(s.body.score.reward - 1.2) < 1e-9)).toBe(true);
    const id = resets[0]?.body.episode_id as string;
    const viaHttp = await fetch(`${server.url}/v1/episodes/${id}`, { headers: alice });
    expect(await viaHttp.json()).toMatchObject({ episode_id: id, status: "done", score: { reward: scores[0]?.body.score.reward } });
    expect((await client.ask({ op: "close", episode_id: id })).body).toMatchObject({ episode_id: id });
    client.socket.close();
  });

  it("carries seats: a self-play game on one socket, each step naming its seat, a seat's retry on a new socket the same bytes", async () => {
    const first = await Client.open(ws, alice);
    const reset = await first.ask({ op: "reset", env_id: "tic-tac-toe-2p", body: { seed: 4, seats: { x: "client", o: "client" } } });
    expect(reset).toMatchObject({ status: 201, body: { to_play: "x" } });
    const id = reset.body.episode_id as string;
    const x = { role: "assistant", content: "<think>fork them</think><move>5</move>" };
    // Sent at once for the same turn: o's is refused whichever runs first (not_your_turn, or turn_conflict after x's), x's is applied.
    const [outOfTurn, moved] = await Promise.all([
      first.ask({ op: "step", episode_id: id, body: { turn: 0, seat: "o", message: { role: "assistant", content: "<move>1</move>" } } }),
      first.ask({ op: "step", episode_id: id, body: { turn: 0, seat: "x", message: x } }),
    ]);
    expect(moved).toMatchObject({ status: 200, body: { turn: 1, to_play: "o" } });
    expect(moved.text).not.toContain("fork them");
    expect(outOfTurn.status).toBe(409);
    expect(["not_your_turn", "turn_conflict"]).toContain(outOfTurn.error.code);
    first.socket.terminate();

    const second = await Client.open(ws, alice);
    expect((await second.ask({ id: moved.id, op: "step", episode_id: id, body: { turn: 0, seat: "x", message: x } })).text).toBe(moved.text);
    expect(await second.ask({ op: "step", episode_id: id, body: { turn: 1, seat: "x", message: { role: "assistant", content: "<move>1</move>" } } })).toMatchObject({ status: 409, error: { code: "not_your_turn", details: { to_play: "o" } } });
    const o = await second.ask({ op: "step", episode_id: id, body: { turn: 1, seat: "o", message: { role: "assistant", content: "<move>1</move>" } } });
    expect(o).toMatchObject({ status: 200, body: { turn: 2, to_play: "x" } });
    expect(await second.ask({ op: "get", episode_id: id, query: { seat: "o" } })).toMatchObject({ status: 200, body: { seat: "o", to_play: "x" } });
    second.socket.close();
  });

  it("loses nothing when the socket drops: a new socket retries the step in flight (same bytes) and continues the episode", async () => {
    const first = await Client.open(ws, alice);
    const reset = await first.ask({ op: "reset", env_id: "tic-tac-toe", body: { seed: 2, args: { opponent: "random" } }, idempotency_key: "drop-1" });
    const id = reset.body.episode_id as string;
    const one = await first.ask({ op: "step", episode_id: id, body: { turn: 0, message: { role: "assistant", content: "<move>5</move>" } } });
    first.socket.terminate();
    expect(await first.closed).not.toBe(1000);

    const second = await Client.open(ws, alice);
    // The reset's retry (same key) is the same episode; the step's retry is the stored reply.
    expect(await second.ask({ op: "reset", env_id: "tic-tac-toe", body: { seed: 2, args: { opponent: "random" } }, idempotency_key: "drop-1" })).toMatchObject({ status: 201, replayed: true, body: { episode_id: id } });
    const retried = await second.ask({ id: one.id, op: "step", episode_id: id, body: { turn: 0, message: { role: "assistant", content: "<move>5</move>" } } });
    expect(retried.text).toBe(one.text);
    let frame = one;
    for (let cell = 1; !frame.body.done && cell <= 9; cell++) frame = await second.ask({ op: "step", episode_id: id, body: { turn: frame.body.turn, message: { role: "assistant", content: `<move>${cell}</move>` } } });
    expect(frame.body.done).toBe(true);
    second.socket.close();
  });

  it("continues an episode after the server restarts on the same database", async () => {
    const before = await Client.open(ws, alice);
    const id = (await before.ask({ op: "reset", env_id: "tic-tac-toe", body: { seed: 3, args: { opponent: "random" } } })).body.episode_id as string;
    const one = await before.ask({ op: "step", episode_id: id, body: { turn: 0, message: { role: "assistant", content: "<move>5</move>" } } });
    await server.close();
    expect(await before.closed).not.toBe(1000);
    await start();
    const after = await Client.open(ws, alice);
    const page = await after.ask({ op: "get", episode_id: id });
    expect(page.body).toMatchObject({ turn: 1, status: "active" });
    expect(page.body.messages.at(-1)).toEqual(one.body.messages.at(-1));
    expect((await after.ask({ op: "step", episode_id: id, body: { turn: 1, message: { role: "assistant", content: "<move>1</move>" } } })).status).toBe(200);
    after.socket.close();
  });

  it("needs a key to upgrade, and one tenant's socket cannot reach another's episode", async () => {
    expect((await refusedUpgrade(ws)).status).toBe(401);
    expect((await refusedUpgrade(ws, { Authorization: "Bearer sk-wrong" })).status).toBe(401);
    const a = await Client.open(ws, alice);
    const b = await Client.open(ws, { Authorization: "Bearer sk-bob" });
    const id = (await a.ask({ op: "reset", env_id: "reverse-text" })).body.episode_id as string;
    expect(await b.ask({ op: "step", episode_id: id, body: { turn: 0, message: { role: "assistant", content: "x" } } })).toMatchObject({ status: 404, error: { code: "episode_not_found" } });
    expect(await b.ask({ op: "close", episode_id: id })).toMatchObject({ status: 404 });
    expect((await a.ask({ op: "get", episode_id: id })).body.status).toBe("active");
    a.socket.close();
    b.socket.close();
    await Promise.all([a.closed, b.closed]);
  });

  it("refuses binary frames, closes on a frame past the body limit, and answers 503 with Retry-After past the socket limit", async () => {
    const c = await Client.open(ws, alice);
    c.socket.send(Buffer.from([1, 2, 3]));
    expect(await new Promise<Frame>((resolve) => c.socket.once("message", (raw) => resolve(JSON.parse(String(raw)) as Frame)))).toMatchObject({ id: null, status: 400, error: { code: "malformed_json" } });
    c.socket.send(JSON.stringify({ id: 1, op: "reset", env_id: "reverse-text", body: { metadata: { pad: "x".repeat(70 * 1024) } } }));
    expect(await c.closed).toBe(1009);

    // socketMaxOpen is 4 in this server: four open, the fifth refused, one closed, then admitted again.
    const open = await Promise.all(Array.from({ length: 4 }, () => Client.open(ws, alice)));
    await Promise.all(open.map((o) => o.ask({ op: "get", episode_id: "ep_none" })));
    const refused = await refusedUpgrade(ws, alice);
    expect([refused.status, refused.headers["retry-after"]]).toEqual([503, "5"]);
    open[0]?.socket.close();
    await open[0]?.closed;
    // The server counts the close when its own close event fires: poll without a fixed wait.
    let again: Client | undefined;
    for (let i = 0; i < 200 && !again; i++) {
      again = await Client.open(ws, alice).catch(() => undefined);
      if (!again) await new Promise((r) => setTimeout(r, 10));
    }
    expect((await again?.ask({ op: "get", episode_id: "ep_none" }))?.status).toBe(404);
    for (const o of [...open.slice(1), again]) o?.socket.close();
  });
});
