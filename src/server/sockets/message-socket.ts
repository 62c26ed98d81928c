import type { Context, MiddlewareHandler } from "hono";
import type { UpgradeWebSocket, WSContext } from "hono/ws";
import type { AppEnv } from "../context.js";
import { ApiError } from "../errors.js";
import { quotaExceeded } from "../tenants/quotas.js";
import { UNMETERED_FLOW, type SocketFlow } from "./socket-flow.js";

/**
 * One conversation over a WebSocket, protocol-agnostic: text in, text out. The OpenEnv
 * wire (src/server/openenv) is one; a native edgegym session protocol can be another.
 * Nothing durable lives here: a session holds at most which episode it is attached to,
 * and the episode itself is in the database, so a dropped socket loses nothing.
 */
export interface MessageSession {
  /** Handles one text frame. `send` goes out in order; `close` ends the socket after it. */
  receive(text: string): Promise<SessionReply>;
  /**
   * A frame this layer refused before the session saw it, as a text frame in the session's
   * own error shape. `text` is the refused frame when it was within the size limit (a
   * session may read a request id from it), never for `too_large` or `binary`.
   */
  refuse(problem: FrameProblem, text?: string): string;
  /** The socket is gone, closed by either side. */
  ended?(): void;
}

export interface SessionReply {
  send: string[];
  close?: boolean;
}

/**
 * Why a frame never reached the session: too big, binary, sent while too many were still
 * waiting, or sent while the socket's own output was backed up (its peer is not reading).
 */
export type FrameProblem =
  | { kind: "too_large"; bytes: number; limit: number }
  | { kind: "binary" }
  | { kind: "busy"; queued: number; limit: number }
  | { kind: "backlog"; buffered: number; limit: number };

export interface MessageSocketLimits {
  /** Largest text frame, in UTF-8 bytes; the Node server also caps frames at the socket (ws `maxPayload`). */
  maxMessageBytes: number;
  /** Frames received and not yet answered; past it a frame is refused (a client must wait for replies). */
  maxQueued: number;
  /** Sockets open at once through this handler (in this process or isolate); past it an upgrade is 503 with Retry-After. */
  maxOpen: number;
  /** A socket with no frame for this long is closed (1001); the client reconnects when it needs to. */
  idleMs: number;
  /**
   * Reply bytes a socket may hold unsent (the peer reads slower than it asks). Past it the
   * socket stops reading the peer's frames, refuses those already read (`backlog`), and
   * reads again once half of it has drained. Default 1 MiB.
   */
  maxBufferedBytes?: number;
  /** A socket over `maxBufferedBytes` for this long is dropped: its peer is not reading. Default 30 s. */
  drainTimeoutMs?: number;
  /**
   * `serial` (the default): one frame at a time, answered in the order sent (a session that
   * keeps per-connection state, like OpenEnv's). `concurrent`: every admitted frame is handed
   * to the session at once and answered when it is done, so replies may come out of order
   * (the session tags them; edgegym's own `/v1/ws` does). `maxQueued` bounds both.
   */
  ordering?: "serial" | "concurrent";
}

/** Sockets per tenant, shared by every socket route of the app (one count across both wires). */
export interface TenantSocketSlots {
  readonly limit: number | null;
  inUse(tenant: string): number;
  /** Takes a slot; false at the limit. Each success is given back with `release` exactly once. */
  tryAcquire(tenant: string): boolean;
  release(tenant: string): void;
}

export interface MessageSocketOptions {
  /** The runtime's view of a socket's output (`AppDeps.socketFlow`); without it output is not metered. */
  flow?: SocketFlow;
  /** The per-tenant socket quota; past it an upgrade is 429 `rate_limited` with `details.quota` "sockets". */
  tenantSlots?: TenantSocketSlots;
}

export const DEFAULT_MAX_BUFFERED_BYTES = 1024 * 1024;
export const DEFAULT_DRAIN_TIMEOUT_MS = 30_000;
/** While a socket is over its output limit, how often it looks whether the peer has drained it. */
const DRAIN_POLL_MS = 20;

/** Throws on a limit that is not a positive whole number, so a bad setting fails at startup, not under load. */
export function validateSocketLimits(limits: MessageSocketLimits): void {
  for (const key of ["maxMessageBytes", "maxQueued", "maxOpen", "idleMs", "maxBufferedBytes", "drainTimeoutMs"] as const) {
    const value = limits[key];
    if (value === undefined && (key === "maxBufferedBytes" || key === "drainTimeoutMs")) continue; // their defaults apply
    if (value === undefined || !Number.isSafeInteger(value) || value < 1) throw new RangeError(`socket limit ${key} must be a positive whole number, got ${String(value)}`);
  }
  if (limits.ordering !== undefined && limits.ordering !== "serial" && limits.ordering !== "concurrent") {
    throw new RangeError(`socket ordering must be "serial" or "concurrent", got ${String(limits.ordering)}`);
  }
}

const encoder = new TextEncoder();

/**
 * A route handler that upgrades to a WebSocket and feeds its frames to the session `open`
 * makes for the request (after auth middleware has run, so `c.get("tenant")` is set). In
 * `serial` ordering (the default) frames are answered strictly in order, so a session never
 * sees two messages at once; in `concurrent` ordering each is handled as it arrives.
 * `upgrade` is the runtime's: `upgradeWebSocket` from `@hono/node-server` on Node, from
 * `hono/cloudflare-workers` on Workers; `options.flow` its view of a socket's output.
 *
 * What one socket can make the server hold is bounded three ways: frames waiting or running
 * (`maxQueued`), reply bytes not yet taken by the peer (`maxBufferedBytes`: past it the
 * socket stops reading, so a peer that sends without reading is pushed back by TCP), and
 * time (`drainTimeoutMs`: a peer that leaves output unread that long is dropped). Before
 * these, a client that stopped reading could make the server queue replies without end
 * (40,000 gets of a 61 kB episode grew the process by 1.7 GB).
 *
 * @example app.get("/openenv/:env/ws", messageSocket(upgradeWebSocket, (c) => new MySession(c), { maxMessageBytes: 1 << 20, maxQueued: 8, maxOpen: 64, idleMs: 60_000 }))
 */
export function messageSocket(
  upgrade: UpgradeWebSocket,
  open: (c: Context<AppEnv>) => MessageSession,
  limits: MessageSocketLimits,
  options: MessageSocketOptions = {},
): MiddlewareHandler<AppEnv> {
  validateSocketLimits(limits);
  const concurrent = limits.ordering === "concurrent";
  const flow = options.flow ?? UNMETERED_FLOW;
  const slots = options.tenantSlots;
  const maxBuffered = limits.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES;
  const drainTimeoutMs = limits.drainTimeoutMs ?? DEFAULT_DRAIN_TIMEOUT_MS;
  let openSockets = 0;
  const upgradeTo = upgrade((c: Context) => {
    const session = open(c as Context<AppEnv>);
    const tenant = (c as Context<AppEnv>).get("tenant")?.name ?? "";
    let queue: Promise<void> = Promise.resolve();
    let queued = 0;
    let closed = false;
    let counted = false;
    let idle: ReturnType<typeof setTimeout> | undefined;
    let lastActive = 0;
    let idleSocket: WSContext | undefined;
    // Set while the socket's output is over the limit: reading is paused and frames already read are refused.
    let backedUpSince: number | undefined;
    let drainPoll: ReturnType<typeof setInterval> | undefined;
    const send = (ws: WSContext, text: string): void => {
      // readyState 1 = OPEN; a reply for a socket that has gone is dropped (the episode already holds it).
      if (!closed && ws.readyState === 1) ws.send(text);
    };
    const drop = (ws: WSContext): void => {
      if (closed) return;
      flow.terminate(ws);
      finish();
    };
    const watchDrain = (ws: WSContext): void => {
      if (backedUpSince !== undefined || closed) return;
      backedUpSince = Date.now();
      flow.pause(ws);
      drainPoll = setInterval(() => {
        if (closed) return;
        if (flow.buffered(ws) <= maxBuffered / 2) {
          clearInterval(drainPoll);
          drainPoll = undefined;
          backedUpSince = undefined;
          flow.resume(ws);
        } else if (Date.now() - (backedUpSince ?? 0) >= drainTimeoutMs) {
          drop(ws);
        }
      }, DRAIN_POLL_MS);
    };
    /** After output: a socket whose peer has stopped taking it stops reading until it does. */
    const checkOutput = (ws: WSContext): void => {
      if (flow.metered && flow.buffered(ws) > maxBuffered) watchDrain(ws);
    };
    // One timer per socket, re-armed only when it fires: a frame just notes the time (a
    // clearTimeout + setTimeout per frame was ~3% of a step's server CPU on /v1/ws).
    const checkIdle = (): void => {
      idle = undefined;
      if (closed || !idleSocket) return;
      const left = lastActive + limits.idleMs - Date.now();
      if (left <= 0) idleSocket.close(1001, "idle");
      else idle = setTimeout(checkIdle, left);
    };
    const armIdle = (ws: WSContext): void => {
      idleSocket = ws;
      lastActive = Date.now();
      idle ??= setTimeout(checkIdle, limits.idleMs);
    };
    const finish = (): void => {
      if (closed) return;
      closed = true;
      if (idle !== undefined) clearTimeout(idle);
      if (drainPoll !== undefined) clearInterval(drainPoll);
      if (counted) {
        openSockets--;
        slots?.release(tenant);
      }
      counted = false;
      session.ended?.();
    };
    // Counted from its first sign of life: Node fires onOpen once the handshake is done (an
    // upgrade that fails never does), Hono's Cloudflare adapter fires no onOpen at all. The
    // upgrade was admitted under both limits, but handshakes racing each other can all pass
    // that check: one that finds the limits taken by now is closed (1013, try again later).
    const begin = (ws: WSContext): boolean => {
      if (closed) return false;
      if (!counted) {
        if (openSockets >= limits.maxOpen || (slots && !slots.tryAcquire(tenant))) {
          closed = true;
          ws.close(1013, "over the socket limit; retry later");
          session.ended?.();
          return false;
        }
        openSockets++;
        counted = true;
      }
      armIdle(ws);
      return true;
    };
    return {
      onOpen(_event, ws) {
        begin(ws);
      },
      onMessage(event, ws) {
        if (!begin(ws)) return;
        const data = event.data;
        if (typeof data !== "string") {
          send(ws, session.refuse({ kind: "binary" }));
          return;
        }
        // A UTF-8 byte is at least one UTF-16 unit and a unit at most three bytes: count only when it matters.
        const bytes = data.length * 3 <= limits.maxMessageBytes ? data.length : encoder.encode(data).length;
        if (bytes > limits.maxMessageBytes) {
          send(ws, session.refuse({ kind: "too_large", bytes, limit: limits.maxMessageBytes }));
          return;
        }
        // Frames read before the pause took hold (one TCP read can carry hundreds) are refused, small, not run.
        if (backedUpSince !== undefined) {
          send(ws, session.refuse({ kind: "backlog", buffered: flow.buffered(ws), limit: maxBuffered }, data));
          return;
        }
        if (queued >= limits.maxQueued) {
          send(ws, session.refuse({ kind: "busy", queued, limit: limits.maxQueued }, data));
          checkOutput(ws);
          return;
        }
        queued++;
        const handle = async (): Promise<void> => {
          try {
            if (closed) return;
            const reply = await session.receive(data);
            for (const text of reply.send) send(ws, text);
            if (reply.close && !closed) ws.close(1000, "closed by request");
            else checkOutput(ws);
          } catch (err) {
            // A session answers its own errors as frames; reaching here is a bug, so the socket ends.
            console.error("websocket session failed:", err);
            if (!closed) ws.close(1011, "internal error");
          } finally {
            queued--;
          }
        };
        if (concurrent) void handle();
        else queue = queue.then(handle);
      },
      onClose() {
        finish();
      },
      onError() {
        finish();
      },
    };
  });
  return async (c, next) => {
    const tenant = c.get("tenant")?.name ?? "";
    if (slots && slots.limit !== null && slots.inUse(tenant) >= slots.limit) {
      throw quotaExceeded("sockets", slots.limit, slots.inUse(tenant), 5, "close a socket first (one socket carries many episodes on /v1/ws), or use the HTTP routes");
    }
    if (openSockets >= limits.maxOpen) {
      throw new ApiError("service_unavailable", `this server holds ${openSockets} sockets, its limit; retry, or use the HTTP routes`, { open_sockets: openSockets }, { "Retry-After": "5" });
    }
    return upgradeTo(c, next);
  };
}
