import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv, ServerConfig } from "../context.js";
import type { EpisodeService } from "../episodes/episode-service.js";
import { ApiError } from "../errors.js";
import { findForbiddenKey, jsonDepth, MAX_JSON_DEPTH } from "../middleware/json-body.js";
import type { Episode, EpisodeQuery } from "../../protocol/index.js";
import type { Tenant } from "../tenants/keys.js";
import { clientSeats, episodeHead, seatToReadThrough, sessionSeat } from "../wire-seats.js";

/** Where an episode's MCP server lives (streamable HTTP); a seated episode's seat is `?seat=<seat>`. */
export const MCP_EPISODE_PATH = "/mcp/episodes/:id";

/**
 * The MCP server's modules (the SDK's server and transport, and ours over them), imported
 * with the first MCP request rather than at start-up: the SDK and the schemas under it were
 * a tenth of `edgegym serve`'s start-up. Later requests get them at once.
 */
const importMcpServer = () => Promise.all([import("@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"), import("./episode-server.js")]);

/** A JSON-RPC error response (MCP's error shape over HTTP), with the HTTP status of the edgegym code. */
function jsonRpcError(c: Context<AppEnv>, status: number, code: number, message: string, data?: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ jsonrpc: "2.0", error: { code, message, data: { request_id: c.get("requestId"), ...(data as object | undefined) } }, id: null }), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}

/** Whether a JSON-RPC message (or batch) asks for what shows the opening messages. */
function readsOpening(body: unknown): boolean {
  const messages = Array.isArray(body) ? body : [body];
  return messages.some((m) => typeof m === "object" && m !== null && ["initialize", "prompts/get"].includes((m as { method?: unknown }).method as string));
}

/**
 * The episode as the MCP server shows it, and the seat it plays: a one-player episode as
 * read; a seated one as the seat `?seat=` names, else the only seat a client plays (read as
 * that seat, never whole). Clients playing several seats and no `?seat=` is 422
 * `seat_required`: each agent connects to its own seat's URL.
 */
async function episodeForMcp(service: EpisodeService, viewer: Tenant, id: string, query: EpisodeQuery, named: string | undefined): Promise<{ head: Episode; seat?: string }> {
  if (named === undefined) {
    let head: Episode | undefined;
    try {
      head = await service.get(viewer, id, query);
    } catch (err) {
      if (seatToReadThrough(err) === undefined) throw err;
    }
    if (head && head.seats === undefined) return { head };
  }
  const probe = await episodeHead(service, viewer, id);
  const seat = sessionSeat(probe, named);
  if (seat === undefined) {
    const clients = clientSeats(probe);
    throw new ApiError("seat_required", `clients play ${clients.join(" and ")} in this episode: connect each agent to its seat's URL, /mcp/episodes/${id}?seat=<seat>`, { client_seats: clients });
  }
  return { head: await service.get(viewer, id, { ...query, seat }), seat };
}

/**
 * `POST /mcp/episodes/{id}`: the episode as an MCP server over streamable HTTP, stateless
 * (no Mcp-Session-Id: any process can answer any request, as with /v1), answering in JSON.
 * GET (a server-to-client event stream) and DELETE (ending a session) are 405: there is no
 * session to stream or end; the episode lives on and is closed over /v1.
 */
export function registerMcpRoutes(app: OpenAPIHono<AppEnv>, service: EpisodeService, config: ServerConfig): void {
  app.on(["GET", "DELETE"], MCP_EPISODE_PATH, (c) => jsonRpcError(c, 405, -32000, `${c.req.method} is not offered: this MCP server is stateless; send JSON-RPC with POST`, undefined, { Allow: "POST" }));
  app.post(MCP_EPISODE_PATH, async (c) => {
    const [{ WebStandardStreamableHTTPServerTransport }, { EDGEGYM_JSONRPC_CODE, episodeMcpServer }] = await importMcpServer();
    const viewer = c.get("tenant");
    // Parsed here (the body limit has run) to see which methods it holds; a body that does
    // not parse goes to the transport as text, which answers it with a JSON-RPC parse error.
    const text = await c.req.text();
    // The /v1 body rules, in MCP's error shape: bounded nesting (checked before parsing), no prototype keys.
    if (jsonDepth(text) > MAX_JSON_DEPTH) return jsonRpcError(c, 400, -32600, `JSON nested deeper than ${MAX_JSON_DEPTH} levels`, { code: "json_too_deep", status: 400 });
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    const forbidden = findForbiddenKey(parsed);
    if (forbidden) return jsonRpcError(c, 400, -32600, `forbidden key at ${forbidden.join(".")}`, { code: "invalid_request", status: 400 });
    let episode;
    try {
      // Only initialize and prompts/get show the opening messages: other requests read the head alone.
      const query = readsOpening(parsed) ? { from_turn: 0, limit: 1 } : { from_turn: Number.MAX_SAFE_INTEGER };
      episode = await episodeForMcp(service, viewer, c.req.param("id"), query, c.req.query("seat"));
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      return jsonRpcError(c, err.status, EDGEGYM_JSONRPC_CODE, err.message, { code: err.code, status: err.status, ...(err.details === undefined ? {} : { details: err.details }) });
    }
    const server = episodeMcpServer(service, viewer, episode.head, config.version, episode.seat);
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true, maxRequestBodySize: config.bodyLimitBytes });
    await server.connect(transport);
    try {
      // The body was read above: hand the transport a copy of the request carrying it.
      return await transport.handleRequest(new Request(c.req.raw.url, { method: "POST", headers: c.req.raw.headers, body: text }));
    } finally {
      await server.close();
    }
  });
}
