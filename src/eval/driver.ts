import type { EnvInfo, Example, ResetRequest, ResetResponse, ScoreResponse, Split, StepRequest, StepResponse } from "../protocol/index.js";

/** What the evaluator reads of a reset: the opening messages and tools. */
export type EpisodeStart = Pick<ResetResponse, "episode_id" | "index" | "seed" | "messages" | "tools" | "done" | "max_turns">;
/** What it reads of a step: the environment's reply and whether the episode is over. */
export type EpisodeStep = Pick<StepResponse, "turn" | "messages" | "done" | "stop_reason" | "truncated">;

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
  /** Releases the episode; never throws. */
  close(episodeId: string): Promise<void>;
}
