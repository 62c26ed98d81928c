// The socket attacks of `npm run bench:abuse` (bench/abuse.ts): clients that ask for large
// replies and never read them, over the session socket (`/v1/ws`) and, for comparison,
// pipelined over HTTP/1.1; and a tenant that takes every socket the server will give.
// Each attack is bounded in count (frames, requests, sockets) and in time, and connects to
// 127.0.0.1 only. What a non-reading client costs the server shows in its RSS, which
// bench/abuse.ts samples: the replies it cannot send are Buffers outside the V8 heap, so
// the heap cap does not bound them.
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { connect } from "node:net";
import { request } from "undici";
import WebSocket from "ws";

/** What a socket attack got, for the table. */
export interface SocketAttackResult {
  answers: string;
  hoarding?: HoardingFigures;
}

/** An attack that drives its own connections; bench/abuse.ts probes /health and samples RSS meanwhile. */
export interface SocketAttack {
  name: string;
  /** Added to the server's environment (API keys). */
  serverEnv?: Record<string, string>;
  /** Attacks `url` until `until` (performance.now() ms), or a bounded time past it while it opens its sockets. */
  run(url: string, until: number): Promise<SocketAttackResult>;
}

export interface HoardingFigures {
  /** The open-file limit of this process (the server inherits it), when /proc says. */
  fdLimit: number | null;
  aTried: number;
  aOpened: number;
  aRefused: string;
  bOpened: number;
  bTried: number;
  bRefused: string;
}

/** Frames (or pipelined requests) each attacking connection sends. */
const GETS = 40_000;
/** What the metadata of the episode they read adds to it: a GET of it is ~61 kB. */
const BLOB = "x".repeat(60_000);
/** Sockets tenant A asks for at most, and tenant B's tries once A is done. */
const HOARD_MAX = 5_000;
const HOARD_B = 10;
/** Upgrades tenant A sends at once: the first batch with a refusal is its last. */
const HOARD_BATCH = 50;
/** File descriptors left to everything else (the database, the probe, the log). */
const FD_RESERVE = 256;
const HANDSHAKE_TIMEOUT_MS = 5_000;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const tally = (m: Map<string, number>, key: string, n = 1): void => void m.set(key, (m.get(key) ?? 0) + n);
const counts = (m: Map<string, number>): string => [...m].map(([k, n]) => `${k}×${n}`).join(" ");

/** The soft open-file limit (`ulimit -n`) of this process, which a spawned server inherits; null off Linux. */
export function openFileLimit(): number | null {
  try {
    const m = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync("/proc/self/limits", "utf8"));
    if (!m) return null;
    return m[1] === "unlimited" ? Number.POSITIVE_INFINITY : Number(m[1]);
  } catch {
    return null;
  }
}

/** Resets a reverse-text episode carrying a 60 kB metadata blob; returns its id. */
async function bigEpisode(url: string, headers: Record<string, string> = {}): Promise<string> {
  const res = await request(`${url}/v1/envs/reverse-text/episodes`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ split: "train", index: 0, metadata: { blob: BLOB } }),
  });
  const text = await res.body.text();
  const id = res.statusCode === 201 ? (JSON.parse(text) as { episode_id?: string }).episode_id : undefined;
  if (!id) throw new Error(`reset of the large episode answered ${res.statusCode}: ${text.slice(0, 300)}`);
  const got = await request(`${url}/v1/episodes/${id}`, { headers });
  console.error(`large episode ${id}: GET is ${(Buffer.byteLength(await got.body.text()) / 1000).toFixed(1)} kB (${got.statusCode})`);
  return id;
}

type Opened = { ws: WebSocket } | { refused: string };

/** Opens /v1/ws: the socket, or why not (the upgrade's status, or the error's code). Settles within the handshake timeout. */
function openSocket(url: string, headers: Record<string, string> = {}): Promise<Opened> {
  return new Promise((resolve) => {
    const ws = new WebSocket(`${url.replace(/^http/, "ws")}/v1/ws`, { headers, perMessageDeflate: false, handshakeTimeout: HANDSHAKE_TIMEOUT_MS });
    let settled = false;
    const settle = (r: Opened): void => {
      if (settled) return;
      settled = true;
      resolve(r);
    };
    ws.once("open", () => settle({ ws }));
    ws.once("unexpected-response", (req, res) => {
      settle({ refused: String(res.statusCode) });
      res.resume();
      req.destroy();
    });
    // Stays on for the socket's life: a reset or a write after the server dropped it is expected here.
    ws.on("error", (err: Error & { code?: string }) => settle({ refused: err.code ?? err.name }));
  });
}

/** Sends up to GETS get frames on `ws` as fast as it takes them, yielding between batches so the prober runs. */
async function sendGets(ws: WebSocket, episodeId: string, until: number): Promise<number> {
  let sent = 0;
  while (sent < GETS && performance.now() < until && ws.readyState === WebSocket.OPEN) {
    const end = Math.min(GETS, sent + 500);
    for (; sent < end; sent++) ws.send(`{"id":${sent},"op":"get","episode_id":"${episodeId}"}`);
    await new Promise((r) => setImmediate(r));
  }
  return sent;
}

/** What the client still held unsent at the end: a server that stops reading a peer that does not read pushes back this far. */
const unsentNote = (bytes: number): string => (bytes > 0 ? ` (${(bytes / 1e6).toFixed(1)} MB still unsent)` : "");

/** Waits until `done()` or `until`, polling. */
async function waitFor(until: number, done: () => boolean = () => false): Promise<void> {
  while (!done() && performance.now() < until) await sleep(Math.min(20, Math.max(1, until - performance.now())));
}

/**
 * `sockets` session sockets, each sending GETS gets of a ~61 kB episode. A paused client
 * reads nothing, so every reply the server makes has to wait in the server; a reading one
 * takes each reply (counted by its status; most are refused as busy at the in-flight cap).
 */
function socketGets(reading: boolean, sockets: number): SocketAttack {
  return {
    name: reading ? `reading socket ×${sockets}, 40k gets of 61 kB` : `slow-reader socket ×${sockets}, 40k gets of 61 kB`,
    async run(url, until) {
      const episode = await bigEpisode(url);
      const opened = await Promise.all(Array.from({ length: sockets }, () => openSocket(url)));
      const statuses = new Map<string, number>();
      const live = opened.flatMap((o) => ("ws" in o ? [o.ws] : (tally(statuses, `refused ${o.refused}`), [])));
      let received = 0;
      for (const ws of live) {
        // ws.pause() stops reading the TCP socket itself: the kernel's buffers fill, then the server's.
        if (!reading) ws.pause();
        ws.on("message", (data: Buffer) => {
          received++;
          tally(statuses, /"status":(\d+)/.exec(data.subarray(0, 64).toString("latin1"))?.[1] ?? "?");
        });
        ws.on("close", (code) => tally(statuses, `closed ${code}`));
        ws.on("error", (err: Error & { code?: string }) => tally(statuses, err.code ?? err.name));
      }
      const sent = (await Promise.all(live.map((ws) => sendGets(ws, episode, until)))).reduce((a, b) => a + b, 0);
      // A reader is done when every reply is in; a paused one holds its socket (and the server its replies) to the end.
      await waitFor(until, () => reading && received >= sent);
      // Read before terminate(), whose own close (1006) is not the server's doing.
      const got = reading ? counts(statuses) : [counts(statuses), "nothing read"].filter(Boolean).join(", ");
      const unsent = live.reduce((n, ws) => n + ws.bufferedAmount, 0);
      for (const ws of live) ws.terminate();
      return { answers: `${sent} sent${unsentNote(unsent)}; ${got}` };
    },
  };
}

/** The same gets over HTTP/1.1: `connections` raw sockets, each writing GETS pipelined requests and reading nothing. */
function pipelinedGets(connections: number): SocketAttack {
  return {
    name: `HTTP/1.1 pipelined ×${connections}, 40k gets of 61 kB, unread`,
    async run(url, until) {
      const episode = await bigEpisode(url);
      const { hostname, port, host } = new URL(url);
      const batch = `GET /v1/episodes/${episode} HTTP/1.1\r\nHost: ${host}\r\n\r\n`.repeat(500);
      const errors = new Map<string, number>();
      const one = async (): Promise<number> => {
        const socket = connect({ host: hostname, port: Number(port) });
        socket.on("error", (err: Error & { code?: string }) => tally(errors, err.code ?? err.name));
        socket.pause();
        let sent = 0;
        try {
          await new Promise<void>((resolve, reject) => {
            socket.once("connect", resolve);
            socket.once("error", reject);
          });
          while (sent < GETS && performance.now() < until && socket.writable) {
            socket.write(batch);
            sent += 500;
            await new Promise((r) => setImmediate(r));
          }
          await waitFor(until);
        } catch {
          // counted by the error listener
        } finally {
          unsent += socket.writableLength;
          socket.destroy();
        }
        return sent;
      };
      let unsent = 0;
      const sent = (await Promise.all(Array.from({ length: connections }, one))).reduce((a, b) => a + b, 0);
      return { answers: [`${sent} sent${unsentNote(unsent)}, nothing read`, counts(errors)].filter(Boolean).join("; ") };
    },
  };
}

/**
 * Two tenants on a keyed server: A opens /v1/ws sockets, HOARD_BATCH at a time, until the
 * first refusal (or HOARD_MAX, or what the open-file limit leaves room for: the bench and
 * the server each need a descriptor per socket) and keeps them; then B tries HOARD_B.
 */
function socketHoarding(): SocketAttack {
  const keyA = randomBytes(16).toString("hex");
  const keyB = randomBytes(16).toString("hex");
  return {
    name: "socket-hoarding tenant (A takes all, B asks for 10)",
    serverEnv: { EDGEGYM_API_KEYS: `tenant-a:${keyA},tenant-b:${keyB}` },
    async run(url, until) {
      const fdLimit = openFileLimit();
      const cap = fdLimit === null ? HOARD_MAX : Math.max(0, Math.min(HOARD_MAX, fdLimit - HOARD_B - FD_RESERVE));
      if (cap < HOARD_MAX) console.error(`open-file limit ${fdLimit} (ulimit -n): tenant A tries at most ${cap} sockets, not ${HOARD_MAX}; raise it (ulimit -n 10240) for the full count`);
      // Opening thousands of sockets may outlast a short run: bounded on its own, at least 30 s.
      const openUntil = Math.max(until, performance.now() + 30_000);
      const held: WebSocket[] = [];
      const aRefused = new Map<string, number>();
      let aTried = 0;
      while (aTried < cap && aRefused.size === 0 && performance.now() < openUntil) {
        const n = Math.min(HOARD_BATCH, cap - aTried);
        aTried += n;
        for (const o of await Promise.all(Array.from({ length: n }, () => openSocket(url, { authorization: `Bearer ${keyA}` })))) {
          if ("ws" in o) held.push(o.ws);
          else tally(aRefused, o.refused);
        }
      }
      const bRefused = new Map<string, number>();
      let bOpened = 0;
      for (const o of await Promise.all(Array.from({ length: HOARD_B }, () => openSocket(url, { authorization: `Bearer ${keyB}` })))) {
        if ("ws" in o) {
          bOpened++;
          held.push(o.ws);
        } else tally(bRefused, o.refused);
      }
      // Hold them all while the window lasts: what the server pays for idle sockets shows in its RSS.
      await waitFor(until);
      const aOpened = held.length - bOpened;
      for (const ws of held) ws.terminate();
      const hoarding: HoardingFigures = { fdLimit, aTried, aOpened, aRefused: counts(aRefused) || "none", bOpened, bTried: HOARD_B, bRefused: counts(bRefused) || "none" };
      return { answers: `A opened ${aOpened} of ${aTried} (refused ${hoarding.aRefused}); B opened ${bOpened} of ${HOARD_B} (refused ${hoarding.bRefused})`, hoarding };
    },
  };
}

/** The socket attacks, in table order. */
export function socketAttacks(attackers: number): SocketAttack[] {
  return [socketGets(false, attackers), socketGets(true, attackers), pipelinedGets(attackers), socketHoarding()];
}
