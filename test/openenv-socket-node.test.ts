import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { startNodeServer, type RunningServer } from "../src/server/node/serve.js";

/*
 * The OpenEnv socket on the real Node entry (@hono/node-server + ws), with a plain `ws`
 * client so each frame can be controlled: order, limits, two sockets on one episode, and
 * an episode continued after a restart of the server on the same file.
 */

interface Frame {
  type: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  data: any;
}

class Client {
  private readonly frames: Frame[] = [];
  private waiting: ((f: Frame) => void)[] = [];
  closed: Promise<number>;
  private constructor(readonly socket: WebSocket) {
    socket.on("message", (raw) => {
      const frame = JSON.parse(String(raw)) as Frame;
      const next = this.waiting.shift();
      if (next) next(frame);
      else this.frames.push(frame);
    });
    this.closed = new Promise((resolve) => socket.on("close", (code) => resolve(code)));
  }
  static async open(url: string): Promise<Client> {
    const socket = new WebSocket(url);
    await new Promise((resolve, reject) => {
      socket.once("open", resolve);
      socket.once("error", reject);
    });
    return new Client(socket);
  }
  next(): Promise<Frame> {
    const frame = this.frames.shift();
    if (frame) return Promise.resolve(frame);
    return new Promise((resolve) => this.waiting.push(resolve));
  }
  async send(message: unknown): Promise<Frame> {
    this.socket.send(JSON.stringify(message));
    return this.next();
  }
}

describe("the OpenEnv socket on Node", () => {
  let dir: string;
  let server: RunningServer;
  let ws: string;
  const start = async () => {
    server = await startNodeServer({ port: 0, host: "127.0.0.1", dbPath: join(dir, "edgegym.db"), reapIntervalMs: 0, config: { bodyLimitBytes: 64 * 1024 } });
    ws = `${server.url.replace("http", "ws")}/openenv`;
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "edgegym-openenv-ws-"));
    await start();
  });
  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("answers frames in the order they came, and refuses frames past the queue", async () => {
    const client = await Client.open(`${ws}/reverse-text/ws`);
    const reset = await client.send({ type: "reset", data: { index: 0 } });
    expect(reset.type).toBe("observation");
    for (let i = 0; i < 30; i++) client.socket.send(JSON.stringify({ type: "state" }));
    const replies = await Promise.all(Array.from({ length: 30 }, () => client.next()));
    const busy = replies.filter((f) => f.type === "error");
    expect(busy.length).toBeGreaterThan(0);
    expect(busy[0]?.data).toMatchObject({ code: "CAPACITY_REACHED", edgegym_code: "rate_limited" });
    expect(replies.filter((f) => f.type === "state").every((f) => f.data.episode_id === reset.data.observation.episode_id)).toBe(true);
    client.socket.close();
  });

  it("refuses binary frames and closes on a frame past the body limit; the episode is kept", async () => {
    const client = await Client.open(`${ws}/reverse-text/ws`);
    const reset = await client.send({ type: "reset", data: {} });
    client.socket.send(Buffer.from([1, 2, 3]));
    expect((await client.next()).data).toMatchObject({ code: "INVALID_JSON", edgegym_code: "malformed_json" });
    client.socket.send(JSON.stringify({ type: "step", data: { content: "x".repeat(70 * 1024) } }));
    expect(await client.closed).toBe(1009);
    const again = await Client.open(`${ws}/reverse-text/ws`);
    const resumed = await again.send({ type: "reset", data: { episode_id: reset.data.observation.episode_id } });
    expect(resumed.data.observation).toMatchObject({ turn: 0, resumed: true });
    again.socket.close();
  });

  it("two sockets on one episode: the stale one gets turn_conflict, then resyncs with reset", async () => {
    const a = await Client.open(`${ws}/tic-tac-toe/ws`);
    const id = (await a.send({ type: "reset", data: { seed: 2, args: { opponent: "random" } } })).data.observation.episode_id;
    const b = await Client.open(`${ws}/tic-tac-toe/ws`);
    expect((await b.send({ type: "reset", data: { episode_id: id } })).data.observation.turn).toBe(0);
    expect((await a.send({ type: "step", data: { content: "<move>5</move>" } })).data.observation.turn).toBe(1);
    const stale = await b.send({ type: "step", data: { content: "<move>1</move>" } });
    expect(stale.data).toMatchObject({ code: "EXECUTION_ERROR", edgegym_code: "turn_conflict", details: { episode_turn: 1 } });
    const synced = await b.send({ type: "reset", data: { episode_id: id } });
    expect(synced.data.observation.turn).toBe(1);
    expect((await b.send({ type: "step", data: { content: "<move>1</move>" } })).type).toBe("observation");
    expect((await a.send({ type: "state" })).data.step_count).toBe(2);
    // "close" ends the socket, not the episode.
    a.socket.send(JSON.stringify({ type: "close" }));
    expect(await a.closed).toBe(1000);
    expect((await b.send({ type: "state" })).data.status).toBe("active");
    b.socket.close();
  });

  it("continues an episode after the server restarts on the same database", async () => {
    const before = await Client.open(`${ws}/tic-tac-toe/ws`);
    const opening = (await before.send({ type: "reset", data: { seed: 2, args: { opponent: "random" } } })).data.observation;
    const one = await before.send({ type: "step", data: { content: "<move>5</move>" } });
    await server.close();
    expect(await before.closed).not.toBe(1000);
    await start();
    const after = await Client.open(`${ws}/tic-tac-toe/ws`);
    const resumed = (await after.send({ type: "reset", data: { episode_id: opening.episode_id } })).data.observation;
    expect(resumed).toMatchObject({ turn: 1, resumed: true });
    expect(resumed.messages.at(-1)).toEqual(one.data.observation.messages.at(-1));
    // Cells in order: a taken one is answered with feedback, and the game still ends within nine more moves.
    let frame = one;
    for (let cell = 1; !frame.data.done && cell <= 9; cell++) frame = await after.send({ type: "step", data: { content: `<move>${cell}</move>` } });
    expect(frame.data.done).toBe(true);
    expect(typeof frame.data.reward).toBe("number");
    after.socket.close();
  });
});
