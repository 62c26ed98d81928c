import type { EnvInfo, EvalRequest, EvalSummary, Split } from "../protocol/index.js";
import type { SeatSummary } from "./seats.js";
import type { VfFormat } from "./vf-formats.js";

/**
 * metadata.json of a run: every key verifiers 0.3.1's vf-eval writes (`GenerateMetadata`
 * as `GenerateOutputsBuilder.build_metadata` fills it and `save_metadata` saves it, in
 * `verifiers/legacy/utils/save_utils.py`: env_id, env_args, model, base_url, num_examples,
 * rollouts_per_example, shuffle, shuffle_seed, sampling_args, time (seconds), avg_reward,
 * avg_metrics, avg_error, pass_at_k, pass_all_k, pass_threshold, usage, version_info,
 * state_columns, tools), then edgegym's own: date, time_ms, the split, seed and driver
 * needed to resume, and the full summary.
 */
export interface RunMetadata {
  env_id: string;
  env_args: Record<string, unknown>;
  model: string;
  base_url: string;
  num_examples: number;
  rollouts_per_example: number;
  /** verifiers' `shuffle` / `shuffle_seed` (its resume checks them): edgegym runs rows in index order. */
  shuffle: false;
  shuffle_seed: null;
  sampling_args: Record<string, unknown>;
  date: string;
  /** Run time in seconds, summed over resumed sessions: verifiers' `time` ("whole-eval wall-clock seconds"). */
  time: number;
  /** The same in milliseconds (edgegym's). */
  time_ms: number;
  avg_reward: number;
  avg_metrics: Record<string, number>;
  avg_error: number;
  pass_at_k: Record<string, number>;
  pass_all_k: Record<string, number>;
  pass_threshold: number;
  usage: { input_tokens: number; output_tokens: number } | null;
  /** `env_hash`: the environment's content hash, when the server reported one (docs/versions.md). */
  version_info: { edgegym_version: string; env_version: string; env_hash?: string };
  state_columns: string[];
  tools: EnvInfo["tools"] | null;
  split: Split;
  seed: number;
  /** `in-process`, or the edgegym server the episodes ran on. */
  driver: string;
  max_retries: number;
  timeout_seconds: number;
  /** Rollouts planned, and how many results.jsonl holds. */
  total_rollouts: number;
  completed_rollouts: number;
  status: "running" | "completed" | "interrupted" | "failed";
  error: string | null;
  summary: EvalSummary;
  /** Which verifiers generation's files the run holds: `vf03` results.jsonl or `vf04` traces.jsonl. */
  format?: VfFormat;
  /** A seated environment's: who played each seat (`client`: the model; else the environment's policy). Resuming keeps to it. */
  seats?: Record<string, string>;
  /** A seated environment's figures per seat: rewards, components, metrics, and a game's wins, draws and losses. */
  seat_summaries?: Record<string, SeatSummary>;
}

export interface MetadataInput {
  request: EvalRequest;
  env: EnvInfo;
  model: string;
  baseUrl: string;
  driver: string;
  split: Split;
  numExamples: number;
  sampling: Record<string, unknown>;
  summary: EvalSummary;
  status: RunMetadata["status"];
  error: string | null;
  edgegymVersion: string;
  date?: Date;
  format?: VfFormat;
  seats?: Record<string, string> | undefined;
  seatSummaries?: Record<string, SeatSummary> | null | undefined;
  /**
   * The metadata.json of the run being resumed: the keys it has that edgegym does not write
   * (vf-eval's `cost`, its `version_info.vf_version` …) are kept, the rest written afresh.
   */
  previous?: Record<string, unknown>;
}

export function buildMetadata(input: MetadataInput): RunMetadata {
  const fresh = freshMetadata(input);
  const previous = input.previous;
  if (!previous) return fresh;
  const priorVersion = typeof previous.version_info === "object" && previous.version_info !== null ? previous.version_info : {};
  return { ...previous, ...fresh, version_info: { ...priorVersion, ...fresh.version_info } };
}

function freshMetadata(input: MetadataInput): RunMetadata {
  const { summary, request } = input;
  return {
    env_id: input.env.id,
    env_args: request.env_args ?? {},
    model: input.model,
    base_url: input.baseUrl,
    num_examples: input.numExamples,
    rollouts_per_example: request.rollouts_per_example,
    shuffle: false,
    shuffle_seed: null,
    sampling_args: input.sampling,
    date: (input.date ?? new Date()).toISOString(),
    time: summary.wall_ms / 1000,
    time_ms: summary.wall_ms,
    avg_reward: summary.reward.mean,
    avg_metrics: summary.metrics,
    avg_error: summary.error_rate,
    pass_at_k: summary.pass_at_k,
    pass_all_k: summary.pass_all_k,
    pass_threshold: summary.pass_threshold,
    usage: summary.rollouts ? { input_tokens: summary.usage.mean_input_tokens, output_tokens: summary.usage.mean_output_tokens } : null,
    version_info: { edgegym_version: input.edgegymVersion, env_version: input.env.version, ...(input.env.hash ? { env_hash: input.env.hash } : {}) },
    state_columns: [],
    tools: input.env.tools.length ? input.env.tools : null,
    split: input.split,
    seed: request.seed,
    driver: input.driver,
    max_retries: request.max_retries,
    timeout_seconds: request.timeout_seconds,
    total_rollouts: input.numExamples * request.rollouts_per_example,
    completed_rollouts: summary.rollouts,
    status: input.status,
    error: input.error,
    summary,
    ...(input.format ? { format: input.format } : {}),
    ...(input.seats ? { seats: input.seats } : {}),
    ...(input.seatSummaries ? { seat_summaries: input.seatSummaries } : {}),
  };
}
