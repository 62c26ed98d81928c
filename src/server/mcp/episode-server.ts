import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ErrorCode as JsonRpcCode, GetPromptRequestSchema, ListPromptsRequestSchema, ListToolsRequestSchema, McpError, type CallToolResult, type Tool as McpTool } from "@modelcontextprotocol/sdk/types.js";
import type { AssistantMessage, ChatMessage, Episode, StepResponse } from "../../protocol/index.js";
import { contentText } from "../../protocol/index.js";
import { EngineError } from "../../envs/index.js";
import type { EpisodeService } from "../episodes/episode-service.js";
import { ApiError } from "../errors.js";
import type { Tenant } from "../tenants/keys.js";

/** The tool that sends a plain assistant message (an answer, a move): the one step that is not a tool call. */
export const REPLY_TOOL = "edgegym_reply";
/** `_meta` key a client may send with `tools/call` (the turn it believes the episode is at) and that every result carries. */
export const TURN_META = "edgegym/turn";
/** `_meta` key of a result: the step's outcome (turn, done, stop reason). */
export const STEP_META = "edgegym/step";
/** JSON-RPC error code for an edgegym error (the implementation-defined server range); `data.code` is the edgegym code. */
export const EDGEGYM_JSONRPC_CODE = -32010;

const MAX_REQUEST_ID_CHARS = 64;

/** An edgegym error as MCP's own error shape: a JSON-RPC error carrying the stable code and HTTP status. */
export function toMcpError(err: unknown): McpError {
  if (err instanceof McpError) return err;
  if (err instanceof ApiError) return new McpError(EDGEGYM_JSONRPC_CODE, err.message, { code: err.code, status: err.status, ...(err.details === undefined ? {} : { details: err.details }) });
  if (err instanceof EngineError) {
    const api = new ApiError(err.code, err.message, err.details);
    return new McpError(EDGEGYM_JSONRPC_CODE, api.message, { code: api.code, status: api.status });
  }
  throw err;
}

/** The opening messages as one text, for the server's `instructions` (what the agent is asked). */
function openingText(messages: readonly ChatMessage[]): string {
  return messages.map((m) => `[${m.role}]\n${contentText(m.content ?? "")}`).join("\n\n");
}

/**
 * A tool call id derived from the JSON-RPC request id: the same request sent again (a
 * transport retry) builds the same assistant message, which the episode service recognises
 * as a retry of the step it already applied. Client-chosen ids are bounded and reduced to
 * a safe alphabet; numbers and strings stay distinct.
 */
function callId(requestId: string | number): string {
  const raw = typeof requestId === "number" ? `n${requestId}` : `s${requestId.replace(/[^A-Za-z0-9_-]/g, "_")}`;
  return `mcp_${raw.slice(0, MAX_REQUEST_ID_CHARS)}`;
}

function turnFromMeta(meta: Record<string, unknown> | undefined): number | undefined {
  const turn = meta?.[TURN_META];
  if (turn === undefined) return undefined;
  if (typeof turn !== "number" || !Number.isSafeInteger(turn) || turn < 0) {
    throw new McpError(JsonRpcCode.InvalidParams, `_meta["${TURN_META}"] must be a non-negative integer (the turn the episode is at)`);
  }
  return turn;
}

/**
 * Applies `message` as a step. With the client's turn this is exactly the native step
 * (a retry returns the stored reply, a different message at a stale turn is a conflict).
 * Without it the step goes at the episode's current turn, after checking whether the last
 * turn already took this very message: the transport retry of a call that was applied.
 */
async function applyStep(service: EpisodeService, viewer: Tenant, head: Episode, message: AssistantMessage, clientTurn: number | undefined, signal: AbortSignal): Promise<StepResponse> {
  if (clientTurn !== undefined) return JSON.parse(await service.step(viewer, head.episode_id, { turn: clientTurn, message }, signal)) as StepResponse;
  if (head.turn > 0) {
    try {
      return JSON.parse(await service.step(viewer, head.episode_id, { turn: head.turn - 1, message }, signal)) as StepResponse;
    } catch (err) {
      if (!(err instanceof ApiError && err.code === "turn_conflict")) throw err;
    }
  }
  return JSON.parse(await service.step(viewer, head.episode_id, { turn: head.turn, message }, signal)) as StepResponse;
}

/** A step's reply as an MCP tool result: the tool's output first, then anything the environment said. */
function toolResult(step: StepResponse, id: string | undefined): CallToolResult {
  const own = id === undefined ? [] : step.messages.filter((m) => m.role === "tool" && m.tool_call_id === id);
  const rest = step.messages.filter((m) => !own.includes(m));
  const texts = [...own.map((m) => contentText(m.content)), ...rest.map((m) => `[${m.role}] ${contentText(m.content ?? "")}`)];
  if (step.done) texts.push(`[edgegym] episode done (${step.stop_reason ?? "finished"}); the trainer scores it with POST /v1/episodes/${step.episode_id}/score`);
  const isError = own.some((m) => contentText(m.content).startsWith("Error:"));
  return {
    content: texts.map((text) => ({ type: "text", text })),
    ...(isError ? { isError: true } : {}),
    _meta: { [TURN_META]: step.turn, [STEP_META]: { turn: step.turn, done: step.done, stop_reason: step.stop_reason, truncated: step.truncated } },
  };
}

/**
 * One episode as an MCP server: the environment's tools (as the episode offers them) plus
 * `edgegym_reply`, the opening messages as `instructions` and as the prompt "task". Every
 * `tools/call` is one step of the episode, recorded and scored like a step over /v1.
 * Built per HTTP request from the episode's stored head: nothing is kept in memory.
 */
export function episodeMcpServer(service: EpisodeService, viewer: Tenant, head: Episode, version: string): Server {
  const opening = head.messages;
  const server = new Server(
    { name: `edgegym-${head.env_id}`, version },
    {
      capabilities: { tools: {}, prompts: {} },
      instructions: `edgegym episode ${head.episode_id} of environment "${head.env_id}". Each tool call is one step of the episode; call ${REPLY_TOOL} to send a message without a tool call (your answer, or a move). The task:\n\n${openingText(opening)}`,
    },
  );
  const envTools: McpTool[] = head.tools.map((t) => ({
    name: t.function.name,
    ...(t.function.description ? { description: t.function.description } : {}),
    inputSchema: { type: "object", ...(t.function.parameters ?? {}) } as McpTool["inputSchema"],
  }));
  const reply: McpTool = {
    name: REPLY_TOOL,
    description: "Sends a message to the environment without calling a tool: your final answer, or your move in a game. Ends the episode when the environment says so.",
    inputSchema: { type: "object", properties: { content: { type: "string", description: "The message text." } }, required: ["content"], additionalProperties: false },
  };

  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [...envTools, reply] }));
  server.setRequestHandler(ListPromptsRequestSchema, () => ({ prompts: [{ name: "task", description: "The episode's opening messages (system prompt and task)." }] }));
  server.setRequestHandler(GetPromptRequestSchema, (req) => {
    if (req.params.name !== "task") throw new McpError(JsonRpcCode.InvalidParams, `no prompt "${req.params.name}"; the one prompt is "task"`);
    return {
      description: `The task of episode ${head.episode_id}`,
      // MCP prompts have user and assistant roles only: the system prompt goes as user text.
      messages: opening.map((m) => ({ role: m.role === "assistant" ? ("assistant" as const) : ("user" as const), content: { type: "text" as const, text: contentText(m.content ?? "") } })),
    };
  });
  server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
    const { name } = req.params;
    const args = req.params.arguments ?? {};
    const clientTurn = turnFromMeta(req.params._meta);
    let message: AssistantMessage;
    let id: string | undefined;
    if (name === REPLY_TOOL) {
      if (typeof args.content !== "string") throw new McpError(JsonRpcCode.InvalidParams, `${REPLY_TOOL} takes {"content": "<text>"}`);
      message = { role: "assistant", content: args.content };
    } else {
      if (!envTools.some((t) => t.name === name)) throw new McpError(JsonRpcCode.InvalidParams, `unknown tool "${name}"; tools/list names them`);
      id = callId(extra.requestId);
      message = { role: "assistant", content: null, tool_calls: [{ id, type: "function", function: { name, arguments: JSON.stringify(args) } }] };
    }
    try {
      return toolResult(await applyStep(service, viewer, head, message, clientTurn, extra.signal), id);
    } catch (err) {
      throw toMcpError(err);
    }
  });
  return server;
}
