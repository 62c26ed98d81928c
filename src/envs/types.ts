import type { z } from "zod";
import type { HarnessTarget } from "./sandbox/agent-state.js";
import type { AssistantMessage, ChatMessage, Score, Split, ToolDefinition } from "../protocol/index.js";
import type { EnvServices } from "./judges.js";
import type { Rng } from "./rng.js";
import type { Parser } from "./parsers/parser.js";
import type { Rubric } from "./rubric.js";
import type { Tool } from "./tools.js";
import type { EnvSeats, SeatAssignment } from "./seats.js";

/** One task: what the model is asked, and what the rubric checks against. */
export interface TaskRow {
  prompt: string | ChatMessage[];
  answer?: string | null;
  info?: Record<string, unknown>;
}

/**
 * Tasks by split. A finite split holds rows addressed by index; a procedural split
 * (size null) generates the task for any non-negative index, which acts as its seed.
 */
export interface Dataset {
  size(split: Split): number | null;
  /**
   * `args` are the episode's parsed environment args (undefined when listing examples):
   * a procedural dataset may generate differently for them; a fixed dataset ignores them.
   */
  row(split: Split, index: number, args?: unknown): TaskRow | Promise<TaskRow>;
  /**
   * A dataset loaded on first use (the operator's file or URL) resolves this once its rows
   * are in; until then `size` is null. The content hash waits for it, so a finite split is
   * hashed as the rows it holds, not as a procedural sample taken while it was loading.
   */
  ready?(): Promise<unknown>;
}

export interface SetupContext<Args> {
  args: Args;
  rng: Rng;
  split: Split;
  index: number;
  /**
   * The id the episode will be stored under (the server picks it before setup), so
   * resources made here can be labelled with their owner. Absent outside a server.
   */
  episodeId?: string;
  /** The tenant (API key name) that asked, for resources counted per tenant. Absent outside a server. */
  tenant?: string;
  /**
   * The episode will run an agent harness in its sandbox (reset with `agent`): the sandbox
   * must reach the server's model endpoint (and, for an offline task, nothing else).
   */
  harness?: boolean;
  /** A seated environment's episode: who plays each seat (defaults filled in). `setup` keeps it in the state (EnvSeats.assignment). */
  seats?: SeatAssignment;
}

/** Why an episode's resources are released. */
export type ReleaseReason = "closed" | "scored" | "duplicate";

/** Who the copies of a fork are for: the ids the server picked for them, and their tenant. */
export interface ForkResourcesContext {
  episodeIds: readonly string[];
  tenant?: string;
}

/**
 * Resources an episode owns outside the database (a container): the one part of its state
 * the server cannot copy or drop by writing a row. The server calls `release` when the
 * episode no longer needs them; an expiry or a crash is covered by the owner's sweep of
 * labelled resources, not by this hook. Forks of such episodes are refused
 * (`fork_unavailable`, reason `resources`) unless the environment has `fork`.
 */
export interface EpisodeResources<State> {
  /** Frees what `state` names. Best effort: a failure is logged, never an error to the client (the sweep retries). */
  release(state: State, reason: ReleaseReason): Promise<void>;
  /**
   * Copies the resources `state` names as they are now, once per fork, and returns each
   * fork's state (naming its copy), in the order of `episodeIds`. All or nothing: on a
   * failure it frees the copies it made and throws. Only the current turn can be copied (a
   * container has no history), so the server refuses a fork at an earlier turn
   * (`fork_unavailable`, reason `resources_history`).
   */
  fork?(state: State, context: ForkResourcesContext): Promise<State[]>;
  /** Set by environments whose episodes can run an agent harness in their sandbox (reset with `agent`). */
  harness?: {
    /** Where the agent of the episode in `state` runs. */
    target(state: State): HarnessTarget;
  };
}

export interface SetupResult<State> {
  state: State;
  /** Messages appended after the task's prompt (a board, a first observation). */
  messages?: ChatMessage[];
}

export interface RespondContext<Args> {
  args: Args;
  /** Seeded by (episode seed, turn): the same step replays the same way. */
  rng: Rng;
  /** The turn this message was sent at, counted from 1. */
  turn: number;
  /**
   * The transcript before this message. Loaded only for an environment that sets
   * `readsHistory: true` (loading it makes a step cost grow with the episode); for any
   * other, reading it throws, and the step ends with `env_error` saying so.
   */
  messages: readonly ChatMessage[];
  task: TaskRow;
  /** Tool results the server produced for this message's tool calls, in order. */
  toolResults: readonly ChatMessage[];
  /** Aborts when the client that sent the step goes away: long work should stop (its result is not stored). */
  signal?: AbortSignal | undefined;
  /** A seated environment's: the seat that sent `message` (a client's or a policy's). */
  seat?: string;
}

export interface RespondResult<State> {
  state: State;
  messages?: ChatMessage[];
  /** Set when the environment itself ends the episode (game over, final verdict). */
  done?: boolean;
  /** Reported as `stop_reason` when `done` (default `env_done`). */
  stopReason?: string;
}

export interface StopCheck<State> {
  state: State;
  turn: number;
  maxTurns: number;
  message: AssistantMessage;
  /** The transcript before this message (opening messages included). Loaded only for a condition with `readsHistory: true`. */
  messages: readonly ChatMessage[];
  /** How many of `messages` are the opening prompt (set by the engine). */
  promptLength?: number;
  /** The environment's reply to this message: tool results, then its own messages (set by the engine). */
  reply?: readonly ChatMessage[];
  /** How many of this message's tool calls failed (unknown tool, bad arguments, a throw, a timeout). */
  toolErrors?: number;
  /** The condition's running total with this step's messages added, when it has a `tally` (set by the engine). */
  tally?: number;
}

/**
 * A running total the engine keeps for a stop condition (tokens so far, say): a sum over
 * the transcript's messages, kept with the episode and grown by each step's messages, so
 * the condition's check needs no transcript and a step costs the same at any turn.
 */
export interface StopTally {
  /** What one message adds; `inPrompt` is true for the opening messages. */
  count(message: ChatMessage, inPrompt: boolean): number;
}

/** A named stop condition; the first that fires ends the episode and names its stop reason. */
export interface StopCondition<State> {
  name: string;
  /** True when stopping here cuts the episode short rather than finishing it. */
  truncates: boolean;
  /** True when `check` reads `messages` (the transcript): the server then loads it for every step of the episode. */
  readsHistory?: boolean;
  /** A running total `check` receives as `tally` instead of reading the transcript. */
  tally?: StopTally;
  check(input: StopCheck<State>): boolean;
}

export type EnvKind = "single_turn" | "multi_turn" | "tool";

/** Where an environment can run; `python` needs Node's worker threads, for instance. */
export type Runtime = "node" | "worker";

/**
 * An environment: instructions + tasks + interaction protocol + rubric. Build one with
 * `defineEnv` or the `singleTurnEnv` / `multiTurnEnv` / `toolEnv` helpers.
 */
export interface Environment<Args = unknown, State = unknown> {
  id: string;
  version: string;
  /**
   * Earlier versions (e.g. `"1.0.0"`) or content hashes (`"sha256:…"`) whose open episodes
   * this one may continue: the author's declaration that the change is compatible. An
   * episode from anything else answers 409 `env_version_mismatch` on step and fork.
   */
  compatibleWith?: string[];
  description: string;
  kind: EnvKind;
  argsSchema: z.ZodType<Args>;
  stateSchema: z.ZodType<State>;
  dataset: Dataset;
  systemPrompt: string | null;
  fewShot: ChatMessage[];
  parser: Parser;
  tools: Tool<State>[];
  /** Tool calls run per assistant message; the calls past it are answered with an error, not run. */
  maxToolCallsPerMessage: number;
  maxTurns: number;
  stopConditions: StopCondition<State>[];
  /**
   * True when `respond` reads `ctx.messages`. The server stores transcripts per turn and a
   * step reads none of it unless this (or a stop condition's `readsHistory`) asks: then
   * each step loads the whole transcript, and costs time that grows with the episode.
   * Keep what you need in the state instead where you can. Default false.
   */
  readsHistory?: boolean;
  setup(row: TaskRow, ctx: SetupContext<Args>): SetupResult<State> | Promise<SetupResult<State>>;
  respond(state: State, message: AssistantMessage, ctx: RespondContext<Args>): RespondResult<State> | Promise<RespondResult<State>>;
  rubric: Rubric<State>;
  runtimes: Runtime[];
  /** Tool definitions as sent to the model. */
  toolDefinitions(): ToolDefinition[];
  /**
   * The tools of one episode, when they depend on its task (an environment group offers
   * each task its own environment's tools). Default: `toolDefinitions()`.
   */
  toolDefinitionsFor?(state: State): ToolDefinition[];
  /** The turn limit of one episode, when it depends on its task. Default: `maxTurns`. */
  maxTurnsFor?(state: State): number;
  /** Resources its episodes own outside the database (containers): released on close and score. */
  episodeResources?: EpisodeResources<State>;
  /** Several players, each with its own conversation (src/envs/seats.ts); absent: one player, the client. */
  seats?: EnvSeats<State, Args>;
  /**
   * This environment wired to the operator's services (e.g. the judges it may call),
   * called by `EnvRegistry.withServices` when a server is built. Default: used as is.
   */
  withServices?(services: EnvServices): Environment<Args, State>;
  /**
   * For environments that run client-supplied code: the sandbox in force, reported by
   * /health and GET /v1/envs/{id}. `refusal` set = the server will not run it (env_unavailable, with that text).
   */
  isolation?(): { level: string; detail: string; refusal?: string };
}

/** An environment whose type parameters have been forgotten, as registries hold them. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyEnvironment = Environment<any, any>;

export type { Score };
