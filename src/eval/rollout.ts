import { scoreFailure, type AssistantMessage, type ChatMessage, type EvalRollout, type EvalRolloutError, type Example, type Score, type Split } from "../protocol/index.js";
import type { EpisodeDriver } from "./driver.js";
import { EvalError, isAbortError } from "./errors.js";
import type { ChatModel } from "./model.js";
import { classifyModelError } from "./openai-model.js";
import { RetriesExhausted, withRetries, type RetryPolicy } from "./retry.js";

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
}

const spansByRow = new WeakMap<EvalRollout, readonly TimedSpan[]>();

/** The phases `runRollout` timed for this row, in order; empty for a row it did not make. */
export function rolloutSpans(row: EvalRollout): readonly TimedSpan[] {
  return spansByRow.get(row) ?? [];
}

/** Top-level keys a metric may not shadow when metrics are repeated at the top of a row (`rescore` is what `edgegym rescore` adds). */
export const RESERVED_COLUMNS: ReadonlySet<string> = new Set([
  "example_id", "rollout_index", "task", "prompt", "completion", "answer", "info", "reward", "metrics", "components",
  "stop_condition", "is_completed", "is_truncated", "finish_reasons", "error", "timing", "token_usage", "seed", "episode_id", "tool_defs", "rescore",
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
  const timed = async <T>(bucket: keyof typeof timing, kind: TimedSpan["kind"], run: () => Promise<T>): Promise<T> => {
    const t = now();
    const wallStart = Date.now() / 1000;
    try {
      return await run();
    } finally {
      const took = now() - t;
      timing[bucket] += took;
      spans.push({ kind, start: wallStart, end: wallStart + took / 1000 });
    }
  };

  try {
    const reset = await timed("env_ms", "reset", () =>
      ctx.driver.reset(
        ctx.envId,
        { split: ctx.split, index: spec.example.index, seed: spec.seed, args: ctx.envArgs },
        `${ctx.runKey}-${spec.example.index}-${spec.rolloutIndex}`,
        ctx.signal,
      ),
    );
    episodeId = reset.episode_id;
    prompt = reset.messages;
    tools = reset.tools;
    let turn = 0;
    let done = reset.done;
    while (!done) {
      const reply = await timed("generation_ms", "model", () =>
        withRetries(
          () => ctx.model.complete({ messages: forModel([...prompt, ...completion]), tools: tools ?? [], sampling: ctx.sampling }, ctx.signal),
          classifyModelError,
          ctx.retry,
          ctx.signal,
        ),
      );
      const { message, finishReason, usage: used } = reply.value;
      finishReasons.push(finishReason);
      if (used) {
        usage.input_tokens += used.inputTokens;
        usage.output_tokens += used.outputTokens;
      }
      completion.push(message);
      const step = await timed("env_ms", "step", () => ctx.driver.step(episodeId as string, { turn, message: message as AssistantMessage }, ctx.signal));
      completion.push(...step.messages);
      turn = step.turn;
      done = step.done;
      stopCondition = step.stop_reason;
      truncated = step.truncated;
    }
    score = await timed("scoring_ms", "score", () => ctx.driver.score(episodeId as string, ctx.signal));
  } catch (err) {
    if (ctx.signal.aborted || isAbortError(err)) throw err instanceof EvalError ? err : new EvalError("aborted", "aborted", false);
    error = rolloutError(err, 1);
  } finally {
    if (episodeId) await ctx.driver.close(episodeId);
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
  };
  for (const [name, value] of Object.entries(metrics)) if (!RESERVED_COLUMNS.has(name)) row[name] = value;
  spansByRow.set(row, spans);
  return row;
}
