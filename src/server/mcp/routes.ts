import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv, ServerConfig } from "../context.js";
import type { EpisodeService } from "../episode-service.js";
import { ApiError } from "../errors.js";
import { EDGEGYM_JSONRPC_CODE, episodeMcpServer } from "./episode-server.js";

/** Where an episode's MCP server lives (streamable HTTP). */
export const MCP_EPISODE_PATH = "/mcp/episodes/:id";

/** A JSON-RPC error response (MCP's error shape over HTTP), with the HTTP status of the edgegym code. */
function jsonRpcError(c: Context<AppEnv>, status: number, code: number, message: string, data?: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ jsonrpc: "2.0", error: { code, message, data: { request_id: c.get("requestId"), ...(data as object | undefined) } }, id: null }), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
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
    const viewer = c.get("tenant");
    let head;
    try {
      // The head plus turn 0 (the opening messages): what instructions, prompts and tools need.
      head = await service.get(viewer, c.req.param("id"), { from_turn: 0, limit: 1 });
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      return jsonRpcError(c, err.status, EDGEGYM_JSONRPC_CODE, err.message, { code: err.code, status: err.status });
    }
    const server = episodeMcpServer(service, viewer, head, config.version);
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true, maxRequestBodySize: config.bodyLimitBytes });
    await server.connect(transport);
    try {
      return await transport.handleRequest(c.req.raw);
    } finally {
      await server.close();
    }
  });
}
