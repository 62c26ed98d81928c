import type { ChatMessage, EnvInfo, Example, ResetRequest, ResetResponse, ScoreResponse, Split, StepRequest, StepResponse } from "../protocol/index.js";

/** What the evaluator reads of a reset: the opening messages and tools (a seated episode's: the opening of the seat in `to_play`). */
export type EpisodeStart = Pick<ResetResponse, "episode_id" | "index" | "seed" | "messages" | "tools" | "done" | "max_turns" | "to_play">;
/** What it reads of a step: the environment's reply and whether the episode is over (a seated episode's: what the seat in `to_play` sees next). */
export type EpisodeStep = Pick<StepResponse, "turn" | "messages" | "done" | "stop_reason" | "truncated" | "to_play">;

/**
 * The episode protocol as the evaluator speaks it: reset, step, score, close, in the
 * protocol's own shapes. One implementation runs the environment in this process over
 * src/envs/engine.ts; the other talks to an edgegym server over HTTP. The evaluator
 * cannot tell them apart, so both paths run exactly the same rollout code.
 */
export interface EpisodeDriver {
  /** `in-process` or the server's base URL: recorded in the run's metadata. */
  readonly location: string;
  describe(envId: string): Promise<EnvInfo>;
  /** Rows `[offset, offset + limit)` of a split, as the model will see them. */
  examples(envId: string, split: Split, offset: number, limit: number): Promise<Example[]>;
  /** `key` makes a retried reset return the episode the first one made. */
  reset(envId: string, request: ResetRequest, key: string, signal?: AbortSignal): Promise<EpisodeStart>;
  step(episodeId: string, request: StepRequest, signal?: AbortSignal): Promise<EpisodeStep>;
  score(episodeId: string, signal?: AbortSignal): Promise<ScoreResponse["score"]>;
  /**
   * A seated episode's: one seat's whole conversation (what it was shown and what it
   * sent, without names), as GET /v1/episodes/{id}?seat= answers. Called before `close`.
   * A driver without it leaves the rollout with the conversation the model was shown.
   */
  seatView?(episodeId: string, seat: string, signal?: AbortSignal): Promise<ChatMessage[]>;
  /** Releases the episode; never throws. */
  close(episodeId: string): Promise<void>;
}
