import type { AssistantMessage, ChatMessage, EnvInfo, Example, ResetRequest, Score, Split, StepRequest } from "../protocol/index.js";
import {
  EngineError,
  describeEnv,
  episodeView,
  listExamples,
  scoreEpisode,
  seatToPlay,
  seatView,
  startEpisode,
  stepEpisode,
  type AnyEnvironment,
  type EnvRegistry,
  type EpisodeSnapshot,
  unseenBy,
} from "../envs/index.js";
import type { EpisodeDriver, EpisodeStart, EpisodeStep } from "./driver.js";
import { EvalError } from "./errors.js";

function rejected(serverCode: string, message: string): EvalError {
  return new EvalError("env_rejected", message, false, undefined, serverCode);
}

/**
 * What a seated episode shows the client, as the server's reply does: what the seat to
 * play has been shown since its last message, or once the game is over what `doneSeat`
 * (the seat that stepped) was shown last. A one-player episode's `messages` pass through.
 */
function shown(env: AnyEnvironment, snap: EpisodeSnapshot, messages: ChatMessage[], doneSeat: string | null): { messages: ChatMessage[]; to_play?: string | null } {
  if (!env.seats) return { messages };
  const toPlay = seatToPlay(env, snap.state);
  const seat = toPlay ?? doneSeat;
  return { messages: seat === null ? [] : unseenBy(snap.messages, seat), to_play: toPlay };
}

/**
 * Runs episodes in this process with the same engine the server uses, keeping each
 * episode's snapshot in memory until it is closed. No database, no HTTP: the fastest way
 * to evaluate, and the reference the HTTP path is checked against.
 */
export class InProcessDriver implements EpisodeDriver {
  readonly location = "in-process";
  private readonly episodes = new Map<string, EpisodeSnapshot>();
  private readonly byKey = new Map<string, string>();
  private readonly keyOf = new Map<string, string>();
  private counter = 0;

  constructor(private readonly registry: Pick<EnvRegistry, "resolve">) {}

  private env(id: string): AnyEnvironment {
    const found = this.registry.resolve(id);
    if (found.status === "found") return found.env;
    if (found.status === "unavailable") throw rejected("env_unavailable", found.reason);
    throw rejected("env_not_found", `${found.reason} here; load it with --env-module or check the id`);
  }

  private snapshot(id: string): EpisodeSnapshot {
    const snap = this.episodes.get(id);
    if (!snap) throw rejected("episode_not_found", `no episode "${id}"`);
    return snap;
  }

  private async engine<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (err) {
      if (err instanceof EngineError) throw rejected(err.code, err.message);
      throw err;
    }
  }

  async describe(envId: string): Promise<EnvInfo> {
    return describeEnv(this.env(envId));
  }

  async examples(envId: string, split: Split, offset: number, limit: number): Promise<Example[]> {
    const env = this.env(envId);
    try {
      return (await this.engine(() => listExamples(env, split, offset, limit))).examples;
    } catch (err) {
      if (err instanceof RangeError) throw rejected("task_out_of_range", err.message);
      throw err;
    }
  }

  async reset(envId: string, request: ResetRequest, key: string): Promise<EpisodeStart> {
    const known = this.byKey.get(key);
    const env = this.env(envId);
    const id = known ?? `local_${++this.counter}`;
    if (!known) {
      const snap = await this.engine(() => startEpisode(env, request));
      this.episodes.set(id, snap);
      this.byKey.set(key, id);
      this.keyOf.set(id, key);
    }
    const snap = this.snapshot(id);
    return {
      episode_id: id,
      index: snap.index,
      seed: snap.seed,
      ...shown(env, snap, snap.messages.slice(0, snap.promptLength), null),
      done: snap.done,
      // The episode's own tools and turn limit (an env group's member's), as the server answers.
      ...episodeView(env, snap.state),
    };
  }

  async step(episodeId: string, request: StepRequest): Promise<EpisodeStep> {
    const snap = this.snapshot(episodeId);
    if (snap.done) throw rejected("episode_done", `episode "${episodeId}" is done (${snap.stopReason ?? "finished"})`);
    if (request.turn !== snap.turn) throw rejected("turn_conflict", `episode is at turn ${snap.turn}, the step was for turn ${request.turn}`);
    const env = this.env(snap.envId);
    const { snapshot, reply, seat } = await this.engine(() => stepEpisode(env, snap, request.message as AssistantMessage, { seat: request.seat }));
    this.episodes.set(episodeId, snapshot);
    return { turn: snapshot.turn, ...shown(env, snapshot, reply, snapshot.done ? (seat ?? null) : null), done: snapshot.done, stop_reason: snapshot.stopReason, truncated: snapshot.truncated };
  }

  async seatView(episodeId: string, seat: string): Promise<ChatMessage[]> {
    const snap = this.snapshot(episodeId);
    const env = this.env(snap.envId);
    if (!env.seats) throw rejected("seats_unsupported", `${env.id} has one player and no seats`);
    if (!env.seats.seats.some((s) => s.name === seat)) throw rejected("unknown_seat", `${env.id} has no seat "${seat}"`);
    return seatView(snap.messages, seat);
  }

  async score(episodeId: string): Promise<Score> {
    const snap = this.snapshot(episodeId);
    return this.engine(() => scoreEpisode(this.env(snap.envId), snap));
  }

  async close(episodeId: string): Promise<void> {
    this.episodes.delete(episodeId);
    const key = this.keyOf.get(episodeId);
    if (key !== undefined) this.byKey.delete(key);
    this.keyOf.delete(episodeId);
  }

  /** Episodes still held (a finished run holds none). */
  get openEpisodes(): number {
    return this.episodes.size;
  }
}
