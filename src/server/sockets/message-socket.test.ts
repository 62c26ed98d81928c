import { serve, upgradeWebSocket, type ServerType } from "@hono/node-server";
import { Hono } from "hono";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket, WebSocketServer } from "ws";
import type { AppEnv } from "../context.js";
import { handleError } from "../errors.js";
import { messageSocket, type FrameProblem, type MessageSession, type MessageSocketLimits } from "./message-socket.js";

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

let servers: { server: ServerType; sockets: WebSocketServer }[] = [];
afterEach(async () => {
  for (const { server, sockets } of servers) {
    for (const s of sockets.clients) s.terminate();
    await new Promise((r) => server.close(r));
  }
  servers = [];
});

async function start(limits: Partial<MessageSocketLimits> = {}): Promise<string> {
  const app = new Hono<AppEnv>();
  app.get("/ws", messageSocket(upgradeWebSocket, () => new CountingSession(), { maxMessageBytes: 1000, maxQueued: 4, maxOpen: 100, idleMs: 60_000, ...limits }));
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
});
