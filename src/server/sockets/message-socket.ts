import type { Context, MiddlewareHandler } from "hono";
import type { UpgradeWebSocket, WSContext } from "hono/ws";
import type { AppEnv } from "../context.js";
import { ApiError } from "../errors.js";

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

/** Why a frame never reached the session: too big, binary, or sent while too many were still waiting. */
export type FrameProblem =
  | { kind: "too_large"; bytes: number; limit: number }
  | { kind: "binary" }
  | { kind: "busy"; queued: number; limit: number };

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
   * `serial` (the default): one frame at a time, answered in the order sent (a session that
   * keeps per-connection state, like OpenEnv's). `concurrent`: every admitted frame is handed
   * to the session at once and answered when it is done, so replies may come out of order
   * (the session tags them; edgegym's own `/v1/ws` does). `maxQueued` bounds both.
   */
  ordering?: "serial" | "concurrent";
}

/** Throws on a limit that is not a positive whole number, so a bad setting fails at startup, not under load. */
export function validateSocketLimits(limits: MessageSocketLimits): void {
  for (const key of ["maxMessageBytes", "maxQueued", "maxOpen", "idleMs"] as const) {
    const value = limits[key];
    if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`socket limit ${key} must be a positive whole number, got ${String(value)}`);
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
 * `hono/cloudflare-workers` on Workers.
 *
 * @example app.get("/openenv/:env/ws", messageSocket(upgradeWebSocket, (c) => new MySession(c), { maxMessageBytes: 1 << 20, maxQueued: 8 }))
 */
export function messageSocket(
  upgrade: UpgradeWebSocket,
  open: (c: Context<AppEnv>) => MessageSession,
  limits: MessageSocketLimits,
): MiddlewareHandler<AppEnv> {
  validateSocketLimits(limits);
  const concurrent = limits.ordering === "concurrent";
  let openSockets = 0;
  const upgradeTo = upgrade((c: Context) => {
    const session = open(c as Context<AppEnv>);
    let queue: Promise<void> = Promise.resolve();
    let queued = 0;
    let closed = false;
    let counted = false;
    let idle: ReturnType<typeof setTimeout> | undefined;
    let lastActive = 0;
    let idleSocket: WSContext | undefined;
    const send = (ws: WSContext, text: string): void => {
      // readyState 1 = OPEN; a reply for a socket that has gone is dropped (the episode already holds it).
      if (!closed && ws.readyState === 1) ws.send(text);
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
      if (counted) openSockets--;
      counted = false;
      session.ended?.();
    };
    // Counted from its first sign of life: Node fires onOpen once the handshake is done (an
    // upgrade that fails never does), Hono's Cloudflare adapter fires no onOpen at all.
    const begin = (ws: WSContext): void => {
      if (!counted && !closed) {
        openSockets++;
        counted = true;
      }
      armIdle(ws);
    };
    return {
      onOpen(_event, ws) {
        begin(ws);
      },
      onMessage(event, ws) {
        begin(ws);
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
        if (queued >= limits.maxQueued) {
          send(ws, session.refuse({ kind: "busy", queued, limit: limits.maxQueued }, data));
          return;
        }
        queued++;
        const handle = async (): Promise<void> => {
          try {
            if (closed) return;
            const reply = await session.receive(data);
            for (const text of reply.send) send(ws, text);
            if (reply.close && !closed) ws.close(1000, "closed by request");
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
    if (openSockets >= limits.maxOpen) {
      throw new ApiError("service_unavailable", `this server holds ${openSockets} sockets, its limit; retry, or use the HTTP routes`, { open_sockets: openSockets }, { "Retry-After": "5" });
    }
    return upgradeTo(c, next);
  };
}
