import { scoreFailure, type AssistantMessage, type ChatMessage, type EvalRollout, type EvalRolloutError, type Example, type Score, type Split } from "../protocol/index.js";
import type { EpisodeDriver } from "./driver.js";
import { EvalError, isAbortError } from "./errors.js";
import type { ChatModel } from "./model.js";
import { classifyModelError } from "./openai-model.js";
import { RetriesExhausted, withRetries, type RetryPolicy } from "./retry.js";
import { CLIENT_SEAT_PLAYER, clientSeatsOf, rolloutSeatsFrom, splitConversation } from "./seats.js";

/** One rollout to run: which row, which of its rollouts, with which episode seed. */
export interface RolloutSpec {
  example: Example;
  rolloutIndex: number;
  seed: number;
}

export interface RolloutContext {
  envId: string;
  split: Split;
  envArgs: Record<string, unknown>;
  /**
   * A seated environment's: who plays each seat (resolveRunSeats), sent with every reset.
   * The model plays each `client` seat, one conversation per seat. Absent: the
   * environment's defaults (and a seated row records the seats the model did not play
   * as played by "environment").
   */
  seats?: Readonly<Record<string, string>> | undefined;
  driver: EpisodeDriver;
  model: ChatModel;
  /** Extra chat-completion fields (max_tokens, temperature, …). */
  sampling: Readonly<Record<string, unknown>>;
  retry: RetryPolicy;
  /** Distinguishes this process's resets from an earlier attempt's (idempotency keys). */
  runKey: string;
  signal: AbortSignal;
  /** Monotonic milliseconds; injectable so tests can pin timings. */
  now?: () => number;
}

/**
 * One timed phase of a rollout in wall-clock Unix seconds: `reset` (the episode's
 * set-up), each `model` request, each environment `step`, and `score`. Kept beside the
 * row (not in it: the wire row carries only the summed `*_ms`) so a file writer can
 * give the timing the shape verifiers expects (src/eval/vf-formats.ts).
 */
export interface TimedSpan {
  kind: "reset" | "model" | "step" | "score";
  start: number;
  end: number;
  /** A seated rollout's model request: the seat it was for. */
  seat?: string;
}

const spansByRow = new WeakMap<EvalRollout, readonly TimedSpan[]>();

/** The phases `runRollout` timed for this row, in order; empty for a row it did not make. */
export function rolloutSpans(row: EvalRollout): readonly TimedSpan[] {
  return spansByRow.get(row) ?? [];
}

/** Top-level keys a metric may not shadow when metrics are repeated at the top of a row (`rescore` is what `edgegym rescore` adds). */
export const RESERVED_COLUMNS: ReadonlySet<string> = new Set([
  "example_id", "rollout_index", "task", "prompt", "completion", "answer", "info", "reward", "metrics", "components",
  "stop_condition", "is_completed", "is_truncated", "finish_reasons", "error", "timing", "token_usage", "seed", "episode_id", "tool_defs", "rescore", "seats",
]);

/** The model sees the transcript without the reasoning text some servers add (APIs reject it as input). */
function forModel(messages: readonly ChatMessage[]): ChatMessage[] {
  return messages.map((m) => {
    if (m.role !== "assistant" || m.reasoning_content === undefined) return m;
    const { reasoning_content: _dropped, ...rest } = m;
    return rest;
  });
}

function rolloutError(err: unknown, attempts: number): EvalRolloutError {
  const e = err instanceof RetriesExhausted ? err.last : err instanceof EvalError ? err : classifyModelError(err);
  const text = err instanceof Error ? err.message : String(err);
  return { error: e.serverCode ? `${e.code}:${e.serverCode}` : e.code, error_chain_str: text, error_chain_repr: text, attempts: err instanceof RetriesExhausted ? err.attempts : attempts };
}

/**
 * Each seat's whole conversation as the environment keeps it (the driver's `seatView`),
 * which adds what the model was never asked to answer (a loser's last message). Where
 * the driver cannot say, or fails to, the conversations the model was shown stand.
 */
async function seatViews(ctx: RolloutContext, episodeId: string, views: ReadonlyMap<string, ChatMessage[]>): Promise<Map<string, readonly ChatMessage[]>> {
  const out = new Map<string, readonly ChatMessage[]>(views);
  if (!ctx.driver.seatView) return out;
  for (const seat of views.keys()) {
    try {
      out.set(seat, await ctx.driver.seatView(episodeId, seat, ctx.signal));
    } catch (err) {
      if (ctx.signal.aborted || isAbortError(err)) throw err;
    }
  }
  return out;
}

/**
 * Runs one rollout to the end: reset, then model turn → environment step until the
 * episode is done, then scoring. Tool calls the model makes go to the environment in
 * the step (the server runs them); its replies go back to the model. A rollout that
 * fails (the model keeps failing after its retries, the environment refuses) is
 * returned with its error and reward 0, never dropped. Only an abort propagates.
 */
export async function runRollout(ctx: RolloutContext, spec: RolloutSpec): Promise<EvalRollout> {
  const now = ctx.now ?? (() => performance.now());
  const started = now();
  const startTime = Date.now() / 1000;
  const timing = { generation_ms: 0, env_ms: 0, scoring_ms: 0 };
  const usage = { input_tokens: 0, output_tokens: 0 };
  const finishReasons: string[] = [];
  let prompt: ChatMessage[] = spec.example.prompt;
  const completion: ChatMessage[] = [];
  let episodeId: string | null = null;
  let tools: EvalRollout["tool_defs"] = [];
  let stopCondition: string | null = null;
  let truncated = false;
  let score: Score | null = null;
  let error: EvalRolloutError | null = null;
  const spans: TimedSpan[] = [];
  const timed = async <T>(bucket: keyof typeof timing, kind: TimedSpan["kind"], run: () => Promise<T>, seat?: string | null): Promise<T> => {
    const t = now();
    const wallStart = Date.now() / 1000;
    try {
      return await run();
    } finally {
      const took = now() - t;
      timing[bucket] += took;
      spans.push({ kind, start: wallStart, end: wallStart + took / 1000, ...(seat ? { seat } : {}) });
    }
  };

  // A seated episode's conversations, one per seat the model plays: what that seat was shown and sent.
  const views = new Map<string, ChatMessage[]>();
  let seated = false;
  let seatConversations: Map<string, readonly ChatMessage[]> | null = null;
  try {
    const reset = await timed("env_ms", "reset", () =>
      ctx.driver.reset(
        ctx.envId,
        { split: ctx.split, index: spec.example.index, seed: spec.seed, args: ctx.envArgs, ...(ctx.seats ? { seats: { ...ctx.seats } } : {}) },
        `${ctx.runKey}-${spec.example.index}-${spec.rolloutIndex}`,
        ctx.signal,
      ),
    );
    episodeId = reset.episode_id;
    prompt = reset.messages;
    tools = reset.tools;
    seated = reset.to_play !== undefined;
    let toPlay = reset.to_play ?? null;
    if (toPlay !== null) views.set(toPlay, [...reset.messages]);
    let turn = 0;
    let done = reset.done;
    while (!done) {
      // One model on every seat it plays, each seat's request holding that seat's conversation only.
      const seat = seated ? toPlay : null;
      if (seated && seat === null) break;
      const history = seat === null ? [...prompt, ...completion] : (views.get(seat) ?? []);
      const reply = await timed("generation_ms", "model", () =>
        withRetries(
          () => ctx.model.complete({ messages: forModel(history), tools: tools ?? [], sampling: ctx.sampling }, ctx.signal),
          classifyModelError,
          ctx.retry,
          ctx.signal,
        ),
        seat,
      );
      const { message, finishReason, usage: used } = reply.value;
      finishReasons.push(finishReason);
      if (used) {
        usage.input_tokens += used.inputTokens;
        usage.output_tokens += used.outputTokens;
      }
      const request = { turn, message: message as AssistantMessage, ...(seat === null ? {} : { seat }) };
      if (seat === null) completion.push(message);
      else views.get(seat)?.push(message);
      const step = await timed("env_ms", "step", () => ctx.driver.step(episodeId as string, request, ctx.signal));
      if (seat === null) completion.push(...step.messages);
      else {
        // The reply is what the seat to play next sees (a stop condition may end the episode with one still named); with nobody to play, what the stepping seat saw last.
        toPlay = step.to_play ?? null;
        const to = toPlay ?? seat;
        const view = views.get(to) ?? [];
        view.push(...step.messages);
        views.set(to, view);
      }
      turn = step.turn;
      done = step.done;
      stopCondition = step.stop_reason;
      truncated = step.truncated;
    }
    score = await timed("scoring_ms", "score", () => ctx.driver.score(episodeId as string, ctx.signal));
    if (seated) seatConversations = await seatViews(ctx, episodeId, views);
  } catch (err) {
    if (ctx.signal.aborted || isAbortError(err)) throw err instanceof EvalError ? err : new EvalError("aborted", "aborted", false);
    error = rolloutError(err, 1);
  } finally {
    if (episodeId) await ctx.driver.close(episodeId);
  }

  // A seated rollout's top-level prompt and completion are its first model seat's conversation, as its top-level reward is that seat's.
  let seats: ReturnType<typeof rolloutSeatsFrom> | null = null;
  if (seated) {
    const assignment = ctx.seats ?? Object.fromEntries(Object.keys(score?.seats ?? Object.fromEntries(views)).map((seat) => [seat, views.has(seat) ? CLIENT_SEAT_PLAYER : "environment"]));
    const conversations = seatConversations ?? views;
    const primary = clientSeatsOf(assignment).find((seat) => conversations.has(seat)) ?? [...conversations.keys()][0];
    const view = primary === undefined ? undefined : conversations.get(primary);
    if (view) {
      const split = splitConversation(view);
      prompt = split.prompt;
      completion.splice(0, completion.length, ...split.completion);
    }
    if (score?.seats) seats = rolloutSeatsFrom(score, assignment, conversations);
  }

  // A score that could not be given (the verifier timed out, wrote no reward) is an error of the rollout, not a 0 it earned.
  const unscored = score && !error ? scoreFailure(score) : null;
  if (unscored) error = { error: `score_failed:${unscored.code}`, error_chain_str: unscored.message, error_chain_repr: unscored.message, attempts: 1 };
  const metrics: Record<string, number> = {};
  for (const c of score?.components ?? []) metrics[c.name] = c.score;
  Object.assign(metrics, score?.metrics ?? {});
  const row: EvalRollout = {
    example_id: spec.example.index,
    rollout_index: spec.rolloutIndex,
    task: ctx.envId,
    prompt,
    completion,
    ...(spec.example.answer !== null ? { answer: spec.example.answer } : {}),
    info: spec.example.info,
    reward: score?.reward ?? 0,
    metrics,
    components: score?.components ?? [],
    stop_condition: error ? null : stopCondition,
    is_completed: score !== null,
    is_truncated: truncated || finishReasons.includes("length"),
    finish_reasons: finishReasons,
    error,
    timing: { start_time: startTime, ...timing, total_ms: now() - started },
    token_usage: usage,
    seed: spec.seed,
    episode_id: ctx.driver.location === "in-process" ? null : episodeId,
    ...(tools && tools.length ? { tool_defs: tools } : {}),
    ...(seats ? { seats } : {}),
  };
  for (const [name, value] of Object.entries(metrics)) if (!RESERVED_COLUMNS.has(name)) row[name] = value;
  spansByRow.set(row, spans);
  return row;
}
