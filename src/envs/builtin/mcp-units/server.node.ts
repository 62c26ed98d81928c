/**
 * The `mcp-units` environment's MCP server: one tool, `convert_units`, over stdio. edgegym
 * starts it as a child process (src/envs/builtin/mcp-units/env.node.ts); it opens no socket
 * and reads nothing but its stdin.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";
import { convert, formatNumber, UNIT_NAMES } from "./units.js";

const server = new McpServer({ name: "edgegym-units", version: "1.0.0" });

server.registerTool(
  "convert_units",
  {
    description: `Converts a value between units of the same quantity. Units: ${UNIT_NAMES.join(", ")} (C, F, K are temperatures).`,
    inputSchema: { value: z.number().describe("The number to convert."), from: z.string().describe('Its unit, e.g. "mi".'), to: z.string().describe('The unit wanted, e.g. "km".') },
  },
  ({ value, from, to }) => {
    try {
      return { content: [{ type: "text", text: formatNumber(convert(value, from, to)) }] };
    } catch (err) {
      return { content: [{ type: "text", text: err instanceof Error ? err.message : String(err) }], isError: true };
    }
  },
);

await server.connect(new StdioServerTransport());
