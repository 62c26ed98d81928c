import type { IncomingMessage } from "node:http";
import type { WebSocket, WebSocketServer } from "ws";

/**
 * Frames a socket sends in one turn of the event loop leave in one write. On `/v1/ws` the
 * replies of a whole group commit (every step whose request arrived in the same round of
 * I/O) are sent together; `ws` writes each frame with its own `writev` system call, which
 * was the largest single item of the server's CPU per step over the socket in --cpu-prof.
 * Here the first frame of a turn corks the TCP socket and a `process.nextTick` uncorks it:
 * the tick runs once the current callbacks and their promise continuations are done, so
 * the frames they sent go out together, in order, before the event loop waits again.
 * Nothing is held past that turn: a lone reply leaves exactly when it did before.
 *
 * Node only (the runtime entry's WebSocket server); `ws` has no public hook for this, so
 * each connection's `send` is wrapped when the server hands it out.
 */
export function coalesceFrameWrites(server: WebSocketServer): void {
  server.on("connection", (ws: WebSocket, request: IncomingMessage) => {
    const socket = request.socket;
    let corked = false;
    const uncork = (): void => {
      corked = false;
      socket.uncork();
    };
    const send = ws.send.bind(ws) as (...args: unknown[]) => void;
    ws.send = ((...args: unknown[]): void => {
      if (!corked && !socket.destroyed) {
        corked = true;
        socket.cork();
        process.nextTick(uncork);
      }
      send(...args);
    }) as WebSocket["send"];
  });
}
