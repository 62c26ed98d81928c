import { mkdtempSync, rmSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { startNodeServer, type RunningServer } from "../src/server/node/serve.js";
import type { ServerConfig } from "../src/server/context.js";

/*
 * The socket attacks of issue 32, each against the real Node entry (@hono/node-server + ws):
 * a client that sends without reading, a page of another origin, a rebound Host name, one
 * tenant hoarding sockets, and the refusals' bodies. Memory is a figure measured in this
 * process (the server runs in it), never a time.
 */

let dir: string | undefined;
let server: RunningServer | undefined;
const sockets: WebSocket[] = [];

afterEach(async () => {
  for (const s of sockets.splice(0)) s.terminate();
  await server?.close();
  server = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

async function start(config: Partial<ServerConfig> = {}): Promise<{ http: string; ws: string }> {
  dir = mkdtempSync(join(tmpdir(), "edgegym-hostile-ws-"));
  server = await startNodeServer({ port: 0, host: "127.0.0.1", dbPath: join(dir, "edgegym.db"), reapIntervalMs: 0, config });
  return { http: server.url, ws: server.url.replace("http", "ws") };
}

function open(url: string, headers: Record<string, string> = {}): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const s = new WebSocket(url, { headers });
    sockets.push(s);
    s.once("open", () => resolve(s));
    s.once("error", reject);
    s.once("unexpected-response", (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
  });
}

/** An upgrade the server refuses: its status, headers and whole body. */
function refused(url: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const s = new WebSocket(url, { headers });
    s.on("unexpected-response", (_req, res) => {
      let body = "";
      res.on("data", (chunk: Buffer) => (body += chunk.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    s.on("open", () => reject(new Error("the socket opened")));
    s.on("error", () => undefined);
  });
}

/** A GET with the given Host header (fetch will not send one of its own choosing). */
function getWithHost(url: string, host: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { ...headers, Host: host } }, (res) => {
      let body = "";
      res.on("data", (chunk: Buffer) => (body += chunk.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

const rssMb = (): number => process.memoryUsage().rss / 2 ** 20;

describe("hostile sockets on Node", () => {
  it("a client that sends 20,000 gets of a 61 kB episode without reading grows the server by megabytes, not gigabytes, and is dropped", async () => {
    const { http, ws } = await start({ socketDrainTimeoutMs: 2000 });
    const reset = await fetch(`${http}/v1/envs/reverse-text/episodes`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ index: 0, metadata: { blob: "x".repeat(60_000) } }),
    });
    const id = ((await reset.json()) as { episode_id: string }).episode_id;
    const client = await open(`${ws}/v1/ws`);
    let received = 0;
    client.on("message", () => received++);
    const closed = new Promise<number>((resolve) => client.on("close", (code) => resolve(code)));
    // Stop reading: the replies pile up in the server unless it stops producing them.
    client.pause();
    global.gc?.();
    const before = rssMb();
    let peak = before;
    for (let i = 0; i < 20_000; i++) {
      client.send(JSON.stringify({ id: i, op: "get", episode_id: id }));
      if (i % 500 === 0) {
        await new Promise((r) => setTimeout(r, 5));
        peak = Math.max(peak, rssMb());
      }
    }
    for (let i = 0; i < 40; i++) {
      await new Promise((r) => setTimeout(r, 25));
      peak = Math.max(peak, rssMb());
    }
    // Before backpressure the same run grew this process by over a gigabyte (20,000 × 61 kB queued).
    const grown = peak - before;
    console.log(`slow reader: 20,000 gets of a 61 kB episode, process RSS grew ${grown.toFixed(0)} MB`);
    expect(grown).toBeLessThan(256);
    // The server answers others meanwhile, and drops the socket whose peer never drains.
    expect((await fetch(`${http}/health`)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 2500));
    client.resume();
    expect(await closed).toBe(1006);
    // What did come back was a bounded number of whole replies and refusals, never 20,000 replies.
    expect(received).toBeLessThan(20_000);
  });

  it("refuses a socket upgrade from a page of another origin (403 origin_not_allowed, as JSON) and lets its own origin, listed ones and non-browsers in", async () => {
    const { ws } = await start({ allowedOrigins: ["https://console.example"] });
    for (const path of ["/v1/ws", "/openenv/reverse-text/ws"]) {
      const bad = await refused(`${ws}${path}`, { Origin: "https://evil.example" });
      expect(bad.status).toBe(403);
      const body = JSON.parse(bad.body) as { error?: { code: string }; detail?: { code: string } };
      expect(body.error?.code ?? body.detail?.code).toBe("origin_not_allowed");
      expect((await refused(`${ws}${path}`, { Origin: "null" })).status).toBe(403);
      await open(`${ws}${path}`);
      await open(`${ws}${path}`, { Origin: "https://console.example" });
      await open(`${ws}${path}`, { Origin: new URL(ws.replace("ws", "http")).origin });
    }
  });

  it("a keyless server refuses a Host name it does not know (DNS rebinding), on HTTP and sockets, and answers localhost and IP addresses", async () => {
    const { http, ws } = await start();
    const port = new URL(http).port;
    const rebound = await getWithHost(`${http}/v1/envs`, `attacker.example:${port}`);
    expect(rebound.status).toBe(403);
    expect((JSON.parse(rebound.body) as { error: { code: string } }).error.code).toBe("host_not_allowed");
    expect((await refused(`${ws}/v1/ws`, { Host: `attacker.example:${port}` })).status).toBe(403);
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `app.localhost:${port}`]) {
      expect((await getWithHost(`${http}/v1/envs`, host)).status).toBe(200);
    }
  });

  it("a server with API keys needs no Host check: a rebound page has no key", async () => {
    const { http } = await start({ apiKeys: ["alice:sk-alice-host"] });
    const port = new URL(http).port;
    const res = await getWithHost(`${http}/v1/envs`, `gym.example:${port}`, { Authorization: "Bearer sk-alice-host" });
    expect(res.status).toBe(200);
  });

  it("one tenant cannot hold every socket: the sockets quota counts both wires, 429 with a JSON body, and another tenant still gets in", async () => {
    const { ws } = await start({ apiKeys: ["alice:sk-alice-q", "bob:sk-bob-q"], quotas: { ...(await import("../src/server/tenants/quotas.js")).DEFAULT_QUOTAS, maxSockets: 3 } });
    const alice = { Authorization: "Bearer sk-alice-q" };
    const bob = { Authorization: "Bearer sk-bob-q" };
    const first = await open(`${ws}/v1/ws`, alice);
    await open(`${ws}/v1/ws`, alice);
    await open(`${ws}/openenv/reverse-text/ws`, alice);
    for (const path of ["/v1/ws", "/openenv/reverse-text/ws"]) {
      const over = await refused(`${ws}${path}`, alice);
      expect(over.status).toBe(429);
      expect(over.headers["retry-after"]).toBe("5");
      const body = JSON.parse(over.body) as { error?: { code: string; details: { quota: string; limit: number } }; detail?: { code: string } };
      if (path === "/v1/ws") expect(body.error).toMatchObject({ code: "rate_limited", details: { quota: "sockets", limit: 3 } });
      else expect(body.detail?.code ?? body.error?.code).toBe("rate_limited");
    }
    await open(`${ws}/v1/ws`, bob);
    first.close();
    await new Promise<void>((resolve) => first.once("close", () => resolve()));
    await new Promise((r) => setTimeout(r, 50));
    await open(`${ws}/openenv/reverse-text/ws`, alice);
  });

  it("past the process's socket cap the 503 carries the service_unavailable body and Retry-After; the OpenEnv cap is its own setting", async () => {
    const { ws } = await start({ socketMaxOpen: 1, openEnvSocketMaxOpen: 1 });
    await open(`${ws}/v1/ws`);
    const full = await refused(`${ws}/v1/ws`);
    expect(full.status).toBe(503);
    expect(full.headers["retry-after"]).toBe("5");
    expect(full.headers["content-type"]).toMatch(/application\/json/);
    expect((JSON.parse(full.body) as { error: { code: string } }).error.code).toBe("service_unavailable");
    await open(`${ws}/openenv/reverse-text/ws`);
    expect((await refused(`${ws}/openenv/reverse-text/ws`)).status).toBe(503);
  });
});
