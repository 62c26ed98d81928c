import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { mcpStdioServer } from "../../mcp/stdio.node.js";
import { createMcpUnitsEnv } from "./index.js";

/**
 * The units MCP server as a child process of this Node process: the built `server.node.js`
 * beside this file, or (running from the TypeScript sources, as the tests do) `server.node.ts`
 * through tsx.
 */
export function mcpUnitsStdioServer() {
  const built = fileURLToPath(new URL("./server.node.js", import.meta.url));
  if (existsSync(built)) return mcpStdioServer({ name: "units", command: process.execPath, args: [built] });
  const source = fileURLToPath(new URL("./server.node.ts", import.meta.url));
  const root = fileURLToPath(new URL("../../../../", import.meta.url));
  return mcpStdioServer({ name: "units", command: process.execPath, args: ["--import", "tsx", source], cwd: root });
}

/** `mcp-units` with its own stdio server; `close()` ends the server process. */
export function createMcpUnitsNodeEnv() {
  return createMcpUnitsEnv(mcpUnitsStdioServer());
}
