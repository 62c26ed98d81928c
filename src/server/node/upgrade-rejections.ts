import { IncomingMessage, STATUS_CODES, type Server } from "node:http";
import type { Duplex } from "node:stream";

type Fetch = (request: Request, env: { incoming?: unknown }) => Response | Promise<Response>;

/** Headers the raw reply sets itself: a rejection is one whole body, then the connection closes. */
const OWN_HEADERS = new Set(["content-length", "connection", "transfer-encoding", "keep-alive", "upgrade"]);

/** Writes `response` as a whole HTTP/1.1 reply on a socket that asked to upgrade, and closes it. */
async function writeRejection(socket: Duplex, response: Response): Promise<void> {
  const body = Buffer.from(await response.arrayBuffer());
  if (socket.destroyed || !socket.writable) return;
  const lines = [`HTTP/1.1 ${response.status} ${STATUS_CODES[response.status] ?? ""}`];
  response.headers.forEach((value, name) => {
    if (!OWN_HEADERS.has(name)) lines.push(`${name}: ${value}`);
  });
  lines.push(`Content-Length: ${body.length}`, "Connection: close");
  socket.end(Buffer.concat([Buffer.from(`${lines.join("\r\n")}\r\n\r\n`), body]));
}

/**
 * A refused WebSocket upgrade gets the app's whole error reply, body included.
 * `@hono/node-server` answers a refused upgrade itself with the status and headers only
 * (`Content-Length: 0`), so a client saw a bare 503 or 429 where the docs promise the typed
 * JSON error. It leaves that to the server when a second `upgrade` listener exists; this
 * adds one (which also refuses upgrades to anything but WebSocket, which nothing else
 * answers) and wraps `fetch` so an upgrade the app refuses is written out here.
 *
 * @example const fetch = answerRefusedUpgrades(app.fetch); const s = serve({ fetch, … }); fetch.attach(s);
 */
export function answerRefusedUpgrades(fetch: Fetch): Fetch & { attach(server: Server): void } {
  const upgrading = new WeakSet<IncomingMessage>();
  const wrapped = async (request: Request, env: { incoming?: unknown }): Promise<Response> => {
    const incoming = env?.incoming instanceof IncomingMessage ? env.incoming : undefined;
    let response: Response;
    try {
      response = await fetch(request, env);
    } catch (err) {
      if (incoming && upgrading.has(incoming)) await writeRejection(incoming.socket, Response.json({ error: { code: "internal_error", message: "internal error", request_id: "unknown" } }, { status: 500 }));
      throw err;
    }
    // The app answers an accepted upgrade 200 with no body (the socket is then `ws`'s); anything else is a refusal.
    if (incoming && upgrading.has(incoming) && response.status >= 300) await writeRejection(incoming.socket, response.clone());
    return response;
  };
  return Object.assign(wrapped, {
    attach(server: Server): void {
      server.on("upgrade", (request: IncomingMessage, socket: Duplex) => {
        if (request.headers.upgrade?.toLowerCase() === "websocket") upgrading.add(request);
        else if (!socket.destroyed) socket.end("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
      });
    },
  });
}
