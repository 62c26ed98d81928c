import type { AssistantMessage, ChatMessage, EvalRollout, Score, Split } from "../protocol/index.js";
import { addEpisodeMetrics, scoreRubric, startEpisode, stepEpisode, type AnyEnvironment, type EpisodeSnapshot, type RewardInputs } from "../envs/index.js";
import { rescoreSeated } from "./rescore-seated.js";
import { RESERVED_COLUMNS } from "./rollout.js";
import type { RolloutSeat } from "./seats.js";

/**
 * How a rollout's final environment state was had for its rubric:
 * - `matched`: the environment was replayed over the stored assistant messages (setup,
 *   tools and replies; never the model) and said exactly what the stored transcript says;
 * - `diverged`: the replay said something else (the environment changed), so the rubric
 *   got no state (null), as stateless scoring does;
 * - `off`: replay was not asked for (state null);
 * - `failed`: replay threw (state null).
 */
export type ReplayOutcome = "matched" | "diverged" | "off" | "failed";

/** What `edgegym rescore` adds to each row it rescored. */
export interface RescoreNote {
  previous_reward: number;
  env_version: string;
  env_hash: string;
  replay: ReplayOutcome;
}

export interface RescoreContext {
  env: AnyEnvironment;
  /** The environment's content hash, recorded on each row. */
  envHash: string;
  /** The run's split and env args (metadata.json). */
  split: Split;
  envArgs: Record<string, unknown>;
  /** Rebuild the final state by replaying the environment over the stored messages (default true). */
  replay: boolean;
}

export type RescoredRollout = { row: EvalRollout; status: "rescored"; replay: ReplayOutcome } | { row: EvalRollout; status: "skipped"; reason: string };

const asMessages = (value: unknown, role: "user" | "assistant"): ChatMessage[] => (typeof value === "string" ? [{ role, content: value }] : (value as ChatMessage[]));

const canonical = (messages: readonly ChatMessage[]): string => JSON.stringify(messages);

/** The environment replayed over the stored assistant messages: its final snapshot when it says what was stored. */
async function replayState(ctx: RescoreContext, row: EvalRollout, prompt: ChatMessage[], completion: ChatMessage[]): Promise<{ outcome: ReplayOutcome; snapshot?: EpisodeSnapshot }> {
  if (!ctx.replay) return { outcome: "off" };
  try {
    let snapshot = await startEpisode(ctx.env, { split: ctx.split, index: row.example_id, seed: row.seed, args: ctx.envArgs });
    if (canonical(snapshot.messages) !== canonical(prompt)) return { outcome: "diverged" };
    // Bounded by the stored transcript: one step per stored assistant message, and it stops where the episode stops.
    for (const message of completion) {
      if (message.role !== "assistant") continue;
      if (snapshot.done) return { outcome: "diverged" };
      snapshot = (await stepEpisode(ctx.env, snapshot, message as AssistantMessage)).snapshot;
    }
    if (canonical(snapshot.messages) !== canonical([...prompt, ...completion])) return { outcome: "diverged" };
    return { outcome: "matched", snapshot };
  } catch {
    return { outcome: "failed" };
  }
}

/** The row with a new score in place of the old: reward, components, metrics (and their top-level copies). */
function withScore(row: EvalRollout, score: Score, note: RescoreNote, seats?: Record<string, RolloutSeat>): EvalRollout {
  const out: EvalRollout = { ...row, ...(seats ? { seats } : {}) };
  for (const name of Object.keys(row.metrics)) if (!RESERVED_COLUMNS.has(name)) delete out[name];
  const metrics: Record<string, number> = {};
  for (const c of score.components) metrics[c.name] = c.score;
  Object.assign(metrics, score.metrics);
  out.reward = score.reward;
  out.components = score.components;
  out.metrics = metrics;
  for (const [name, value] of Object.entries(metrics)) if (!RESERVED_COLUMNS.has(name)) out[name] = value;
  out.rescore = note;
  return out;
}

/**
 * Scores one stored rollout again with the environment's rubric as it is now, from the
 * row's own prompt, completion, answer and info. The model is never called. A failed
 * rollout (no complete transcript) is kept as it was. A seated environment's rollout is
 * replayed seat by seat from its `seats` record and scored per seat; one without that
 * record is kept as it was, with the reason.
 *
 * @example const { row } = await rescoreRollout(ctx, stored);
 */
export async function rescoreRollout(ctx: RescoreContext, row: EvalRollout): Promise<RescoredRollout> {
  if (row.error || !row.is_completed) return { row, status: "skipped", reason: "failed rollout (never scored)" };
  if (ctx.env.seats) {
    // Every seat's conversation and who played it are in the row's `seats` (src/eval/rescore-seated.ts).
    const seated = await rescoreSeated(ctx, row);
    if (!seated) return { row, status: "skipped", reason: `${ctx.env.id} has seats and this row records none (no "seats" column: written before edgegym recorded each seat); it cannot be replayed seat by seat` };
    const note: RescoreNote = { previous_reward: row.reward, env_version: ctx.env.version, env_hash: ctx.envHash, replay: seated.outcome };
    return { row: withScore(row, seated.score, note, seated.seats), status: "rescored", replay: seated.outcome };
  }
  const prompt = asMessages(row.prompt, "user");
  const completion = asMessages(row.completion, "assistant");
  const { outcome, snapshot } = await replayState(ctx, row, prompt, completion);
  const args = ctx.env.argsSchema.safeParse(ctx.envArgs);
  const task = { prompt, answer: row.answer ?? null, info: row.info ?? {} };
  const inputs: RewardInputs<unknown> = {
    prompt,
    completion,
    answer: task.answer,
    info: task.info,
    state: snapshot?.state ?? null,
    parser: ctx.env.parser,
    task,
    args: args.success ? args.data : ctx.envArgs,
  };
  const turns = completion.filter((m) => m.role === "assistant").length;
  const base: EpisodeSnapshot = snapshot ?? {
    envId: ctx.env.id,
    envVersion: ctx.env.version,
    split: ctx.split,
    index: row.example_id,
    seed: row.seed,
    args: ctx.envArgs,
    state: null,
    messages: [...prompt, ...completion],
    promptLength: prompt.length,
    turn: turns,
    done: true,
    stopReason: row.stop_condition,
    truncated: row.is_truncated,
    error: null,
  };
  const score = addEpisodeMetrics(ctx.env, base, await scoreRubric(ctx.env.rubric, inputs));
  const note: RescoreNote = { previous_reward: row.reward, env_version: ctx.env.version, env_hash: ctx.envHash, replay: outcome };
  return { row: withScore(row, score, note), status: "rescored", replay: outcome };
}
