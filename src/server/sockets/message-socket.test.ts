import { serve, upgradeWebSocket, type ServerType } from "@hono/node-server";
import { Hono } from "hono";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket, WebSocketServer } from "ws";
import type { AppEnv } from "../context.js";
import { handleError } from "../errors.js";
import type { WSContext } from "hono/ws";
import { wsSocketFlow } from "../node/ws-flow.js";
import type { SocketFlow } from "./socket-flow.js";
import { messageSocket, validateSocketLimits, type FrameProblem, type MessageSession, type MessageSocketLimits } from "./message-socket.js";

/** A session that answers each frame with its sequence number, after a delay the frame names. */
class CountingSession implements MessageSession {
  private seen = 0;
  async receive(text: string) {
    const { wait = 0, close = false } = JSON.parse(text) as { wait?: number; close?: boolean };
    await new Promise((r) => setTimeout(r, wait));
    return { send: [String(++this.seen)], close };
  }
  refuse(problem: FrameProblem) {
    return `refused ${problem.kind}`;
  }
}

/**
 * A session whose frames each wait for the test to release them by name, so a test can hold
 * any number of requests in flight without relying on how long anything takes.
 */
class GatedSession implements MessageSession {
  static readonly gates = new Map<string, () => void>();
  async receive(text: string) {
    const { name } = JSON.parse(text) as { name: string };
    await new Promise<void>((resolve) => GatedSession.gates.set(name, resolve));
    return { send: [name] };
  }
  refuse(problem: FrameProblem, text?: string) {
    return `refused ${problem.kind} ${text ?? ""}`;
  }
}

/** `ws`'s flow control, counting what the socket layer asked of it. */
function recordingFlow(): SocketFlow & { pauses: number; resumes: number; terminated: number } {
  const flow = {
    ...wsSocketFlow,
    pauses: 0,
    resumes: 0,
    terminated: 0,
    pause: (ws: WSContext) => {
      flow.pauses++;
      wsSocketFlow.pause(ws);
    },
    resume: (ws: WSContext) => {
      flow.resumes++;
      wsSocketFlow.resume(ws);
    },
    terminate: (ws: WSContext) => {
      flow.terminated++;
      wsSocketFlow.terminate(ws);
    },
  };
  return flow;
}

/** A session whose every reply is large: a peer that does not read fills the server's output fast. */
class BulkySession implements MessageSession {
  private seen = 0;
  constructor(private readonly bytes: number) {}
  async receive() {
    return { send: [`${++this.seen} ${"x".repeat(this.bytes)}`] };
  }
  refuse(problem: FrameProblem) {
    return `refused ${problem.kind}`;
  }
}

/** Resolves once the server has handed frame `name` to its session. */
async function arrived(name: string): Promise<void> {
  while (!GatedSession.gates.has(name)) await new Promise((r) => setImmediate(r));
}

let servers: { server: ServerType; sockets: WebSocketServer }[] = [];
afterEach(async () => {
  for (const { server, sockets } of servers) {
    for (const s of sockets.clients) s.terminate();
    await new Promise((r) => server.close(r));
  }
  servers = [];
});

async function start(limits: Partial<MessageSocketLimits> = {}, session: () => MessageSession = () => new CountingSession(), flow: SocketFlow = wsSocketFlow): Promise<string> {
  const app = new Hono<AppEnv>();
  app.get("/ws", messageSocket(upgradeWebSocket, session, { maxMessageBytes: 1000, maxQueued: 4, maxOpen: 100, idleMs: 60_000, ...limits }, { flow }));
  app.onError(handleError);
  const sockets = new WebSocketServer({ noServer: true });
  const server = await new Promise<ServerType>((resolve) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1", websocket: { server: sockets } }, () => resolve(s));
  });
  servers.push({ server, sockets });
  return `ws://127.0.0.1:${(server.address() as AddressInfo).port}/ws`;
}

async function connect(url: string): Promise<{ socket: WebSocket; frames: string[]; closed: Promise<number>; next(): Promise<string> }> {
  const socket = new WebSocket(url);
  const frames: string[] = [];
  const waiting: ((s: string) => void)[] = [];
  socket.on("message", (raw) => {
    const next = waiting.shift();
    if (next) next(String(raw));
    else frames.push(String(raw));
  });
  const closed = new Promise<number>((resolve) => socket.on("close", (code) => resolve(code)));
  await new Promise((resolve, reject) => {
    socket.once("open", resolve);
    socket.once("error", reject);
  });
  return { socket, frames, closed, next: () => Promise.resolve(frames.shift() ?? new Promise<string>((r) => waiting.push(r))) };
}

describe("messageSocket", () => {
  it("answers frames one at a time in the order sent, even when an earlier one is slower", async () => {
    const c = await connect(await start());
    c.socket.send(JSON.stringify({ wait: 50 }));
    c.socket.send(JSON.stringify({ wait: 0 }));
    c.socket.send(JSON.stringify({ wait: 10 }));
    expect([await c.next(), await c.next(), await c.next()]).toEqual(["1", "2", "3"]);
  });

  it("refuses binary frames, frames over the size limit and frames past the queue, without passing them on", async () => {
    const c = await connect(await start());
    c.socket.send(Buffer.from("{}"));
    expect(await c.next()).toBe("refused binary");
    c.socket.send(JSON.stringify({ pad: "é".repeat(600) }));
    expect(await c.next()).toBe("refused too_large");
    for (let i = 0; i < 6; i++) c.socket.send(JSON.stringify({ wait: 30 }));
    const replies = await Promise.all(Array.from({ length: 6 }, () => c.next()));
    expect(replies.filter((r) => r === "refused busy")).toHaveLength(2);
    expect(replies.filter((r) => r !== "refused busy")).toEqual(["1", "2", "3", "4"]);
  });

  it("closes when the session asks, after its reply", async () => {
    const c = await connect(await start());
    c.socket.send(JSON.stringify({ close: true }));
    expect(await c.next()).toBe("1");
    expect(await c.closed).toBe(1000);
  });

  it("closes a socket left idle", async () => {
    const c = await connect(await start({ idleMs: 100 }));
    expect(await c.closed).toBe(1001);
  });

  it("answers 503 with Retry-After past the open-socket limit, and admits again once one closes", async () => {
    const url = await start({ maxOpen: 2 });
    const a = await connect(url);
    await connect(url);
    const refused = await new Promise<{ status: number; retry: string | undefined }>((resolve, reject) => {
      const s = new WebSocket(url);
      s.on("unexpected-response", (_req, res) => resolve({ status: res.statusCode ?? 0, retry: res.headers["retry-after"] as string | undefined }));
      s.on("open", () => reject(new Error("a third socket opened")));
      s.on("error", () => undefined);
    });
    expect(refused).toEqual({ status: 503, retry: "5" });
    a.socket.close();
    await a.closed;
    await new Promise((r) => setTimeout(r, 50));
    const again = await connect(url);
    again.socket.send("{}");
    expect(await again.next()).toBe("1");
  });

  it("in concurrent ordering hands every frame over at once and answers each when it is done, in any order", async () => {
    GatedSession.gates.clear();
    const c = await connect(await start({ ordering: "concurrent" }, () => new GatedSession()));
    for (const name of ["a", "b", "c"]) c.socket.send(JSON.stringify({ name }));
    // All three are running together: none has been answered, and each can be released first.
    await Promise.all(["a", "b", "c"].map(arrived));
    GatedSession.gates.get("c")?.();
    expect(await c.next()).toBe("c");
    GatedSession.gates.get("a")?.();
    expect(await c.next()).toBe("a");
    GatedSession.gates.get("b")?.();
    expect(await c.next()).toBe("b");
  });

  it("in concurrent ordering refuses a frame past the in-flight limit, with its text, and admits again once one is answered", async () => {
    GatedSession.gates.clear();
    const c = await connect(await start({ ordering: "concurrent", maxQueued: 3 }, () => new GatedSession()));
    for (const name of ["a", "b", "c"]) c.socket.send(JSON.stringify({ name }));
    await Promise.all(["a", "b", "c"].map(arrived));
    // Three are held in the session, so the fourth is refused whenever it arrives.
    c.socket.send(JSON.stringify({ name: "d" }));
    expect(await c.next()).toBe('refused busy {"name":"d"}');
    GatedSession.gates.get("b")?.();
    expect(await c.next()).toBe("b");
    c.socket.send(JSON.stringify({ name: "e" }));
    await arrived("e");
    for (const name of ["a", "c", "e"]) GatedSession.gates.get(name)?.();
    expect(new Set([await c.next(), await c.next(), await c.next()])).toEqual(new Set(["a", "c", "e"]));
  });

  it("stops reading a peer whose unread output is over the limit, and reads again (answering every frame once) when it drains", async () => {
    const flow = recordingFlow();
    // 64 replies of 300 kB: more than the kernel's socket buffers on both ends can take.
    const c = await connect(await start({ ordering: "concurrent", maxQueued: 64, maxBufferedBytes: 100_000 }, () => new BulkySession(300_000), flow));
    c.socket.pause();
    for (let i = 0; i < 64; i++) c.socket.send("{}");
    while (flow.pauses === 0) await new Promise((r) => setTimeout(r, 10));
    // Sent while the server is not reading: it waits in TCP, not in the server.
    c.socket.send("{}");
    c.socket.resume();
    while (c.frames.length < 65) await new Promise((r) => setTimeout(r, 10));
    expect(flow.resumes).toBeGreaterThan(0);
    expect(c.frames.every((f) => /^\d+ x+$/.test(f) || f === "refused backlog")).toBe(true);
    await new Promise((r) => setTimeout(r, 50));
    expect(c.frames).toHaveLength(65);
  });

  it("drops a peer that leaves its output unread past the drain timeout", async () => {
    const flow = recordingFlow();
    const c = await connect(await start({ ordering: "concurrent", maxQueued: 64, maxBufferedBytes: 100_000, drainTimeoutMs: 200 }, () => new BulkySession(300_000), flow));
    c.socket.pause();
    for (let i = 0; i < 64; i++) c.socket.send("{}");
    while (flow.terminated === 0) await new Promise((r) => setTimeout(r, 10));
    c.socket.resume();
    expect(await c.closed).toBe(1006);
  });

  it("refuses limits that are not positive whole numbers, and an unknown ordering, when the route is built", () => {
    const good: MessageSocketLimits = { maxMessageBytes: 1000, maxQueued: 4, maxOpen: 100, idleMs: 60_000 };
    expect(() => validateSocketLimits(good)).not.toThrow();
    for (const bad of [{ maxQueued: 0 }, { maxOpen: -1 }, { maxMessageBytes: 1.5 }, { idleMs: Number.NaN }, { maxQueued: Number.POSITIVE_INFINITY }, { maxBufferedBytes: 0 }, { drainTimeoutMs: -5 }]) {
      expect(() => validateSocketLimits({ ...good, ...bad })).toThrow(RangeError);
      expect(() => messageSocket(upgradeWebSocket, () => new CountingSession(), { ...good, ...bad })).toThrow(/must be a positive whole number/);
    }
    expect(() => validateSocketLimits({ ...good, ordering: "random" as "serial" })).toThrow(/ordering/);
  });
});
