import { z } from "zod";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { ToolDefinition } from "../../protocol/index.js";
import { defineEnv, type EnvSpec } from "../define.js";
import { EngineError } from "../engine.js";
import { DEFAULT_TOOL_TIMEOUT_MS, executeToolCalls, type Tool } from "../tools.js";
import type { Environment } from "../types.js";
import { McpConnections, type McpServerSource } from "./servers.js";

/** OpenAI's function-name rule: what a chat template and a tool parser accept. */
const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;
export const DEFAULT_MCP_TOOL_OUTPUT_CHARS = 16_000;
export const DEFAULT_MCP_MAX_TOOLS = 64;
/** The tool records are stored with the state of every turn: their JSON stays under this. */
export const MAX_MCP_TOOL_RECORDS_BYTES = 64 * 1024;

/** One MCP tool as an episode offers it: which server, and the definition the model sees. */
export const McpToolRecord = z
  .object({
    server: z.string(),
    name: z.string(),
    description: z.string(),
    parameters: z.record(z.string(), z.unknown()),
  })
  .strict();
export type McpToolRecord = z.infer<typeof McpToolRecord>;

/**
 * The state of an MCP tool episode: the tools it was offered at reset. Recorded in the
 * episode, so every process serves it the same tools, and an MCP server that changes its
 * tools changes them for new episodes only.
 */
export const McpToolState = z.object({ mcp_tools: z.array(McpToolRecord) }).strict();
export type McpToolState = z.infer<typeof McpToolState>;

export interface McpToolEnvSpec<Args> extends Omit<EnvSpec<Args, McpToolState>, "kind" | "tools" | "stateSchema" | "setup" | "respond" | "readsHistory"> {
  /** Where the tools come from. Every episode's calls go through one shared connection per server. */
  mcpServers: McpServerSource[];
  /** Only these tool names (per server name, or for all servers under "*") are offered. Default: every tool. */
  allowTools?: Record<string, string[]>;
  /** Per call; the call is cancelled (MCP `notifications/cancelled`) and the model told it timed out. Default 10 s, as built-in tools. */
  toolTimeoutMs?: number;
  /** Listing tools at reset. Default 10 s. */
  listTimeoutMs?: number;
  /** A tool's output past this many characters is cut, with a note saying so. Default 16,000. */
  maxToolOutputChars?: number;
  /** Most tools one server may offer (after `allowTools`). Default 64. */
  maxTools?: number;
}

/** A tool result as the text the model reads; errors (isError) throw, so they reach the model as "Error: …". */
export function mcpResultText(result: CallToolResult, maxChars: number): string {
  const parts = result.content.map((c) => {
    switch (c.type) {
      case "text":
        return c.text;
      case "image":
      case "audio":
        return `[${c.type} ${c.mimeType} omitted]`;
      case "resource":
        return "text" in c.resource ? c.resource.text : `[resource ${c.resource.uri} omitted]`;
      case "resource_link":
        return `[resource ${c.uri}]`;
      default:
        return "[content omitted]";
    }
  });
  let text = parts.join("\n");
  if (text === "" && result.structuredContent !== undefined) text = JSON.stringify(result.structuredContent);
  if (text.length > maxChars) text = `${text.slice(0, maxChars)}\n[output cut: ${text.length - maxChars} more characters]`;
  if (result.isError) throw new Error(text || "the tool failed");
  return text;
}

function definition(record: McpToolRecord): ToolDefinition {
  return { type: "function", function: { name: record.name, description: record.description, parameters: record.parameters } };
}

/**
 * A tool environment whose tools come from MCP servers (streamable HTTP, or stdio on Node
 * via `mcpStdioServer`). At reset the servers' tools are listed and recorded in the
 * episode; the model's calls go to the server through MCP, with the built-in tools' rules:
 * arguments must be a JSON object (the server validates them against its schema), a call
 * past `toolTimeoutMs` is cancelled, and every failure (unknown tool, bad JSON, the
 * server's error, a timeout, a dead server) is an "Error: …" tool message to the model,
 * never a failed step. A message without tool calls ends the episode.
 *
 * The servers see the model's arguments and nothing else: no episode id, state, or key.
 * A stateful MCP server is outside the episode: a retried step returns the stored reply
 * without calling it again, but a fork does not rewind it.
 *
 * @example
 * const env = mcpToolEnv({ id: "units", version: "1.0.0", description: "…", dataset, rubric,
 *   mcpServers: [mcpHttpServer({ name: "units", url: "http://127.0.0.1:8931/mcp" })] });
 */
export function mcpToolEnv<Args = Record<string, never>>(spec: McpToolEnvSpec<Args>): Environment<Args, McpToolState> & { close(): Promise<void> } {
  const connections = new McpConnections(spec.mcpServers);
  const timeoutMs = spec.toolTimeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS;
  const listTimeoutMs = spec.listTimeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS;
  const maxChars = spec.maxToolOutputChars ?? DEFAULT_MCP_TOOL_OUTPUT_CHARS;
  const maxTools = spec.maxTools ?? DEFAULT_MCP_MAX_TOOLS;

  async function discover(): Promise<McpToolRecord[]> {
    const records: McpToolRecord[] = [];
    for (const server of connections.names) {
      const allowed = spec.allowTools?.[server] ?? spec.allowTools?.["*"];
      const listed = await connections.listTools(server, { timeoutMs: listTimeoutMs, maxTools: allowed ? Number.MAX_SAFE_INTEGER : maxTools });
      for (const tool of listed) {
        if (allowed && !allowed.includes(tool.name)) continue;
        if (!TOOL_NAME.test(tool.name)) throw new Error(`MCP server "${server}" offers a tool named ${JSON.stringify(tool.name).slice(0, 80)}; tool names must match ${TOOL_NAME}`);
        if (records.some((r) => r.name === tool.name)) throw new Error(`two MCP servers offer a tool "${tool.name}"; keep one with \`allowTools\``);
        const { $schema: _ignored, ...parameters } = tool.inputSchema as Record<string, unknown>;
        records.push({ server, name: tool.name, description: tool.description ?? tool.title ?? "", parameters });
      }
    }
    if (records.length > maxTools) throw new Error(`the MCP servers offer ${records.length} tools, more than ${maxTools}; name the ones to use in \`allowTools\``);
    const bytes = new TextEncoder().encode(JSON.stringify(records)).byteLength;
    if (bytes > MAX_MCP_TOOL_RECORDS_BYTES) throw new Error(`the MCP tools' definitions take ${bytes} bytes, more than ${MAX_MCP_TOOL_RECORDS_BYTES}; name fewer tools in \`allowTools\``);
    return records;
  }

  function toolsOf(state: McpToolState): Tool<McpToolState>[] {
    return state.mcp_tools.map((record) => ({
      name: record.name,
      description: record.description,
      // An object of anything: the MCP server owns the schema and validates the call itself.
      parameters: z.looseObject({}),
      timeoutMs,
      run: async (args, { signal }) => mcpResultText(await connections.callTool(record.server, record.name, args, { signal, timeoutMs }), maxChars),
    }));
  }

  const maxCalls = spec.maxToolCallsPerMessage;
  const env: Environment<Args, McpToolState> = defineEnv<Args, McpToolState>({
    ...spec,
    kind: "tool",
    stateSchema: McpToolState,
    setup: async () => {
      try {
        return { state: { mcp_tools: await discover() } };
      } catch (err) {
        // The reset fails as data: the environment cannot run until its MCP servers answer.
        throw new EngineError("env_unavailable", `${spec.id}: its MCP tools could not be listed: ${err instanceof Error ? err.message : String(err)}`);
      }
    },
    // The calls run here rather than through `tools`: which tools exist is known per episode (its state).
    respond: async (state, message, ctx) => {
      if (!message.tool_calls?.length) return { state };
      const ran = await executeToolCalls(toolsOf(state), message.tool_calls, state, { maxCalls, signal: ctx.signal });
      return { state, messages: ran.messages };
    },
  });
  return {
    ...env,
    toolDefinitionsFor: (state) => state.mcp_tools.map(definition),
    close: () => connections.close(),
  };
}
