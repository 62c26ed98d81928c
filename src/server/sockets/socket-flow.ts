import type { WSContext } from "hono/ws";

/**
 * What a runtime's WebSocket tells about its own output, and how to hold its input.
 * Hono's `WSContext` has neither: how many bytes wait to leave and whether the peer's
 * frames can be left unread are properties of the runtime's socket (`ws` on Node), so the
 * runtime entry hands one of these to the app (`AppDeps.socketFlow`) beside its upgrade.
 */
export interface SocketFlow {
  /** Bytes handed to `send` and not yet written to the network; 0 where the runtime cannot tell. */
  buffered(ws: WSContext): number;
  /** Stops reading the peer's frames, so TCP pushes back on a peer that sends without reading. */
  pause(ws: WSContext): void;
  /** Reads them again. */
  resume(ws: WSContext): void;
  /** Drops the connection at once: a peer that reads nothing would never see a closing handshake. */
  terminate(ws: WSContext): void;
  /** Whether `buffered` means anything here; false: output cannot be metered, only requests counted. */
  readonly metered: boolean;
}

/**
 * For a runtime whose socket says nothing of its output: Workers' `WebSocket` has no
 * `bufferedAmount` and no way to stop reading (checked on the workerd of wrangler 4.156:
 * `"bufferedAmount" in server` is false). Requests in flight are still counted; a peer
 * that does not drain is left to the platform.
 */
export const UNMETERED_FLOW: SocketFlow = {
  buffered: () => 0,
  pause: () => undefined,
  resume: () => undefined,
  terminate: (ws) => ws.close(1008, "not draining"),
  metered: false,
};
