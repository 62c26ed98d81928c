import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ErrorCode as JsonRpcCode, GetPromptRequestSchema, ListPromptsRequestSchema, ListToolsRequestSchema, McpError, type CallToolResult, type Tool as McpTool } from "@modelcontextprotocol/sdk/types.js";
import type { AssistantMessage, ChatMessage, Episode, StepRequest, StepResponse } from "../../protocol/index.js";
import { contentText } from "../../protocol/index.js";
import { EngineError } from "../../envs/index.js";
import type { EpisodeService } from "../episodes/episode-service.js";
import { ApiError } from "../errors.js";
import type { Tenant } from "../tenants/keys.js";
import { clientSeats, seatUnseen } from "../wire-seats.js";

/** The tool that sends a plain assistant message (an answer, a move): the one step that is not a tool call. */
export const REPLY_TOOL = "edgegym_reply";
/** The tool a seat calls to wait for its turn while another client's seat moves (offered only when clients play several seats). */
export const WAIT_TOOL = "edgegym_wait";
/** How long `edgegym_wait` waits by default, and at most (under the MCP clients' 60 s request timeout). */
const WAIT_DEFAULT_SECONDS = 25;
const WAIT_MAX_SECONDS = 55;
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
    return new McpError(EDGEGYM_JSONRPC_CODE, api.message, { code: api.code, status: api.status, ...(api.details === undefined ? {} : { details: api.details }) });
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
async function applyStep(service: EpisodeService, viewer: Tenant, head: Episode, message: AssistantMessage, clientTurn: number | undefined, signal: AbortSignal, seat: string | undefined): Promise<StepResponse> {
  const step = (turn: number): StepRequest => ({ turn, message, ...(seat === undefined ? {} : { seat }) });
  if (clientTurn !== undefined) return JSON.parse(await service.step(viewer, head.episode_id, step(clientTurn), signal)) as StepResponse;
  if (head.turn > 0) {
    try {
      return JSON.parse(await service.step(viewer, head.episode_id, step(head.turn - 1), signal)) as StepResponse;
    } catch (err) {
      if (!(err instanceof ApiError && err.code === "turn_conflict")) throw err;
    }
  }
  return JSON.parse(await service.step(viewer, head.episode_id, step(head.turn), signal)) as StepResponse;
}

/** Where a seated episode stands for a seat: the `_meta` of every result. */
function stepMeta(step: Pick<StepResponse, "turn" | "done" | "stop_reason" | "truncated" | "to_play">, seat: string | undefined): Record<string, unknown> {
  return {
    [TURN_META]: step.turn,
    [STEP_META]: { turn: step.turn, done: step.done, stop_reason: step.stop_reason, truncated: step.truncated, ...(seat === undefined ? {} : { seat, to_play: step.to_play ?? null }) },
  };
}

/** What the environment said, as result texts (`[role] text`), and the line a finished episode ends with. */
function replyTexts(messages: readonly ChatMessage[], step: Pick<StepResponse, "done" | "stop_reason" | "episode_id" | "to_play">, seat: string | undefined): string[] {
  const texts = messages.map((m) => `[${m.role}] ${contentText(m.content ?? "")}`);
  if (step.done) texts.push(`[edgegym] episode done (${step.stop_reason ?? "finished"}); the trainer scores it with POST /v1/episodes/${step.episode_id}/score`);
  else if (seat !== undefined && step.to_play != null && step.to_play !== seat) texts.push(`[edgegym] it is "${step.to_play}"'s turn: call ${WAIT_TOOL} to wait for yours`);
  return texts;
}

/** A step's reply as an MCP tool result: the tool's output first, then anything the environment said. */
function toolResult(step: StepResponse, messages: readonly ChatMessage[], id: string | undefined, seat: string | undefined): CallToolResult {
  const own = id === undefined ? [] : messages.filter((m) => m.role === "tool" && m.tool_call_id === id);
  const rest = messages.filter((m) => !own.includes(m));
  const texts = [...own.map((m) => contentText(m.content)), ...replyTexts(rest, step, seat)];
  const isError = own.some((m) => contentText(m.content).startsWith("Error:"));
  return {
    content: texts.map((text) => ({ type: "text", text })),
    ...(isError ? { isError: true } : {}),
    _meta: stepMeta(step, seat),
  };
}

/**
 * `edgegym_wait`: waits (up to `seconds`, polling the stored head) until it is `seat`'s turn
 * or the episode is over, then answers what the seat has been shown since its last message.
 * Takes no turn. A seat whose turn it already is gets its answer at once.
 */
async function waitForTurn(service: EpisodeService, viewer: Tenant, id: string, seat: string, seconds: number, signal: AbortSignal): Promise<CallToolResult> {
  const deadline = Date.now() + seconds * 1000;
  let pause = 100;
  for (;;) {
    const head = await service.get(viewer, id, { from_turn: Number.MAX_SAFE_INTEGER, seat });
    const over = head.status !== "active";
    if (over || head.to_play === seat || Date.now() >= deadline || signal.aborted) {
      const step = { turn: head.turn, done: head.done, stop_reason: head.stop_reason, truncated: head.truncated, to_play: head.to_play ?? null, episode_id: id };
      // Turn 0 is the opening, which the agent has (initialize's instructions): what came after it is new.
      const messages = head.turn === 0 ? [] : await seatUnseen(service, viewer, id, seat, 1);
      const texts = replyTexts(messages, step, undefined);
      if (!over && head.to_play !== seat) texts.push(`[edgegym] still "${head.to_play}"'s turn after ${seconds} s: call ${WAIT_TOOL} again`);
      else if (!over) texts.push(`[edgegym] your turn (seat "${seat}")`);
      return { content: texts.map((text) => ({ type: "text", text })), _meta: stepMeta(step, seat) };
    }
    await new Promise((resolve) => setTimeout(resolve, Math.min(pause, Math.max(0, deadline - Date.now()))));
    pause = Math.min(pause * 2, 1000);
  }
}

/**
 * One episode as an MCP server: the environment's tools (as the episode offers them) plus
 * `edgegym_reply`, the opening messages as `instructions` and as the prompt "task". Every
 * `tools/call` is one step of the episode, recorded and scored like a step over /v1.
 * Built per HTTP request from the episode's stored head: nothing is kept in memory.
 *
 * A seated episode's server plays one seat (`seat`, from the URL's `?seat=` or the only
 * client seat): `head` is read as that seat, every step is its, and every result is its
 * view only. When clients play other seats too, `edgegym_wait` waits for the seat's turn.
 */
export function episodeMcpServer(service: EpisodeService, viewer: Tenant, head: Episode, version: string, seat?: string): Server {
  const opening = head.messages;
  const waits = seat !== undefined && clientSeats(head).length > 1;
  const server = new Server(
    { name: `edgegym-${head.env_id}`, version },
    {
      capabilities: { tools: {}, prompts: {} },
      instructions: `edgegym episode ${head.episode_id} of environment "${head.env_id}"${seat === undefined ? "" : `, as seat "${seat}"`}. Each tool call is one step of the episode; call ${REPLY_TOOL} to send a message without a tool call (your answer, or a move).${waits ? ` Other players move between your turns: call ${WAIT_TOOL} to wait for yours.` : ""} The task:\n\n${openingText(opening)}`,
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

  const wait: McpTool = {
    name: WAIT_TOOL,
    description: `Waits until it is your turn (another player is moving), or the episode is over, then returns what you have been shown since your last move. Takes no turn. Waits at most max_seconds (default ${WAIT_DEFAULT_SECONDS}).`,
    inputSchema: { type: "object", properties: { max_seconds: { type: "number", minimum: 0, maximum: WAIT_MAX_SECONDS, description: "How long to wait at most." } }, additionalProperties: false },
  };

  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [...envTools, reply, ...(waits ? [wait] : [])] }));
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
    if (waits && seat !== undefined && name === WAIT_TOOL) {
      const seconds = args.max_seconds ?? WAIT_DEFAULT_SECONDS;
      if (typeof seconds !== "number" || !(seconds >= 0 && seconds <= WAIT_MAX_SECONDS) || Object.keys(args).some((k) => k !== "max_seconds")) {
        throw new McpError(JsonRpcCode.InvalidParams, `${WAIT_TOOL} takes {"max_seconds": 0 to ${WAIT_MAX_SECONDS}} or nothing`);
      }
      try {
        return await waitForTurn(service, viewer, head.episode_id, seat, seconds, extra.signal);
      } catch (err) {
        throw toMcpError(err);
      }
    }
    if (name === REPLY_TOOL) {
      if (typeof args.content !== "string") throw new McpError(JsonRpcCode.InvalidParams, `${REPLY_TOOL} takes {"content": "<text>"}`);
      message = { role: "assistant", content: args.content };
    } else {
      if (!envTools.some((t) => t.name === name)) throw new McpError(JsonRpcCode.InvalidParams, `unknown tool "${name}"; tools/list names them`);
      id = callId(extra.requestId);
      message = { role: "assistant", content: null, tool_calls: [{ id, type: "function", function: { name, arguments: JSON.stringify(args) } }] };
    }
    try {
      const step = await applyStep(service, viewer, head, message, clientTurn, extra.signal, seat);
      // The native reply is the view of the seat to play: when that is another client's seat, this seat is shown its own instead.
      const shown = seat !== undefined && step.to_play != null && step.to_play !== seat ? await seatUnseen(service, viewer, head.episode_id, seat, step.turn) : step.messages;
      return toolResult(step, shown, id, seat);
    } catch (err) {
      throw toMcpError(err);
    }
  });
  return server;
}
