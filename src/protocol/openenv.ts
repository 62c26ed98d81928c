import { z } from "zod";
import { Split } from "./envs.js";
import { EpisodeId, EpisodeStatus, ResetRequest, Score, TemplateChange } from "./episodes.js";
import { ChatMessage, MessageContent, ToolCall, ToolDefinition } from "./messages.js";

/*
 * The OpenEnv wire (openenv-core 0.3.0: openenv/core/env_server/types.py and
 * http_server.py, openenv/core/env_client.py), as edgegym serves it under
 * /openenv/{env_id}. Request bodies keep OpenEnv's field names (`seed`, `episode_id`,
 * `action`, `timeout_s`, `request_id`); what edgegym adds is optional, so a client built
 * on openenv-core sends nothing new. docs/openenv.md has the mapping table.
 */

const JsonObject = z.record(z.string(), z.unknown());

/** A seat's name, as GET /v1/envs/{id} lists it. */
const SeatName = z.string().min(1).max(32);

/**
 * An OpenEnv action: one assistant message in OpenAI chat shape (`role` may be left out),
 * plus the turn it answers. `turn` makes a retry safe: a step sent again with the same
 * turn returns the stored reply instead of being applied twice. On the WebSocket it
 * defaults to the turn the session last saw; over HTTP it is required, since each request
 * stands alone.
 */
export const OpenEnvAction = z
  .object({
    role: z.literal("assistant").optional(),
    content: MessageContent.nullable().optional(),
    tool_calls: z.array(ToolCall).optional().meta({ description: "Tool calls; the server executes them during the step." }),
    name: z.string().optional(),
    reasoning_content: z.string().nullable().optional(),
    turn: z.number().int().min(0).optional().meta({ description: "The turn this action answers (the observation's `turn`). Required over HTTP." }),
    seat: SeatName.optional().meta({
      description:
        "A seated episode's: the seat this move is for. Default: the session's seat (reset's `seat`, or the only seat a client plays). A session bound to a seat refuses another (422 `seat_mismatch`).",
    }),
    metadata: JsonObject.optional().meta({ description: "OpenEnv's action metadata; accepted and not stored." }),
  })
  .strict()
  .meta({ id: "OpenEnvAction", example: { content: "<answer>olleh</answer>", turn: 0 } });
export type OpenEnvAction = z.infer<typeof OpenEnvAction>;

/**
 * openenv-core's CallToolAction (what its MCPToolClient steps with): one call of one of the
 * environment's tools, taken as an assistant message with that single tool call, so it is
 * recorded and scored like any other step.
 */
export const OpenEnvCallTool = z
  .object({
    type: z.literal("call_tool"),
    tool_name: z.string().min(1).max(256),
    arguments: JsonObject.optional(),
    turn: z.number().int().min(0).optional().meta({ description: "As on a message action; required over HTTP." }),
    seat: SeatName.optional().meta({ description: "As on a message action." }),
    metadata: JsonObject.optional(),
  })
  .strict()
  .meta({ id: "OpenEnvCallTool", example: { type: "call_tool", tool_name: "calculator", arguments: { expression: "2 + 3" } } });
export type OpenEnvCallTool = z.infer<typeof OpenEnvCallTool>;

/** openenv-core's ListToolsAction: the tools in MCP's shape; takes no turn. */
export const OpenEnvListTools = z
  .object({ type: z.literal("list_tools"), metadata: JsonObject.optional() })
  .strict()
  .meta({ id: "OpenEnvListTools" });

/** Any action a step accepts: a message, or one of openenv-core's two tool actions. */
export const OpenEnvAnyAction = z.union([OpenEnvCallTool, OpenEnvListTools, OpenEnvAction]);
export type OpenEnvAnyAction = z.infer<typeof OpenEnvAnyAction>;

/** A tool in MCP's shape (openenv-core's `Tool`), as `list_tools` answers. */
export const OpenEnvMcpTool = z.object({ name: z.string(), description: z.string(), input_schema: JsonObject }).strict();
export type OpenEnvMcpTool = z.infer<typeof OpenEnvMcpTool>;

/**
 * The data of a reset (HTTP body, or the WebSocket message's `data`). OpenEnv's `seed`
 * and `episode_id`; edgegym's reset fields beside them. With `episode_id` alone it
 * attaches to that existing episode instead of starting one: the reconnect.
 */
export const OpenEnvResetData = ResetRequest.extend({
  episode_id: EpisodeId.optional().meta({ description: "An existing episode to continue (reconnect). Send it alone, or with `seat`." }),
  seat: SeatName.optional().meta({
    description:
      "A seated episode's: the seat this session plays (one a client plays; default: the only one). Its observations are that seat's view only, and its steps are that seat's. Without it, when clients play several seats (self-play), the session plays them all: each step names its `seat`, and each observation is the view of the seat it names in `seat`.",
  }),
})
  .strict()
  .meta({ id: "OpenEnvResetData", example: { seed: 42 } });
export type OpenEnvResetData = z.infer<typeof OpenEnvResetData>;

/** HTTP POST /step: OpenEnv's StepRequest plus the episode it steps (HTTP has no session). */
export const OpenEnvStepBody = z
  .object({
    action: OpenEnvAnyAction,
    episode_id: EpisodeId.meta({ description: "The episode to step: the reset observation's `episode_id`." }),
    timeout_s: z.number().positive().optional().meta({ description: "OpenEnv's per-step timeout; accepted, and the environment's own tool timeouts apply." }),
    request_id: z.string().max(255).optional().meta({ description: "OpenEnv's request id for tracking; accepted and not stored." }),
  })
  .strict()
  .meta({ id: "OpenEnvStepBody" });
export type OpenEnvStepBody = z.infer<typeof OpenEnvStepBody>;

/** What `observation` carries in every reset and step answer (OpenEnv puts `reward` and `done` beside it). */
export const OpenEnvObservation = z
  .object({
    episode_id: EpisodeId.nullable().meta({ description: "The episode: keep it to reconnect. Null only for `list_tools` before any reset." }),
    env_id: z.string().optional().meta({ description: "The environment (after reset and reconnect)." }),
    turn: z.number().int().meta({ description: "The turn the episode is at: send it as the next action's `turn`." }),
    messages: z.array(ChatMessage).optional().meta({
      description: "New messages: the opening prompt after reset, the environment's reply after a step, the whole transcript after a reconnect.",
    }),
    tools: z
      .union([z.array(ToolDefinition), z.array(OpenEnvMcpTool)])
      .optional()
      .meta({ description: "Tools to offer the model: OpenAI function tools after reset and reconnect, MCP's shape after `list_tools`." }),
    tool_name: z.string().optional().meta({ description: "After `call_tool`: the tool called." }),
    result: z.unknown().optional().meta({ description: "After `call_tool`: what the tool returned to the model (its errors included, as in OpenEnv)." }),
    error: z.null().optional().meta({ description: "After `call_tool`: OpenEnv's transport error; always null here, since tool failures are results." }),
    max_turns: z.number().int().optional(),
    split: Split.optional(),
    index: z.number().int().optional(),
    seed: z.number().int().optional(),
    stop_reason: z.string().nullable().optional(),
    truncated: z.boolean().optional(),
    resumed: z.boolean().optional().meta({ description: "True when this answers a reconnect (reset with `episode_id`)." }),
    seats: z.record(z.string(), z.string()).optional().meta({ description: "A seated episode's (after reset and reconnect): who plays each seat, `client` or the environment's policy." }),
    seat: z.string().optional().meta({ description: "A seated episode's: the seat whose view `messages` is (and whose reward `reward` is)." }),
    to_play: z.string().nullable().optional().meta({ description: "A seated episode's: the seat that moves next; null once done." }),
    score: Score.nullable().optional().meta({ description: "The rubric's full score when the episode is done (`reward` is its total)." }),
    template_change: TemplateChange.optional(),
    expires_at: z.iso.datetime().optional(),
  })
  .strict()
  .meta({ id: "OpenEnvObservation" });
export type OpenEnvObservation = z.infer<typeof OpenEnvObservation>;

/** OpenEnv's ResetResponse / StepResponse (and the WebSocket observation's `data`). */
export const OpenEnvResult = z
  .object({
    observation: OpenEnvObservation,
    reward: z.number().nullable().meta({ description: "The episode's reward once done (the rubric's total); null before." }),
    done: z.boolean(),
  })
  .strict()
  .meta({ id: "OpenEnvResult" });
export type OpenEnvResult = z.infer<typeof OpenEnvResult>;

/** OpenEnv's State (`episode_id`, `step_count`) with the episode's head beside it. */
export const OpenEnvState = z
  .object({
    episode_id: EpisodeId.nullable(),
    step_count: z.number().int().min(0).meta({ description: "Steps taken: the episode's turn." }),
    env_id: z.string(),
    status: EpisodeStatus.optional(),
    turn: z.number().int().optional(),
    max_turns: z.number().int().optional(),
    done: z.boolean().optional(),
    stop_reason: z.string().nullable().optional(),
    truncated: z.boolean().optional(),
    score: Score.nullable().optional(),
    seats: z.record(z.string(), z.string()).optional().meta({ description: "A seated episode's: who plays each seat." }),
    seat: z.string().optional().meta({ description: "The seat this session plays, when it is bound to one." }),
    to_play: z.string().nullable().optional().meta({ description: "A seated episode's: the seat that moves next; null once done." }),
    expires_at: z.iso.datetime().optional(),
  })
  .strict()
  .meta({ id: "OpenEnvState" });
export type OpenEnvState = z.infer<typeof OpenEnvState>;

/** A WebSocket frame from the client (openenv-core's WSIncomingMessage). */
export const OpenEnvClientMessage = z.discriminatedUnion("type", [
  z.object({ type: z.literal("reset"), data: z.record(z.string(), z.unknown()).optional() }).strict(),
  z.object({ type: z.literal("step"), data: z.record(z.string(), z.unknown()) }).strict(),
  z.object({ type: z.literal("state") }).strict(),
  z.object({ type: z.literal("close") }).strict(),
]);
export type OpenEnvClientMessage = z.infer<typeof OpenEnvClientMessage>;

/** openenv-core's WSErrorCode values: the `code` of a WebSocket error frame. edgegym's own code is beside it (`edgegym_code`). */
export const OpenEnvWsErrorCode = z.enum(["INVALID_JSON", "UNKNOWN_TYPE", "VALIDATION_ERROR", "EXECUTION_ERROR", "CAPACITY_REACHED", "FACTORY_ERROR", "SESSION_ERROR"]);
export type OpenEnvWsErrorCode = z.infer<typeof OpenEnvWsErrorCode>;
