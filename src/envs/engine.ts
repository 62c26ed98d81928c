import type { AssistantMessage, ChatMessage, ErrorCode, Score, Split } from "../protocol/index.js";
import { createRng, mixSeed } from "./rng.js";
import { scoreRubric, type RewardInputs } from "./rubric.js";
import { executeToolCalls } from "./tools.js";
import type { AnyEnvironment, StopCheck, TaskRow } from "./types.js";
import { cloneState } from "./clone-state.js";
import { addressed, applySeatMove, clientSeats, playPolicies, resolveSeats, seatAssignment, SeatError, seatedOpening, seatPromptLength, stepSeat, type SeatMove } from "./seat-play.js";
import { seatView, type SeatAssignment } from "./seats.js";

/**
 * The engine runs an environment one request at a time. It holds nothing between
 * calls: everything needed for the next step is in the snapshot the caller stores, so
 * the HTTP server, the in-process evaluator and tests all drive episodes the same way.
 */
export interface EpisodeSnapshot {
  envId: string;
  envVersion: string;
  split: Split;
  index: number;
  seed: number;
  args: Record<string, unknown>;
  state: unknown;
  /**
   * Opening messages, then each assistant message and the environment's reply; for a
   * step of an environment that does not read history, the stand-in `historyNotLoaded`.
   */
  messages: ChatMessage[];
  /** How many of `messages` are the opening prompt. */
  promptLength: number;
  turn: number;
  done: boolean;
  stopReason: string | null;
  truncated: boolean;
  /** Set when the environment failed mid-episode (the episode then stops with `env_error`). */
  error: string | null;
  /** The stop conditions' running totals (by index; see StopTally); null or absent when none keeps one, or not known yet. */
  tallies?: number[] | null;
}

/**
 * Whether a step of this environment must load the transcript: its respond or one of its
 * stop conditions reads it, or a condition keeps a tally the episode does not have yet
 * (an episode stored before tallies, or a condition added since): then it is summed once.
 */
export function needsHistory(env: AnyEnvironment, tallies?: readonly number[] | null): boolean {
  if (env.readsHistory === true || env.stopConditions.some((c) => c.readsHistory === true)) return true;
  return env.stopConditions.some((c) => c.tally) && !talliesFit(env, tallies);
}

function talliesFit(env: AnyEnvironment, tallies: readonly number[] | null | undefined): tallies is readonly number[] {
  return Array.isArray(tallies) && tallies.length === env.stopConditions.length;
}

/** The stop conditions' running totals over a whole transcript (0 for a condition without a tally); null when none keeps one. */
export function tallyTranscript(env: AnyEnvironment, messages: readonly ChatMessage[], promptLength: number): number[] | null {
  if (!env.stopConditions.some((c) => c.tally)) return null;
  return env.stopConditions.map(({ tally }) => (tally ? messages.reduce((n, m, i) => n + tally.count(m, i < promptLength), 0) : 0));
}

const unloaded = new WeakSet<object>();

/**
 * Stands in for the transcript of a step that did not load it: any read throws, saying
 * which flag to set, so an environment that reads history without declaring it fails
 * loudly (`env_error`) instead of seeing an empty conversation.
 */
export function historyNotLoaded(envId: string): ChatMessage[] {
  const fail = (): never => {
    throw new Error(`${envId} read the transcript (ctx.messages) without declaring readsHistory: true; set it on the environment (or its stop condition)`);
  };
  const proxy = new Proxy([] as ChatMessage[], { get: fail, has: fail, ownKeys: fail, getOwnPropertyDescriptor: fail });
  unloaded.add(proxy);
  return proxy;
}

/** False for the stand-in of `historyNotLoaded`. */
export function isHistoryLoaded(messages: readonly ChatMessage[]): boolean {
  return !unloaded.has(messages);
}

/** A failure the caller maps to an API error; `code` is a protocol error code. */
export class EngineError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = "EngineError";
  }
}

const SETUP_STREAM = 0x5e7a9;

export interface StartOptions {
  split?: Split | undefined;
  index?: number | undefined;
  seed?: number | undefined;
  args?: Record<string, unknown> | undefined;
  /** The id the server will store the episode under, handed to `setup` (SetupContext.episodeId). */
  episodeId?: string | undefined;
  /** The tenant that asked, handed to `setup` (SetupContext.tenant). */
  tenant?: string | undefined;
  /** The episode runs an agent harness in its sandbox (SetupContext.harness). */
  harness?: boolean | undefined;
  /** A seated environment's: who plays which seat (the environment's defaults for the rest). */
  seats?: Record<string, string> | undefined;
}

function randomSeed(): number {
  return crypto.getRandomValues(new Uint32Array(1))[0] as number;
}

export function parseArgs(env: AnyEnvironment, raw: Record<string, unknown> | undefined): unknown {
  const parsed = env.argsSchema.safeParse(raw ?? {});
  if (!parsed.success) {
    throw new EngineError(
      "invalid_env_args",
      `args for ${env.id}: ${parsed.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ")}`,
      { issues: parsed.error.issues },
    );
  }
  return parsed.data;
}

/** Resolves which task an episode runs: explicit index, else derived from the seed. */
export function resolveTask(env: AnyEnvironment, opts: StartOptions): { split: Split; index: number; seed: number } {
  const split = opts.split ?? "train";
  const size = env.dataset.size(split);
  const seed = opts.seed ?? randomSeed();
  let index = opts.index;
  if (index === undefined) index = size === null ? seed : size === 0 ? 0 : mixSeed(seed, 0x7a5c) % size;
  if (size !== null && index >= size) {
    throw new EngineError("task_out_of_range", `${env.id} has ${size} rows in split "${split}"; index ${index} is out of range`);
  }
  return { split, index, seed };
}

/**
 * The task at (split, index). `args` are the episode's parsed args, passed on so a
 * procedural dataset can generate tasks that depend on them (difficulty, task family);
 * omitted (listing examples) the dataset uses its defaults.
 */
export async function loadTask(env: AnyEnvironment, split: Split, index: number, args?: unknown): Promise<TaskRow> {
  try {
    return await env.dataset.row(split, index, args);
  } catch (err) {
    if (err instanceof RangeError) throw new EngineError("task_out_of_range", err.message);
    throw err;
  }
}

/** A request's seat error as the engine's error (same code, details kept). */
function seatFailure<T>(run: () => T): T {
  try {
    return run();
  } catch (err) {
    if (err instanceof SeatError) throw new EngineError(err.code, err.message, err.details);
    throw err;
  }
}

/** The messages the model sees before its first turn (a seated environment's: every seat's, each named for its seat). */
export function openingMessages(env: AnyEnvironment, row: TaskRow): ChatMessage[] {
  if (env.seats) return seatedOpening(env, row);
  const out: ChatMessage[] = [];
  if (env.systemPrompt) out.push({ role: "system", content: env.systemPrompt });
  out.push(...env.fewShot);
  if (typeof row.prompt === "string") out.push({ role: "user", content: row.prompt });
  else out.push(...row.prompt);
  return out;
}

export async function startEpisode(env: AnyEnvironment, opts: StartOptions): Promise<EpisodeSnapshot> {
  const seats = seatFailure(() => resolveSeats(env, opts.seats));
  const args = parseArgs(env, opts.args);
  const { split, index, seed } = resolveTask(env, opts);
  const row = await loadTask(env, split, index, args);
  const setup = await env.setup(row, { args, rng: createRng(seed, 0, SETUP_STREAM), split, index, ...(opts.episodeId === undefined ? {} : { episodeId: opts.episodeId }), ...(opts.tenant === undefined ? {} : { tenant: opts.tenant }), ...(opts.harness ? { harness: true } : {}), ...(seats ? { seats } : {}) });
  let state = env.stateSchema.parse(setup.state);
  const messages = [...openingMessages(env, row), ...(seats ? addressed(env, setup.messages ?? []) : (setup.messages ?? []))];
  let done: SeatMove | null = null;
  if (seats) {
    const kept = seatAssignment(env, state);
    if (JSON.stringify(Object.entries(kept).sort()) !== JSON.stringify(Object.entries(seats).sort())) {
      throw new Error(`${env.id}: setup must keep the episode's seats in its state (EnvSeats.assignment returned ${JSON.stringify(kept)} for ${JSON.stringify(seats)})`);
    }
    // The environment's players who move before any client (minimax as X) move now: their moves are part of the opening.
    const moved = await playPolicies(env, state, messages, { args, seed, turn: 0, row });
    state = env.stateSchema.parse(moved.state);
    if (moved.done) done = moved;
  }
  return {
    envId: env.id,
    envVersion: env.version,
    split,
    index,
    seed,
    args: (args ?? {}) as Record<string, unknown>,
    state,
    messages,
    promptLength: messages.length,
    turn: 0,
    done: done !== null,
    stopReason: done?.stopReason ?? null,
    truncated: false,
    error: null,
    tallies: tallyTranscript(env, messages, messages.length),
  };
}

/** The tallies after a step: the earlier totals (summed from the transcript when the episode has none yet) plus this step's messages. */
function nextTallies(env: AnyEnvironment, snapshot: EpisodeSnapshot, message: AssistantMessage, reply: readonly ChatMessage[]): number[] | null {
  if (!env.stopConditions.some((c) => c.tally)) return null;
  const before = talliesFit(env, snapshot.tallies) ? snapshot.tallies : tallyTranscript(env, snapshot.messages, snapshot.promptLength);
  if (!before) return null;
  const added = [message, ...reply];
  return env.stopConditions.map(({ tally }, i) => (before[i] ?? 0) + (tally ? added.reduce((n, m) => n + tally.count(m, false), 0) : 0));
}

/** What a step's failure stores as the episode's error; a client that went away is not the environment's failure, and nothing of its step is stored. */
function envFailure(err: unknown, signal: AbortSignal | undefined): string {
  if (signal?.aborted) throw signal.reason;
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}

/** How a step ends: as the environment said (`envStop`), else by the first stop condition that fires, else not. */
function stepEnd(env: AnyEnvironment, envStop: string | null, check: StopCheck<unknown>, tallies: readonly number[] | null): { done: boolean; stopReason: string | null; truncated: boolean } {
  if (envStop !== null) return { done: true, stopReason: envStop, truncated: false };
  const stop = firstStop(env, check, tallies);
  return stop ? { done: true, stopReason: stop.name, truncated: stop.truncates } : { done: false, stopReason: null, truncated: false };
}

/** The first stop condition that fires after a step (each given its running total, when it keeps one). */
function firstStop(env: AnyEnvironment, check: StopCheck<unknown>, tallies: readonly number[] | null): { name: string; truncates: boolean } | null {
  for (const [i, condition] of env.stopConditions.entries()) {
    const tally = condition.tally ? tallies?.[i] : undefined;
    if (condition.check({ ...check, ...(tally === undefined ? {} : { tally }) })) return condition;
  }
  return null;
}

export interface StepOutcome {
  snapshot: EpisodeSnapshot;
  /**
   * The environment's reply to this message (tool results first, then its own messages).
   * A seated episode's: everything the step added to the log after the client's message
   * (its policies' moves included), each message named for its seat.
   */
  reply: ChatMessage[];
  /** The message as the log keeps it (a seated episode's is named for its seat). */
  message: AssistantMessage;
  /** The seat that sent it (a seated episode's; absent otherwise). */
  seat?: string;
}

export interface StepOptions {
  /**
   * The request's signal. When it aborts (the client went away), running tools are
   * stopped and the step throws the abort reason instead of returning: nothing of a
   * half-run step is stored, so the client's retry runs it afresh.
   */
  signal?: AbortSignal | undefined;
  /** A seated episode's: the seat this message is for (default: the only seat a client plays). */
  seat?: string | undefined;
}

/**
 * Applies one assistant message. The caller has already checked the turn and that the
 * episode is not done. An environment that throws ends the episode with `env_error`
 * rather than failing the request: the transcript so far is kept.
 */
export async function stepEpisode(env: AnyEnvironment, snapshot: EpisodeSnapshot, message: AssistantMessage, options: StepOptions = {}): Promise<StepOutcome> {
  if (env.seats) return stepSeated(env, snapshot, message, options);
  if (options.seat !== undefined) throw new EngineError("seats_unsupported", `${env.id} has one player and no seats; step without "seat"`);
  const { signal } = options;
  const turn = snapshot.turn + 1;
  const history = snapshot.messages;
  const row = await loadTask(env, snapshot.split, snapshot.index, snapshot.args);
  let state: unknown = cloneState(snapshot.state);
  const reply: ChatMessage[] = [];
  // Set by the step's end, or by its failure.
  let done: boolean;
  let stopReason: string | null;
  let truncated = false;
  let error: string | null = null;
  let toolErrors = 0;
  let tallies: number[] | null = snapshot.tallies ?? null;
  try {
    if (message.tool_calls?.length && env.tools.length) {
      const tools = await executeToolCalls(env.tools, message.tool_calls, state, { maxCalls: env.maxToolCallsPerMessage, signal });
      state = tools.state;
      toolErrors = tools.errors;
      reply.push(...tools.messages);
    }
    const args = env.argsSchema.parse(snapshot.args);
    const result = await env.respond(state, message, {
      args,
      rng: createRng(snapshot.seed, turn),
      turn,
      messages: history,
      task: row,
      toolResults: [...reply],
      signal,
    });
    state = env.stateSchema.parse(result.state);
    reply.push(...(result.messages ?? []));
    tallies = nextTallies(env, snapshot, message, reply);
    ({ done, stopReason, truncated } = stepEnd(env, result.done ? (result.stopReason ?? "env_done") : null, { state, turn, maxTurns: env.maxTurns, message, messages: history, promptLength: snapshot.promptLength, reply, toolErrors }, tallies));
    signal?.throwIfAborted();
  } catch (err) {
    error = envFailure(err, signal);
    done = true;
    stopReason = "env_error";
  }
  return {
    snapshot: {
      ...snapshot,
      state,
      // A step that did not load the transcript leaves it unloaded: the caller stores the turn, not the whole.
      messages: isHistoryLoaded(history) ? [...history, message, ...reply] : history,
      tallies,
      turn,
      done,
      stopReason,
      truncated,
      error,
    },
    reply,
    message,
  };
}

/**
 * A seated episode's step: the seat is checked (a request error, before anything runs),
 * its message applied, then the environment's players move until a client's seat is to
 * play. The stop conditions see the client's message and everything after it.
 */
async function stepSeated(env: AnyEnvironment, snapshot: EpisodeSnapshot, raw: AssistantMessage, options: StepOptions): Promise<StepOutcome> {
  const { signal } = options;
  const seat = seatFailure(() => stepSeat(env, snapshot.state, options.seat));
  const message: AssistantMessage = { ...raw, name: seat };
  const turn = snapshot.turn + 1;
  const history = snapshot.messages;
  const row = await loadTask(env, snapshot.split, snapshot.index, snapshot.args);
  const log: ChatMessage[] = [...history, message];
  let state: unknown = cloneState(snapshot.state);
  // Set by the step's end, or by its failure.
  let done: boolean;
  let stopReason: string | null;
  let truncated = false;
  let error: string | null = null;
  let tallies: number[] | null = snapshot.tallies ?? null;
  const reply: ChatMessage[] = [];
  try {
    const args = env.argsSchema.parse(snapshot.args);
    const ctx = { args, seed: snapshot.seed, turn, row, signal };
    const own = await applySeatMove(env, state, seat, message, log, ctx);
    log.push(...own.added);
    reply.push(...own.added);
    state = own.state;
    let toolErrors = own.toolErrors;
    let moved: SeatMove = own;
    if (!own.done) {
      moved = await playPolicies(env, state, log, ctx);
      reply.push(...moved.added);
      state = moved.state;
      toolErrors += moved.toolErrors;
    }
    tallies = nextTallies(env, snapshot, message, reply);
    ({ done, stopReason, truncated } = stepEnd(env, moved.done ? (moved.stopReason ?? "game_over") : null, { state, turn, maxTurns: env.maxTurns, message, messages: history, promptLength: snapshot.promptLength, reply, toolErrors }, tallies));
    signal?.throwIfAborted();
  } catch (err) {
    error = envFailure(err, signal);
    done = true;
    stopReason = "env_error";
  }
  return {
    snapshot: { ...snapshot, state, messages: [...history, message, ...reply], tallies, turn, done, stopReason, truncated, error },
    reply,
    message,
    seat,
  };
}

function countToolCalls(messages: readonly ChatMessage[]): number {
  return messages.reduce((n, m) => n + (m.role === "assistant" ? (m.tool_calls?.length ?? 0) : 0), 0);
}

/** Parsed env args for scoring; the raw stored args when they no longer parse (scoring never fails on them). */
function scoringArgs(env: AnyEnvironment, raw: Record<string, unknown> | undefined): unknown {
  const parsed = env.argsSchema.safeParse(raw ?? {});
  return parsed.success ? parsed.data : raw;
}

/** What the rubric reads about one finished (or stopped) episode. */
export async function episodeRewardInputs(env: AnyEnvironment, snapshot: EpisodeSnapshot): Promise<RewardInputs<unknown>> {
  const row = await loadTask(env, snapshot.split, snapshot.index, snapshot.args);
  return {
    prompt: snapshot.messages.slice(0, snapshot.promptLength),
    completion: snapshot.messages.slice(snapshot.promptLength),
    answer: row.answer ?? null,
    info: row.info ?? {},
    state: snapshot.state,
    parser: env.parser,
    task: row,
    args: scoringArgs(env, snapshot.args),
  };
}

/** Adds the engine's own figures (turns, tool calls) to an episode's score. */
export function addEpisodeMetrics(env: AnyEnvironment, snapshot: EpisodeSnapshot, score: Score): Score {
  score.metrics.turns = snapshot.turn;
  if (env.kind === "tool") score.metrics.tool_calls = countToolCalls(snapshot.messages.slice(snapshot.promptLength));
  return score;
}

export async function scoreEpisode(env: AnyEnvironment, snapshot: EpisodeSnapshot): Promise<Score> {
  if (env.seats) return scoreSeated(env, snapshot);
  const inputs = await episodeRewardInputs(env, snapshot);
  return addEpisodeMetrics(env, snapshot, await scoreRubric(env.rubric, inputs));
}

/** What the rubric reads about one seat of a seated episode: that seat's own conversation. */
export function seatRewardInputs(base: RewardInputs<unknown>, log: readonly ChatMessage[], seat: string): RewardInputs<unknown> {
  const view = seatView(log, seat);
  const promptLength = seatPromptLength(view);
  return { ...base, prompt: view.slice(0, promptLength), completion: view.slice(promptLength), seat };
}

/**
 * A seated episode's score: the rubric once per seat, over that seat's conversation. The
 * top-level reward is the first client-played seat's, so a caller that knows nothing of
 * seats (an evaluation of one model against the environment's policy) reads the right one.
 */
export async function scoreSeated(env: AnyEnvironment, snapshot: EpisodeSnapshot): Promise<Score> {
  const base = await episodeRewardInputs(env, snapshot);
  const names = (env.seats?.seats ?? []).map((s) => s.name);
  const seatScores = await Promise.all(names.map((seat) => scoreRubric(env.rubric, seatRewardInputs(base, snapshot.messages, seat))));
  return combineSeatScores(env, snapshot, names, seatScores);
}

/** The per-seat scores of one seated episode as one Score (`seats`, and the first client seat's at the top). */
export function combineSeatScores(env: AnyEnvironment, snapshot: EpisodeSnapshot, names: readonly string[], seatScores: readonly Score[]): Score {
  const seats: NonNullable<Score["seats"]> = {};
  names.forEach((seat, i) => {
    const s = seatScores[i] as Score;
    const moves = seatView(snapshot.messages, seat).filter((m) => m.role === "assistant").length;
    seats[seat] = { reward: s.reward, components: s.components, metrics: { ...s.metrics, moves } };
  });
  const primary = clientSeats(env, snapshot.state)[0] ?? names[0] ?? "";
  const top = seats[primary] ?? { reward: 0, components: [], metrics: {} };
  return addEpisodeMetrics(env, snapshot, { reward: top.reward, components: top.components, metrics: { ...top.metrics }, seats });
}

export type { SeatAssignment };

export interface CompletionItem {
  prompt: string | ChatMessage[];
  completion: string | ChatMessage[];
  answer?: string | undefined;
  info?: Record<string, unknown> | undefined;
  /** A seated environment's: whose conversation this is. */
  seat?: string | undefined;
}

/** What the rubric reads about a completion scored without an episode (state is null). */
export function completionRewardInputs(env: AnyEnvironment, item: CompletionItem, args?: Record<string, unknown>): RewardInputs<unknown> {
  const prompt: ChatMessage[] = typeof item.prompt === "string" ? [{ role: "user", content: item.prompt }] : item.prompt;
  const completion: ChatMessage[] = typeof item.completion === "string" ? [{ role: "assistant", content: item.completion }] : item.completion;
  const task: TaskRow = { prompt, answer: item.answer ?? null, info: item.info ?? {} };
  return {
    prompt,
    completion,
    answer: task.answer ?? null,
    info: task.info ?? {},
    state: null,
    parser: env.parser,
    task,
    args: scoringArgs(env, args),
    ...(item.seat === undefined ? {} : { seat: item.seat }),
  };
}

/** Scores a completion the caller already has, without an episode (state is null). */
export async function scoreCompletion(env: AnyEnvironment, item: CompletionItem, args?: Record<string, unknown>): Promise<Score> {
  const inputs = completionRewardInputs(env, item, args);
  const score = await scoreRubric(env.rubric, inputs);
  score.metrics.turns = inputs.completion.filter((m) => m.role === "assistant").length;
  return score;
}
