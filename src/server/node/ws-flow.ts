import type { WSContext } from "hono/ws";
import type { WebSocket } from "ws";
import type { SocketFlow } from "../sockets/socket-flow.js";

/** `@hono/node-server` hands `ws`'s own socket as `raw`. */
const socketOf = (ws: WSContext): WebSocket | undefined => ws.raw as WebSocket | undefined;

/**
 * Flow control over `ws` (the Node server's WebSocket library): `bufferedAmount` counts
 * what the TCP socket has not yet written plus what `ws` holds back, `pause()` stops
 * reading the TCP socket (so the kernel's window closes on the peer), and `terminate()`
 * destroys it without waiting for a closing handshake the peer would never read.
 */
export const wsSocketFlow: SocketFlow = {
  buffered: (ws) => socketOf(ws)?.bufferedAmount ?? 0,
  pause: (ws) => socketOf(ws)?.pause(),
  resume: (ws) => socketOf(ws)?.resume(),
  terminate: (ws) => socketOf(ws)?.terminate(),
  metered: true,
};
