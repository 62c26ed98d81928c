import { DEFAULT_MCP_MAX_RESPONSE_BYTES, type McpServerSource } from "./servers.js";

/**
 * An MCP server that edgegym starts as a child process and speaks to over stdio (Node
 * only). The process gets the SDK's short list of harmless variables (PATH, HOME, USER,
 * SHELL, TERM, LOGNAME) plus `env`: never edgegym's own environment, so no API key or
 * judge key reaches it. Its stderr is dropped unless `stderr: "inherit"`. A message from it
 * larger than `maxMessageBytes` ends the connection.
 *
 * @example mcpStdioServer({ name: "units", command: process.execPath, args: ["units-server.js"] })
 */
export function mcpStdioServer(options: {
  name: string;
  command: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
  stderr?: "ignore" | "inherit";
  maxMessageBytes?: number;
}): McpServerSource {
  return {
    name: options.name,
    connect: async () => {
      // Imported when a connection opens, not at start-up (see servers.ts).
      const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
      return new StdioClientTransport({
        command: options.command,
        args: options.args ?? [],
        env: options.env ?? {},
        ...(options.cwd ? { cwd: options.cwd } : {}),
        stderr: options.stderr ?? "ignore",
        maxBufferSize: options.maxMessageBytes ?? DEFAULT_MCP_MAX_RESPONSE_BYTES,
      });
    },
  };
}
