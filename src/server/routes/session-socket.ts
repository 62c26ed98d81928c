import type { Hono } from "hono";
import type { UpgradeWebSocket } from "hono/ws";
import type { AppEnv, ServerConfig } from "../context.js";
import type { EpisodeService } from "../episodes/episode-service.js";
import { ApiError } from "../errors.js";
import { EpisodeSocketSession } from "../sockets/episode-session.js";
import { socketOriginCheck } from "../middleware/origin-check.js";
import { messageSocket, type MessageSocketOptions } from "../sockets/message-socket.js";

/** Where the native session socket lives (docs/websocket.md). */
export const SESSION_SOCKET_PATH = "/v1/ws";

/** A socket silent this long is closed (1001); nothing is lost, the client reconnects when it next needs one. */
const SOCKET_IDLE_MS = 15 * 60 * 1000;

/**
 * `GET /v1/ws`: edgegym's own protocol over one WebSocket carrying many episodes, built on
 * the same socket layer as the OpenEnv wire (`messageSocket`) in its concurrent ordering.
 * Auth and the error shape are those of `/v1/*`, applied by the caller; a frame is held to
 * the body limit, a socket to `socketMaxInFlight` running requests and
 * `socketMaxBufferedBytes` of unsent replies, a tenant to its `sockets` quota (shared with
 * the OpenEnv socket), the process to `socketMaxOpen` sockets; a page of another origin
 * may not open one.
 */
export function registerSessionSocketRoute(app: Hono<AppEnv>, service: EpisodeService, config: ServerConfig, upgrade: UpgradeWebSocket | undefined, sockets: MessageSocketOptions = {}): void {
  if (!upgrade) {
    app.get(SESSION_SOCKET_PATH, () => {
      throw new ApiError("service_unavailable", "this server was built without WebSocket support; use the HTTP routes");
    });
    return;
  }
  app.get(
    SESSION_SOCKET_PATH,
    socketOriginCheck(config.allowedOrigins),
    messageSocket(
      upgrade,
      (c) => new EpisodeSocketSession(service, c.get("tenant"), c.get("requestId")),
      {
        maxMessageBytes: config.bodyLimitBytes,
        maxQueued: config.socketMaxInFlight,
        maxOpen: config.socketMaxOpen,
        idleMs: SOCKET_IDLE_MS,
        maxBufferedBytes: config.socketMaxBufferedBytes,
        drainTimeoutMs: config.socketDrainTimeoutMs,
        ordering: "concurrent",
      },
      sockets,
    ),
  );
}
