import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { CallToolResult, Tool as McpTool } from "@modelcontextprotocol/sdk/types.js";

// The SDK's modules are imported when a connection opens, not with this module: the client
// and the schemas under it were a tenth of `edgegym serve`'s start-up.

/**
 * An MCP server an environment takes tools from: a name (how errors and tool records name
 * it) and how to open a transport to it. `mcpHttpServer` here; `mcpStdioServer` in
 * `edgegym/node` (it starts a process).
 */
export interface McpServerSource {
  name: string;
  connect(): Promise<Transport>;
}

/** Largest HTTP response body read from an MCP server by default (a tool's output is cut far below this). */
export const DEFAULT_MCP_MAX_RESPONSE_BYTES = 1024 * 1024;

/**
 * A fetch whose response bodies fail past `maxBytes`: a hostile or broken server cannot
 * make edgegym buffer an unbounded answer (JSON or an event stream alike). Redirects are
 * refused, so a server cannot send the call (and its headers) somewhere else.
 */
export function boundedFetch(maxBytes: number, inner: typeof fetch = fetch): typeof fetch {
  return async (input, init) => {
    const res = await inner(input, init);
    // Requests go out with redirect "manual" (workerd refuses "error"): a redirect is refused here.
    if (String(res.type) === "opaqueredirect" || (res.status >= 300 && res.status < 400)) {
      await res.body?.cancel();
      throw new Error(`MCP server answered a redirect (${res.status}); redirects are not followed`);
    }
    if (!res.body) return res;
    let seen = 0;
    const limit = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        seen += chunk.byteLength;
        if (seen > maxBytes) controller.error(new Error(`MCP server response larger than ${maxBytes} bytes`));
        else controller.enqueue(chunk);
      },
    });
    return new Response(res.body.pipeThrough(limit), { status: res.status, statusText: res.statusText, headers: res.headers });
  };
}

/**
 * An MCP server over streamable HTTP. Only `headers` you name are sent (nothing of the
 * episode, the trainer's request or edgegym's own keys).
 *
 * @example mcpHttpServer({ name: "search", url: "http://127.0.0.1:8931/mcp" })
 */
export function mcpHttpServer(options: { name: string; url: string | URL; headers?: Record<string, string>; maxResponseBytes?: number; fetch?: typeof fetch }): McpServerSource {
  const url = new URL(options.url);
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error(`MCP server "${options.name}": url must be http(s), got ${url.protocol}`);
  return {
    name: options.name,
    connect: async () => {
      const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
      return new StreamableHTTPClientTransport(url, {
        fetch: boundedFetch(options.maxResponseBytes ?? DEFAULT_MCP_MAX_RESPONSE_BYTES, options.fetch),
        requestInit: { headers: { ...(options.headers ?? {}) }, redirect: "manual" },
      });
    },
  };
}

/**
 * One lazily opened client per server, shared by every episode of the environment (the
 * SDK multiplexes concurrent calls over one connection). A connection that closes (the
 * process died, the server went away) is opened again on the next call.
 */
export class McpConnections {
  private readonly clients = new Map<string, Promise<Client>>();
  private readonly sources: ReadonlyMap<string, McpServerSource>;

  constructor(sources: readonly McpServerSource[]) {
    const byName = new Map<string, McpServerSource>();
    for (const s of sources) {
      if (byName.has(s.name)) throw new Error(`two MCP servers are named "${s.name}"`);
      byName.set(s.name, s);
    }
    this.sources = byName;
  }

  get names(): string[] {
    return [...this.sources.keys()];
  }

  private client(name: string, signal: AbortSignal | undefined): Promise<Client> {
    let pending = this.clients.get(name);
    if (!pending) {
      const source = this.sources.get(name);
      if (!source) return Promise.reject(new Error(`no MCP server "${name}"`));
      pending = (async () => {
        const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
        const client = new Client({ name: "edgegym", version: "1" });
        client.onclose = () => {
          if (this.clients.get(name) === pending) this.clients.delete(name);
        };
        await client.connect(await source.connect(), signal ? { signal } : undefined);
        return client;
      })();
      pending.catch(() => this.clients.delete(name));
      this.clients.set(name, pending);
    }
    return pending;
  }

  /** Every tool of one server, following `nextCursor` up to `maxTools` (a server listing forever is cut off). */
  async listTools(name: string, options: { timeoutMs: number; maxTools: number }): Promise<McpTool[]> {
    const signal = AbortSignal.timeout(options.timeoutMs);
    const client = await this.client(name, signal);
    const tools: McpTool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 100; page++) {
      const res = await client.listTools(cursor ? { cursor } : {}, { signal, timeout: options.timeoutMs });
      tools.push(...res.tools);
      if (tools.length > options.maxTools) throw new Error(`MCP server "${name}" offers more than ${options.maxTools} tools; name the ones to use in \`allowTools\``);
      cursor = res.nextCursor;
      if (!cursor) break;
    }
    return tools;
  }

  async callTool(server: string, tool: string, args: Record<string, unknown>, options: { signal: AbortSignal; timeoutMs: number }): Promise<CallToolResult> {
    const client = await this.client(server, options.signal);
    return (await client.callTool({ name: tool, arguments: args }, undefined, { signal: options.signal, timeout: options.timeoutMs })) as CallToolResult;
  }

  /** Closes every connection (a stdio server's process ends with it). */
  async close(): Promise<void> {
    const open = [...this.clients.values()];
    this.clients.clear();
    await Promise.allSettled(open.map(async (c) => (await c).close()));
  }
}
