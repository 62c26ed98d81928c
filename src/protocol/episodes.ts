import { z } from "zod";
import { AssistantMessage, ChatMessage, ToolDefinition } from "./messages.js";
import { EnvHash, Split, TaskIndex } from "./envs.js";
import { AgentRun, AgentSpec, ModelCall, ModelEndpoint } from "./model-endpoint.js";

const JsonObject = z.record(z.string(), z.unknown());

// Fields several responses share, described once.
const EnvIdField = z.string().meta({ description: "Id of the environment the episode runs.", example: "reverse-text" });
const EnvVersionField = z.string().meta({ description: "The environment's declared version when the episode was reset.", example: "1.0.0" });
const IndexField = z.number().int().meta({ description: "The task's row in its split; for a procedural split, the task's seed.", example: 0 });
const SeedField = z.number().int().meta({ description: "Seed of the episode's randomness.", example: 42 });
const DoneField = z.boolean().meta({ description: "True once the episode has ended: further steps are 409 `episode_done`; score it." });
const MaxTurnsField = z.number().int().meta({ description: "Assistant messages after which the episode stops (truncated).", example: 1 });
const ExpiresAtField = z.iso.datetime().meta({ description: "When the episode expires unless used again (ISO 8601, UTC); each request on it pushes this back by its TTL.", example: "2026-11-22T12:00:00.000Z" });
const StopReasonField = z.string().nullable().meta({ description: "Which stop condition ended the episode; null while it runs.", example: "single_turn" });
const TruncatedField = z.boolean().meta({ description: "True when the episode stopped on a limit (turns, budget) rather than finishing." });
const ScoredAtField = z.iso.datetime().meta({ description: "When the score was computed (ISO 8601, UTC).", example: "2026-11-22T12:00:05.000Z" });

const SeatNameField = z.string().min(1).max(32).meta({ description: "A seat's name, as the environment's `seats` list it.", example: "x" });
const ToPlayField = z.string().nullable().optional().meta({
  description: "A seated episode's: the seat that moves next (its `messages` are what that seat sees next); null once the episode is done. Absent for a one-player episode.",
  example: "o",
});

export const EpisodeId = z.string().min(1).max(64).meta({ description: "Episode id.", example: "ep_01JH7Q2Z8X4N5R6S7T8V9W0XYZ" });

export const ResetRequest = z
  .object({
    split: Split.optional().meta({ description: "Split to draw the task from (default `train`)." }),
    index: TaskIndex.optional().meta({ description: "Dataset row; for a procedural environment the task's seed (at most 2^32 − 1).", example: 0 }),
    seed: z.number().int().min(0).max(2 ** 32 - 1).optional().meta({ description: "Seed of the episode's randomness (and of the task when no index is given).", example: 42 }),
    args: JsonObject.optional().meta({ description: "Environment arguments, validated by the environment's `args_schema`." }),
    ttl_seconds: z.number().int().min(1).optional().meta({ description: "Time to live after the last activity; capped by the server's maximum.", example: 3600 }),
    metadata: JsonObject.optional().meta({ description: "Free-form data stored with the episode and returned with it." }),
    agent: AgentSpec.optional(),
    seats: z
      .record(z.string().min(1).max(32), z.string().min(1).max(32))
      .optional()
      .meta({
        description:
          'A seated environment\'s: who plays each seat, `"client"` or one of the environment\'s policies (GET /v1/envs/{id} lists them); seats left out take the environment\'s default. 422 `seats_unsupported` on a one-player environment.',
        example: { x: "client", o: "minimax" },
      }),
  })
  .strict()
  .meta({ id: "ResetRequest", example: { split: "train", index: 0 } });
export type ResetRequest = z.infer<typeof ResetRequest>;

export const EpisodeStatus = z.enum(["active", "done", "closed", "expired"]).meta({ description: "Lifecycle state." });
export type EpisodeStatus = z.infer<typeof EpisodeStatus>;

export const ResetResponse = z
  .object({
    episode_id: EpisodeId,
    env_id: EnvIdField,
    env_version: EnvVersionField,
    env_hash: EnvHash.meta({ description: "Content hash of the environment the episode runs on, recorded with it (docs/versions.md)." }),
    split: Split,
    index: IndexField,
    seed: SeedField,
    turn: z.literal(0).meta({ description: "Always 0: send it with the first step." }),
    messages: z.array(ChatMessage).meta({ description: "Opening messages: pass them to the model as the prompt. A seated episode's: the opening of the seat in `to_play`." }),
    tools: z.array(ToolDefinition).meta({ description: "Tools to offer the model (empty when the environment has none)." }),
    to_play: ToPlayField,
    done: DoneField,
    max_turns: MaxTurnsField,
    expires_at: ExpiresAtField,
    model_endpoint: ModelEndpoint.optional().meta({ description: "With `agent`: the episode's model endpoint and its key (the agent in the container gets its own URLs to the same endpoint)." }),
  })
  .strict()
  .meta({ id: "ResetResponse" });
export type ResetResponse = z.infer<typeof ResetResponse>;

/** Most tokens one step's `sampled` may carry: a long completion, not a corpus. */
export const MAX_SAMPLED_TOKENS = 131_072;

export const TemplateHash = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[\x21-\x7e]+$/, "printable ASCII, no spaces")
  .meta({
    description:
      "Identifies the tokenizer and chat template that produced the tokens (e.g. a sha256 of the tokenizer's name, revision and template text). Opaque to the server: it only compares it with the previous turn's.",
    example: "sha256:9f2c4e0b7a1d",
  });

export const SampledTokens = z
  .object({
    token_ids: z
      .array(z.number().int().min(0).max(2 ** 31 - 1))
      .max(MAX_SAMPLED_TOKENS)
      .meta({ description: "The completion's token ids exactly as the model sampled them (no re-tokenization).", example: [27, 9217, 29, 385] }),
    logprobs: z
      .array(z.number().finite())
      .max(MAX_SAMPLED_TOKENS)
      .optional()
      .meta({ description: "The sampler's log-probability of each token in `token_ids` (same length).", example: [-0.01, -0.2, -0.003, -1.5] }),
    template_hash: TemplateHash.optional(),
    prompt_token_ids: z
      .array(z.number().int().min(0).max(2 ** 31 - 1))
      .max(MAX_SAMPLED_TOKENS)
      .optional()
      .meta({ description: "The prompt's token ids as the sampler saw them (recorded by a harness episode's endpoint from a vLLM upstream).", example: [151644, 872, 198] }),
  })
  .strict()
  // One logprob per token id is checked by the server (400 invalid_request), not here: a
  // refinement would make zod-to-openapi inline this schema instead of naming it.
  .meta({
    id: "SampledTokens",
    description:
      "Optional on a step (`sampled`): what the trainer sampled for its assistant message. Stored with the turn and returned by GET /v1/episodes/{id} (`turns[].sampled`, null when a step carried none), so a trainer rebuilds its batch from the server after a crash. A retry of an applied step keeps what the first request stored (only `message` is compared).",
  });
export type SampledTokens = z.infer<typeof SampledTokens>;

export const StepRequest = z
  .object({
    turn: z.number().int().min(0).meta({ description: "The turn the client believes the episode is at (0 for the first step). Makes retries safe.", example: 0 }),
    message: AssistantMessage,
    // Described on SampledTokens: a description here would inline the schema instead of naming it.
    sampled: SampledTokens.optional(),
    seat: SeatNameField.optional().meta({
      description: "A seated episode's: the seat this message is for (default: the only seat a client plays). 409 `not_your_turn` when another seat is to play.",
      example: "x",
    }),
  })
  .strict()
  .meta({ id: "StepRequest", example: { turn: 0, message: { role: "assistant", content: "<answer>olleh</answer>" } } });
export type StepRequest = z.infer<typeof StepRequest>;

export const TemplateChange = z
  .object({
    turn: z.number().int().min(1).meta({ description: "The turn whose step first carried the new hash.", example: 7 }),
    from: TemplateHash,
    to: TemplateHash,
  })
  .strict()
  .meta({
    id: "TemplateChange",
    description:
      "The tokenizer/chat template changed between two turns of one episode's trajectory. A step's response carries it (`template_change`) when that step's `sampled.template_hash` differs from the one in effect before it; the episode lists them all (`template_changes`).",
  });
export type TemplateChange = z.infer<typeof TemplateChange>;

export const StepResponse = z
  .object({
    episode_id: EpisodeId,
    turn: z.number().int().meta({ description: "The turn the episode is at after this step: send it with the next step." }),
    messages: z.array(ChatMessage).meta({
      description:
        "The environment's reply: tool results, feedback, opponent moves. Empty when it has nothing to say. A seated episode's: what the seat in `to_play` has been shown since its last message (its whole opening before its first), or, once done, what the stepping seat was shown.",
    }),
    to_play: ToPlayField,
    done: DoneField,
    stop_reason: StopReasonField,
    truncated: TruncatedField,
    expires_at: ExpiresAtField,
    template_change: TemplateChange.optional(),
  })
  .strict()
  .meta({ id: "StepResponse" });
export type StepResponse = z.infer<typeof StepResponse>;

export const ScoreComponent = z
  .object({
    name: z.string().meta({ description: "The rubric component's name (see the environment's `rubric`).", example: "lcs_ratio" }),
    weight: z.number().meta({ description: "Its weight in `reward`; 0 for a metric reported but not rewarded.", example: 1 }),
    score: z.number().meta({ description: "What the reward function returned (usually 0–1).", example: 0.92 }),
    error: z.string().optional().meta({ description: "Set when the reward function failed; its score is then 0." }),
  })
  .strict()
  .meta({ id: "ScoreComponent" });
export type ScoreComponent = z.infer<typeof ScoreComponent>;

export const SeatScore = z
  .object({
    reward: z.number().meta({ description: "This seat's weighted reward.", example: 1 }),
    components: z.array(ScoreComponent).meta({ description: "This seat's components, in rubric order." }),
    metrics: z.record(z.string(), z.number()).meta({ description: "This seat's figures (its moves, wins, draws, losses)." }),
  })
  .strict()
  .meta({ id: "SeatScore", description: "One seat's score: the rubric run over that seat's own conversation." });
export type SeatScore = z.infer<typeof SeatScore>;

export const Score = z
  .object({
    reward: z.number().meta({ description: "Weighted sum of the components. For a seated episode: the first client-played seat's reward (see `seats`).", example: 0.93 }),
    components: z.array(ScoreComponent).meta({ description: "One entry per rubric component, in rubric order." }),
    metrics: z.record(z.string(), z.number()).meta({ description: "Figures reported beside the reward (turns, tool calls, zero-weight components)." }),
    seats: z
      .record(z.string(), SeatScore)
      .optional()
      .meta({ description: "A seated episode's score per seat, every seat included (the environment's policies' too); absent for a one-player episode." }),
  })
  .strict()
  .meta({ id: "Score", description: "An episode's score: the weighted reward and what it is made of." });
export type Score = z.infer<typeof Score>;

/**
 * Codes a score component's `error` starts with (`"verifier_timeout: …"`) when the rollout
 * could not be scored at all: its 0 is not one the agent earned, so a trainer masks it and
 * an evaluation counts it as an error, apart from reward 0. Sandboxed environments report
 * these (docs/sandboxes.md), and `edgegym serve` reports `score_timeout` for a `--env`
 * module's rubric that ran past its time budget (docs/authoring.md#time-budget); a judge
 * failure is not one (the judge's verdict is missing, the rollout itself was whole).
 */
export const SCORE_FAILURE_CODES = ["verifier_timeout", "reward_file_missing", "reward_file_empty", "reward_file_invalid", "sandbox_lost", "score_timeout"] as const;
export type ScoreFailureCode = (typeof SCORE_FAILURE_CODES)[number];

/** The first weighted component that failed with one of `SCORE_FAILURE_CODES`, or null. */
export function scoreFailure(score: Score): { code: ScoreFailureCode; component: string; message: string } | null {
  for (const c of score.components) {
    if (c.weight === 0 || !c.error) continue;
    const code = c.error.slice(0, c.error.indexOf(":")) as ScoreFailureCode;
    if ((SCORE_FAILURE_CODES as readonly string[]).includes(code)) return { code, component: c.name, message: c.error };
  }
  return null;
}

export const ScoreResponse = z
  .object({ episode_id: EpisodeId, score: Score, scored_at: ScoredAtField })
  .strict()
  .meta({ id: "ScoreResponse" });
export type ScoreResponse = z.infer<typeof ScoreResponse>;

export const EpisodeParent = z
  .object({
    episode_id: EpisodeId,
    turn: z.number().int().min(0).meta({ description: "The parent's turn this episode was forked after: its transcript up to that turn is this episode's prefix.", example: 12 }),
  })
  .strict()
  .meta({ id: "EpisodeParent", description: "The episode and turn a fork was made from (`parent`; null for an episode started by reset)." });
export type EpisodeParent = z.infer<typeof EpisodeParent>;

/** Most turns one page of GET /v1/episodes/{id} may hold when the client asks for a page. */
export const MAX_PAGE_TURNS = 1000;

export const EpisodeQuery = z
  .object({
    from_turn: z.coerce
      .number()
      .int()
      .min(0)
      .optional()
      .meta({ description: "First turn to return (default 0: the opening messages). Turn t ≥ 1 is the t-th assistant message and the environment's reply to it.", example: 0 }),
    limit: z.coerce
      .number()
      .int()
      .min(1)
      .max(MAX_PAGE_TURNS)
      .optional()
      .meta({ description: `Most turns to return (1–${MAX_PAGE_TURNS}); default: every turn from \`from_turn\` on. \`next_from_turn\` says where the next page starts.`, example: 100 }),
    seat: SeatNameField.optional().meta({
      description:
        "A seated episode's: return that seat's own conversation (what it was shown and what it sent, without names), ready to train on. Without it, a seated episode's whole log (every message named for its seat) is returned only once the episode is done: while it runs, other seats' hidden information is in it.",
      example: "x",
    }),
  })
  .strict()
  .meta({ id: "EpisodeQuery" });
export type EpisodeQuery = z.infer<typeof EpisodeQuery>;

export const EpisodeTurn = z
  .object({
    turn: z.number().int().min(0).meta({ description: "0: the opening messages; t ≥ 1: the t-th assistant message and the environment's reply.", example: 1 }),
    message_count: z.number().int().min(0).meta({ description: "How many entries of `messages` this turn contributes, in order.", example: 2 }),
    sampled: z.union([SampledTokens, z.null()]),
    call: ModelCall.optional().meta({ description: "A harness episode's model call (request, reply, usage, latency) that made this turn." }),
    created_at: z.iso.datetime().meta({
      description: "When the turn was stored: turn 0 at reset, turn t when its step was applied (a fork's prefix keeps its parent's times). The gap to the previous turn is the time between steps: the client's generation plus the environment's reply.",
      example: "2026-11-22T12:00:03.120Z",
    }),
  })
  .strict()
  .meta({ id: "EpisodeTurn" });
export type EpisodeTurn = z.infer<typeof EpisodeTurn>;

export const Episode = z
  .object({
    episode_id: EpisodeId,
    env_id: EnvIdField,
    env_version: EnvVersionField,
    env_hash: EnvHash.nullable().meta({ description: "Content hash of the environment at reset; null for an episode stored before hashes were recorded." }),
    split: Split,
    index: IndexField,
    seed: SeedField,
    args: JsonObject.meta({ description: "The environment arguments given at reset (empty when none)." }),
    status: EpisodeStatus,
    turn: z.number().int().meta({ description: "The turn the episode is at: send it with the next step.", example: 0 }),
    max_turns: MaxTurnsField,
    done: DoneField,
    stop_reason: StopReasonField,
    truncated: TruncatedField,
    error: z.string().nullable().meta({ description: "Why the environment failed, when the episode stopped with `env_error`." }),
    messages: z.array(ChatMessage).meta({
      description: "The transcript of the turns returned (all of them unless paged): opening messages (turn 0), then each assistant message and the environment's reply. A fork's transcript starts with its parent's.",
    }),
    from_turn: z.number().int().min(0).meta({ description: "The first turn of `messages` (the request's `from_turn`, default 0)." }),
    next_from_turn: z.number().int().min(1).nullable().meta({ description: "Where the next page starts; null when `messages` reaches the episode's current turn." }),
    turns: z.array(EpisodeTurn).meta({ description: "One entry per turn returned, in order: how many messages it contributes and the sampled tokens stored with it." }),
    template_changes: z.array(TemplateChange).meta({ description: "Every turn (of the whole episode, prefix included) whose template hash differed from the one before: train on such a trajectory only if you mean to." }),
    parent: EpisodeParent.nullable(),
    tools: z.array(ToolDefinition).meta({ description: "Tools the episode offers the model (empty when none)." }),
    seats: z
      .record(z.string(), z.string())
      .optional()
      .meta({ description: "A seated episode's: who plays each seat (`client` or the environment's policy), as recorded at reset.", example: { x: "client", o: "minimax" } }),
    seat: z.string().optional().meta({ description: "The seat whose view `messages` is (the request's `seat`)." }),
    to_play: ToPlayField,
    score: Score.nullable(),
    agent: AgentRun.optional().meta({ description: "A harness episode's agent: its status, exit code, output tail and time." }),
    metadata: JsonObject.meta({ description: "The free-form data given at reset or fork." }),
    created_at: z.iso.datetime().meta({ description: "When the episode was reset or forked (ISO 8601, UTC)." }),
    updated_at: z.iso.datetime().meta({ description: "When the episode last changed: a step, a score, a close (ISO 8601, UTC)." }),
    expires_at: ExpiresAtField,
  })
  .strict()
  .meta({ id: "Episode" });
export type Episode = z.infer<typeof Episode>;

export const CloseResponse = z
  .object({ episode_id: EpisodeId, status: EpisodeStatus })
  .strict()
  .meta({ id: "CloseResponse" });
export type CloseResponse = z.infer<typeof CloseResponse>;

/** Most episodes one fork request may start. */
export const MAX_FORKS_PER_REQUEST = 64;

export const ForkRequest = z
  .object({
    turn: z.number().int().min(0).optional().meta({ description: "Fork from the state after this turn (0: right after reset). Default: the episode's current turn.", example: 3 }),
    n: z.number().int().min(1).max(MAX_FORKS_PER_REQUEST).optional().meta({ description: `How many episodes to start (1–${MAX_FORKS_PER_REQUEST}, default 1); each counts against the open-episodes quota.`, example: 8 }),
    ttl_seconds: z.number().int().min(1).optional().meta({ description: "Time to live of the new episodes after their last activity (default: the parent's); capped by the server's maximum.", example: 3600 }),
    metadata: JsonObject.optional().meta({ description: "Free-form data stored with each new episode (default: none)." }),
  })
  .strict()
  .meta({ id: "ForkRequest", example: { turn: 3, n: 8 } });
export type ForkRequest = z.infer<typeof ForkRequest>;

export const ForkedEpisode = z
  .object({
    episode_id: EpisodeId,
    expires_at: ExpiresAtField,
  })
  .strict()
  .meta({ id: "ForkedEpisode" });
export type ForkedEpisode = z.infer<typeof ForkedEpisode>;

export const ForkResponse = z
  .object({
    parent: EpisodeParent,
    episodes: z.array(ForkedEpisode).meta({ description: "The new episodes, in order. Each is at `turn`, active, and is stepped on its own (send `turn` with its first step)." }),
    turn: z.number().int().min(0).meta({ description: "The turn every new episode is at: send it with each one's first step." }),
    max_turns: MaxTurnsField,
    tools: z.array(ToolDefinition).meta({ description: "Tools to offer the model (as the parent's)." }),
  })
  .strict()
  .meta({ id: "ForkResponse" });
export type ForkResponse = z.infer<typeof ForkResponse>;
