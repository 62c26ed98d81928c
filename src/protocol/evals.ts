import { z } from "zod";
import { ChatMessage, ToolDefinition } from "./messages.js";
import { Split } from "./envs.js";

const JsonObject = z.record(z.string(), z.unknown());

export const EvalId = z.string().min(1).max(64).meta({ description: "Evaluation job id.", example: "ev_4f1c9a0b2d3e4f5a6b7c8d9e0f1a2b3c" });

/**
 * The options of an evaluation, shared by `edgegym eval` (as flags) and `POST /v1/evals`
 * (as this body). The model endpoint and its key are not here: the CLI takes them from
 * flags, the server from its own configuration, so a client never sends or sees a key.
 */
export const EvalRequest = z
  .object({
    env_id: z.string().min(1).meta({ description: "Environment to evaluate.", example: "reverse-text" }),
    model: z
      .string()
      .min(1)
      .optional()
      .meta({ description: "Model name sent to the OpenAI-compatible endpoint (default: the server's `EDGEGYM_EVAL_MODEL`).", example: "gpt-4.1-mini" }),
    num_examples: z
      .number()
      .int()
      .min(-1)
      .refine((n) => n !== 0, "num_examples must be positive, or -1 for every row of the split")
      .default(5)
      .meta({ description: "Dataset rows to evaluate, from index 0; -1 for every row of a finite split.", example: 5 }),
    rollouts_per_example: z.number().int().min(1).max(1024).default(3).meta({ description: "Rollouts per row (pass@k needs more than 1).", example: 3 }),
    max_concurrent: z.number().int().min(1).max(4096).default(32).meta({ description: "Rollouts in flight at once (each has at most one model request open).", example: 32 }),
    max_tokens: z.number().int().min(1).optional().meta({ description: "Sent as `max_tokens` on every model request; a server caps it (EDGEGYM_EVAL_MAX_TOKENS).", example: 256 }),
    temperature: z.number().min(0).optional().meta({ description: "Sampling temperature.", example: 0.7 }),
    sampling_args: JsonObject.optional().meta({
      description:
        "Extra fields for every chat-completion request (`top_p`, `seed`, `stop`…); `max_tokens` and `temperature` win over the same keys here. " +
        "`POST /v1/evals` accepts only temperature, top_p, top_k, min_p, max_tokens, max_completion_tokens, stop, seed, presence_penalty, frequency_penalty, " +
        "repetition_penalty, logprobs, top_logprobs, logit_bias (≤300 ids), reasoning_effort, chat_template_kwargs and n (=1), within the server's caps " +
        "(max_tokens ≤ EDGEGYM_EVAL_MAX_TOKENS, default 4096, also sent when the job names no token limit); anything else is a 400.",
      example: { top_p: 0.9 },
    }),
    env_args: JsonObject.optional().meta({ description: "Environment arguments, validated by the environment's `args_schema`.", example: {} }),
    split: Split.optional().meta({ description: "Split to draw rows from (default `eval` when the environment has eval rows, else `train`)." }),
    seed: z
      .number()
      .int()
      .min(0)
      .max(2 ** 32 - 1)
      .default(0)
      .meta({ description: "Seeds each rollout's episode (mixed with the row and rollout index), so a run replays.", example: 0 }),
    max_retries: z.number().int().min(0).max(20).default(3).meta({ description: "Retries of a failed model request (429, 5xx, timeout, connection) with backoff.", example: 3 }),
    timeout_seconds: z.number().positive().max(3600).default(600).meta({ description: "Time limit of one model request.", example: 600 }),
    pass_threshold: z.number().default(0.5).meta({ description: "A rollout passes for pass@k when its reward is at least this.", example: 0.5 }),
  })
  .strict()
  .meta({ id: "EvalRequest", description: "Options of an evaluation run.", example: { env_id: "reverse-text", model: "gpt-4.1-mini", num_examples: 5, rollouts_per_example: 3 } });
export type EvalRequest = z.infer<typeof EvalRequest>;
export type EvalRequestInput = z.input<typeof EvalRequest>;

export const EvalRolloutError = z
  .object({
    error: z.string().meta({ description: "Stable error code.", example: "model_rate_limited" }),
    error_chain_str: z.string().meta({ description: "What went wrong, as text (verifiers' field name)." }),
    error_chain_repr: z.string().meta({ description: "Same text, under the other name verifiers writes." }),
    attempts: z.number().int().meta({ description: "Model requests made for the failing turn, retries included.", example: 4 }),
  })
  .strict()
  .meta({ id: "EvalRolloutError", description: "Why a rollout failed; a failed rollout is kept, with reward 0." });
export type EvalRolloutError = z.infer<typeof EvalRolloutError>;

export const EvalTiming = z
  .object({
    start_time: z.number().meta({ description: "Unix time (seconds) the rollout started." }),
    generation_ms: z.number().meta({ description: "Time waiting for the model, over all turns." }),
    env_ms: z.number().meta({ description: "Time in the environment: reset and steps (tool calls, replies)." }),
    scoring_ms: z.number().meta({ description: "Time running the rubric." }),
    total_ms: z.number().meta({ description: "Wall time of the whole rollout, in milliseconds." }),
  })
  .strict()
  .meta({ id: "EvalTiming", description: "Where a rollout's time went, in milliseconds (start_time in Unix seconds)." });
export type EvalTiming = z.infer<typeof EvalTiming>;

export const EvalTokenUsage = z
  .object({
    input_tokens: z.number().meta({ description: "Prompt tokens, summed over the rollout's model requests." }),
    output_tokens: z.number().meta({ description: "Completion tokens, summed over the rollout's model requests." }),
  })
  .strict()
  .meta({ id: "EvalTokenUsage", description: "Tokens the model endpoint reported, summed over turns.", example: { input_tokens: 312, output_tokens: 48 } });
export type EvalTokenUsage = z.infer<typeof EvalTokenUsage>;

/**
 * One rollout, as a line of `results.jsonl`. Field names follow verifiers' `vf-eval`
 * output (example_id, prompt, completion, answer, info, reward, metrics, timing,
 * is_completed, is_truncated, stop_condition, error, token_usage), and each metric is
 * repeated as a top-level key, as verifiers does, so tooling written for it reads these.
 */
export const EvalRollout = z
  .object({
    example_id: z.number().int().meta({ description: "Row index in the split.", example: 0 }),
    rollout_index: z.number().int().meta({ description: "Which of the row's rollouts this is (0-based).", example: 0 }),
    task: z.string().meta({ description: "The environment id.", example: "reverse-text" }),
    prompt: z.array(ChatMessage).meta({ description: "Opening messages (system prompt included)." }),
    completion: z.array(ChatMessage).meta({ description: "Everything after the prompt: assistant messages, tool results, environment replies." }),
    answer: z.string().optional().meta({ description: "The row's reference answer, when it has one." }),
    info: JsonObject.meta({ description: "The row's task data beside prompt and answer (environment-specific)." }),
    reward: z.number().meta({ description: "Weighted rubric total; 0 for a failed rollout.", example: 0.93 }),
    metrics: z.record(z.string(), z.number()).meta({ description: "Each rubric component's score by name, plus the environment's metrics (turns, tool calls)." }),
    components: z
      .array(
        z
          .object({ name: z.string(), weight: z.number(), score: z.number(), error: z.string().optional() })
          .strict(),
      )
      .meta({ description: "Rubric components with their weights, and the error of a reward function that failed." }),
    stop_condition: z.string().nullable().meta({ description: "Why the episode ended (`single_turn`, `max_turns`, `no_tool_calls`, `env_done`, `env_error`…); null when the rollout failed.", example: "single_turn" }),
    is_completed: z.boolean().meta({ description: "The episode reached a stop condition and was scored." }),
    is_truncated: z.boolean().meta({ description: "Stopped on a limit (turns) or the model hit its token limit." }),
    finish_reasons: z.array(z.string()).meta({ description: "The model's `finish_reason` at each turn.", example: ["stop"] }),
    error: EvalRolloutError.nullable(),
    timing: EvalTiming,
    token_usage: EvalTokenUsage,
    seed: z.number().int().meta({ description: "The episode's seed." }),
    episode_id: z.string().nullable().meta({ description: "Server episode id when run through an edgegym server." }),
    tool_defs: z.array(ToolDefinition).optional().meta({ description: "Tools offered to the model, when the environment has any." }),
  })
  .loose()
  .meta({ id: "EvalRollout", description: "One rollout, a line of results.jsonl (metrics repeated as top-level numbers)." });
export type EvalRollout = z.infer<typeof EvalRollout>;

const Spread = z.object({ min: z.number(), mean: z.number(), max: z.number() }).strict();

export const EvalSummary = z
  .object({
    rollouts: z.number().int().meta({ description: "Rollouts run, failed ones included." }),
    errors: z.number().int().meta({ description: "Rollouts that failed." }),
    error_rate: z.number().meta({ description: "errors / rollouts (0–1)." }),
    errors_by_code: z.record(z.string(), z.number().int()).meta({ description: "Failed rollouts per error code." }),
    reward: z.object({ mean: z.number(), std: z.number(), min: z.number(), max: z.number() }).strict().meta({ description: "Over every rollout; a failed one counts 0, as in vf-eval." }),
    components: z.array(z.object({ name: z.string(), weight: z.number(), mean: z.number() }).strict()),
    metrics: z.record(z.string(), z.number()).meta({ description: "Mean of each metric over the rollouts that have it (verifiers' avg_metrics)." }),
    pass_threshold: z.number().meta({ description: "Reward at or above which a rollout counts as a pass for pass@k." }),
    pass_at_k: z.record(z.string(), z.number()).meta({ description: "Unbiased pass@k for k = 1, 2, 4… ≤ rollouts per example; empty with 1 rollout each.", example: { "1": 0.4, "2": 0.55 } }),
    pass_all_k: z.record(z.string(), z.number()).meta({ description: "Chance that all k samples pass (pass^k)." }),
    stop_conditions: z.record(z.string(), z.number().int()).meta({ description: "Rollouts per stop condition; failed rollouts under `error`.", example: { single_turn: 14, error: 1 } }),
    model_length_stops: z.number().int().meta({ description: "Rollouts in which the model stopped on its token limit at least once." }),
    usage: z
      .object({ input_tokens: z.number(), output_tokens: z.number(), mean_input_tokens: z.number(), mean_output_tokens: z.number() })
      .strict(),
    timing: z.object({ generation_ms: Spread, env_ms: Spread, scoring_ms: Spread, total_ms: Spread }).strict(),
    histogram: z.array(z.object({ lo: z.number(), hi: z.number(), count: z.number().int() }).strict()).meta({ description: "Reward histogram, 10 equal bins between the lowest and highest reward." }),
    wall_ms: z.number().meta({ description: "Wall time of the run (sum over resumed sessions)." }),
    rollouts_per_second: z.number().meta({ description: "Rollouts finished per second of wall time." }),
  })
  .strict()
  .meta({ id: "EvalSummary", description: "Aggregate figures of an evaluation." });
export type EvalSummary = z.infer<typeof EvalSummary>;

export const EvalStatus = z.enum(["queued", "running", "completed", "failed", "cancelled"]).meta({ description: "Lifecycle of an evaluation job." });
export type EvalStatus = z.infer<typeof EvalStatus>;

export const EvalProgress = z
  .object({
    total: z.number().int().meta({ description: "Rollouts the job will run." }),
    done: z.number().int().meta({ description: "Rollouts finished (failed ones included)." }),
    errors: z.number().int().meta({ description: "Rollouts that failed so far." }),
    mean_reward: z.number().nullable().meta({ description: "Mean reward of the finished rollouts." }),
    rollouts_per_second: z.number().nullable().meta({ description: "Rollouts finished per second so far; null before the first." }),
  })
  .strict()
  .meta({ id: "EvalProgress", description: "How far an evaluation job has got.", example: { total: 15, done: 6, errors: 0, mean_reward: 0.41, rollouts_per_second: 2.5 } });
export type EvalProgress = z.infer<typeof EvalProgress>;

export const EvalJob = z
  .object({
    eval_id: EvalId,
    status: EvalStatus,
    env_id: z.string().meta({ description: "The environment evaluated.", example: "reverse-text" }),
    env_version: z.string().meta({ description: "Its declared version when the job was created.", example: "1.0.0" }),
    model: z.string().meta({ description: "The model name sent to the model endpoint.", example: "gpt-4.1-mini" }),
    request: EvalRequest.meta({ description: "The options, with defaults filled in." }),
    progress: EvalProgress,
    summary: EvalSummary.nullable().meta({ description: "Set when the job has completed (or was cancelled or failed after some rollouts)." }),
    error: z.string().nullable().meta({ description: "Why the job failed." }),
    created_at: z.iso.datetime().meta({ description: "When the job was created (ISO 8601, UTC)." }),
    started_at: z.iso.datetime().nullable().meta({ description: "When a runner first took it; null while queued." }),
    finished_at: z.iso.datetime().nullable().meta({ description: "When it completed, failed or was cancelled; null until then." }),
  })
  .strict()
  .meta({ id: "EvalJob", description: "An evaluation job run by the server." });
export type EvalJob = z.infer<typeof EvalJob>;

/** The answer to `DELETE /v1/evals/{eval_id}`. */
export const EvalDeleteResponse = z
  .object({
    eval_id: EvalId,
    deleted: z.literal(true).meta({ description: "Always true: the job and its rollouts are gone (a second delete answers 404)." }),
    rollouts_deleted: z.number().int().min(0).meta({ description: "Stored rollouts removed with the job." }),
  })
  .strict()
  .meta({
    id: "EvalDeleteResponse",
    description: "A deleted evaluation job.",
    example: { eval_id: "ev_4f1c9a0b2d3e4f5a6b7c8d9e0f1a2b3c", deleted: true, rollouts_deleted: 15 },
  });
export type EvalDeleteResponse = z.infer<typeof EvalDeleteResponse>;

export const EvalJobList = z.object({ evals: z.array(EvalJob).meta({ description: "Evaluation jobs, newest first." }) }).strict().meta({ id: "EvalJobList" });
export type EvalJobList = z.infer<typeof EvalJobList>;

export const EvalListQuery = z
  .object({
    status: EvalStatus.optional(),
    limit: z.coerce.number().int().min(1).max(200).default(50).meta({ description: "Most jobs to return (1–200, default 50).", example: 50 }),
  })
  .strict();

export const EvalResultsQuery = z
  .object({
    offset: z.coerce.number().int().min(0).default(0).meta({ description: "Rollouts to skip, in (example_id, rollout_index) order." }),
    limit: z.coerce.number().int().min(1).max(100_000).optional().meta({ description: "At most this many rollouts (default: all)." }),
  })
  .strict();

/** `data:` of the `progress` server-sent event; the closing `done` event carries the whole EvalJob. */
export const EvalProgressEvent = z
  .object({ eval_id: EvalId, status: EvalStatus, progress: EvalProgress })
  .strict()
  .meta({ id: "EvalProgressEvent" });
export type EvalProgressEvent = z.infer<typeof EvalProgressEvent>;

/**
 * One server-sent event of `GET /v1/evals/{eval_id}/events`, as OpenAPI describes an event
 * stream: the event's fields (`event`, `data`, `id`), with `data` a JSON text whose schema is
 * named by `contentSchema`. `progress` carries an EvalProgressEvent, the last event, `done`,
 * the whole EvalJob. {@link parseEvalStreamEvent} checks a received event against both.
 */
const sseData = (ref: string, description: string) =>
  z.string().meta({ description, contentMediaType: "application/json", contentSchema: { $ref: `#/components/schemas/${ref}` } });
const sseId = z.string().meta({ description: "Event number, from 1.", example: "3" });
export const EvalStreamEvent = z
  .union([
    z
      .object({ event: z.literal("progress").meta({ description: "Always `progress`." }), data: sseData("EvalProgressEvent", "JSON of an EvalProgressEvent."), id: sseId })
      .strict()
      .meta({ id: "EvalStreamProgress", description: "Sent at once and whenever a rollout is stored." }),
    z
      .object({ event: z.literal("done").meta({ description: "Always `done`." }), data: sseData("EvalJob", "JSON of the finished EvalJob."), id: sseId })
      .strict()
      .meta({ id: "EvalStreamDone", description: "Sent once when the job ends; the stream closes after it." }),
  ])
  .meta({ id: "EvalStreamEvent", description: "A server-sent event of an evaluation's event stream." });
export type EvalStreamEvent = z.infer<typeof EvalStreamEvent>;

/** Checks one received event (its `event`, `data` and `id` fields) and parses its data with the schema its kind names. */
export function parseEvalStreamEvent(fields: { event?: string; data: string; id?: string }):
  | { event: "progress"; id: string; data: EvalProgressEvent }
  | { event: "done"; id: string; data: EvalJob } {
  const event = EvalStreamEvent.parse(fields);
  const data: unknown = JSON.parse(event.data);
  return event.event === "progress" ? { event: "progress", id: event.id, data: EvalProgressEvent.parse(data) } : { event: "done", id: event.id, data: EvalJob.parse(data) };
}
