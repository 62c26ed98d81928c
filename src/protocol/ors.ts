import { z } from "zod";
import { Split, TaskIndex } from "./envs.js";
import { ChatMessage, ToolDefinition } from "./messages.js";
import { Score } from "./episodes.js";

/*
 * The Open Reward Standard wire (the `openreward` package 0.1.167 on PyPI: its client in
 * openreward/api/environments/client.py and api/_session/, its reference server in
 * openreward/environments/server.py and types.py), as edgegym serves it at the server root.
 * Request bodies are the reference server's pydantic models (extra="forbid"), so unknown
 * fields are refused as there. docs/ors.md has the mapping table.
 */

const JsonObject = z.record(z.string(), z.unknown());

/** A session id as edgegym mints it: the id its episode will have (`ep_` and 32 hex digits). */
export const ORS_SESSION_ID = /^ep_[0-9a-f]{32}$/;

/** ORS's split types; edgegym's `eval` split is ORS's `validation`. */
export const OrsSplit = z.object({ name: Split, type: z.enum(["train", "validation", "test"]) }).strict();
export type OrsSplit = z.infer<typeof OrsSplit>;

/**
 * A task as ORS lists it (`task_spec`): the edgegym task it names. `split` and `index` are
 * all /create needs (`seed`, `args` and `seats` are read when given); `info` is the dataset row's descriptive fields (difficulty, category),
 * for a trainer's own bookkeeping, and is not read back.
 */
export const OrsTaskSpec = z
  .object({
    split: Split,
    index: TaskIndex,
    seed: z.number().int().min(0).max(2 ** 32 - 1).optional(),
    args: JsonObject.optional(),
    seats: z
      .record(z.string().min(1).max(32), z.string().min(1).max(32))
      .optional()
      .meta({ description: "A seated environment's: who plays each seat (as reset's `seats`). The session plays the one seat left to the client; every other must be a policy of the environment's." }),
    info: JsonObject.optional(),
  })
  .strict();
export type OrsTaskSpec = z.infer<typeof OrsTaskSpec>;

/** Body of POST /create_session: the client may send `env` overrides, which edgegym does not take. */
export const OrsCreateSessionBody = z.object({ env: z.record(z.string(), z.string()).optional() }).strict();

/** Body of POST /create (the reference's CreateSession): a task by `task_spec`, or by `split` and `index`. */
export const OrsCreate = z
  .object({
    env_name: z.string().min(1).max(128).nullable().optional(),
    task_spec: OrsTaskSpec.nullable().optional(),
    split: z.string().max(64).nullable().optional(),
    index: z.number().int().nullable().optional(),
    toolset_name: z.string().max(128).nullable().optional(),
  })
  .strict()
  .superRefine((body, ctx) => {
    const hasSpec = body.task_spec != null;
    const hasIndex = body.split != null && body.index != null;
    if (hasSpec === hasIndex) ctx.addIssue({ code: "custom", message: "Provide either task_spec or both split and index, not both/neither" });
    if ((body.split == null) !== (body.index == null)) ctx.addIssue({ code: "custom", message: "split and index must both be provided together" });
  });
export type OrsCreate = z.infer<typeof OrsCreate>;

/** Body of POST /{env}/tasks and /{env}/num_tasks. */
export const OrsSplitQuery = z.object({ split: z.string().max(64) }).strict();
/** Body of POST /{env}/task. */
export const OrsGetTask = z.object({ split: z.string().max(64), index: z.number().int() }).strict();
/** Body of POST /{env}/task_range: Python slice bounds (negative counts from the end). */
export const OrsGetTaskRange = z
  .object({ split: z.string().max(64), start: z.number().int().nullable().optional(), stop: z.number().int().nullable().optional() })
  .strict();

/** Body of POST /{env}/call: one tool call; `task_id` resumes a call whose stream was cut. */
export const OrsToolCall = z
  .object({
    name: z.string().min(1).max(256),
    input: JsonObject,
    task_id: z.string().max(64).nullable().optional(),
  })
  .strict();
export type OrsToolCall = z.infer<typeof OrsToolCall>;

export const OrsTextBlock = z.object({ text: z.string(), detail: JsonObject.nullable().optional(), type: z.literal("text") }).strict();
export type OrsTextBlock = z.infer<typeof OrsTextBlock>;

export const OrsToolSpec = z.object({ name: z.string(), description: z.string(), input_schema: JsonObject.nullable() }).strict();
export type OrsToolSpec = z.infer<typeof OrsToolSpec>;

/** GET /{env}/tools and /{env}/task_tools. edgegym has no hidden terminal tool; group scoring is served where the rubric can score a transcript alone. */
export const OrsListTools = z
  .object({
    tools: z.array(OrsToolSpec),
    terminal_tool: z.null(),
    supports_score_group: z.boolean(),
    message_block_types: z.array(z.string()),
  })
  .strict();
export type OrsListTools = z.infer<typeof OrsListTools>;

/** What a tool call's `metadata` carries: the step as edgegym recorded it, and the score once done. */
export const OrsStepMetadata = z
  .object({
    episode_id: z.string(),
    turn: z.number().int(),
    messages: z.array(ChatMessage),
    stop_reason: z.string().nullable(),
    truncated: z.boolean(),
    seat: z.string().optional().meta({ description: "A seated episode's: the seat this session plays." }),
    to_play: z.string().nullable().optional().meta({ description: "A seated episode's: the seat to move next (this session's, or null once done)." }),
    score: Score.nullable(),
  })
  .strict();
export type OrsStepMetadata = z.infer<typeof OrsStepMetadata>;

export const OrsToolOutput = z
  .object({
    blocks: z.array(OrsTextBlock),
    metadata: OrsStepMetadata,
    reward: z.number().nullable(),
    finished: z.boolean(),
  })
  .strict();
export type OrsToolOutput = z.infer<typeof OrsToolOutput>;

/** RunToolOutput: `ok: true` with the output, or `ok: false` for a call refused before any step. */
export const OrsRunToolOutput = z.union([
  z.object({ ok: z.literal(true), output: OrsToolOutput }).strict(),
  z
    .object({ ok: z.literal(false), error: z.string(), reason: z.enum(["not_found", "name_collision", "input_validation", "episode_finished"]) })
    .strict(),
]);
export type OrsRunToolOutput = z.infer<typeof OrsRunToolOutput>;

/** A role-tagged message (GET /{env}/messages, score_group candidates); text blocks only, as `message_block_types` says. */
export const OrsMessage = z
  .object({ role: z.enum(["system", "user", "assistant"]), blocks: z.array(OrsTextBlock), detail: JsonObject.nullable().optional() })
  .strict();
export type OrsMessage = z.infer<typeof OrsMessage>;

/** One rollout submitted for group scoring: its transcript and the trainer's own metadata (echoed back). */
export const OrsGroupCandidate = z.object({ messages: z.array(OrsMessage).max(1024), metadata: JsonObject.nullable().optional() }).strict();
export type OrsGroupCandidate = z.infer<typeof OrsGroupCandidate>;

/** Body of POST /{env}/score_group (the reference's ScoreGroup): at most 1,024 candidates, as POST /v1/envs/{id}/score takes. */
export const OrsScoreGroup = z
  .object({ candidates: z.array(OrsGroupCandidate).max(1024), task_id: z.string().max(64).nullable().optional() })
  .strict();
export type OrsScoreGroup = z.infer<typeof OrsScoreGroup>;

/** One candidate's score, in the candidates' order: the rubric's total, its breakdown and the candidate's metadata. */
export const OrsGroupScore = z
  .object({ reward: z.number(), metadata: z.object({ score: Score, candidate: JsonObject.nullable() }).strict() })
  .strict();
export const OrsScoreGroupOutput = z.object({ scores: z.array(OrsGroupScore) }).strict();
export type OrsScoreGroupOutput = z.infer<typeof OrsScoreGroupOutput>;

/** The tool every environment gets on this wire, sending a plain assistant message (an answer, a move). */
export function respondTool(name: string): OrsToolSpec {
  return {
    name,
    description:
      "Send your reply as a plain assistant message, as you would answer without tools (for example <answer>…</answer>, or a move). The environment answers it like any other turn.",
    input_schema: { type: "object", properties: { content: { type: "string", description: "The text of your message." } }, required: ["content"], additionalProperties: false },
  };
}

/** An OpenAI function tool in ORS's shape. */
export function orsToolSpec(tool: ToolDefinition): OrsToolSpec {
  return { name: tool.function.name, description: tool.function.description ?? "", input_schema: tool.function.parameters };
}
