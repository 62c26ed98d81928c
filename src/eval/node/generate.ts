import { randomUUID } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import type { EvalRollout, Split, ToolDefinition } from "../../protocol/index.js";
import type { EpisodeDriver } from "../driver.js";
import type { ChatModel } from "../model.js";
import { resolveExampleCount, rolloutSeed } from "../plan.js";
import type { RetryPolicy } from "../retry.js";
import type { RolloutSpec } from "../rollout.js";
import { runEval } from "../runner.js";
import { selectForSft, type SftReport, type SftRow } from "../sft.js";
import type { ProgressDisplay } from "./progress.js";
import { sftParquet } from "./sft-parquet.js";

export interface GenerateOptions {
  envId: string;
  driver: EpisodeDriver;
  /** The policy that plays: a model endpoint, or an expert behind the same interface. */
  model: ChatModel;
  numExamples: number;
  /** Episodes per task; with more than one only the best of each task is kept (rejection sampling). */
  bestOf: number;
  /** Keep episodes whose reward is at least this. */
  minReward: number;
  split: Split;
  envArgs: Record<string, unknown>;
  sampling: Readonly<Record<string, unknown>>;
  seed: number;
  concurrency: number;
  retry: RetryPolicy;
  signal?: AbortSignal;
  display?: ProgressDisplay;
}

/** A training row with the tools the environment offered, which chat templates render into the prompt. */
export interface GeneratedRow extends SftRow {
  tools?: ToolDefinition[];
}

export interface GenerateResult {
  rows: GeneratedRow[];
  report: SftReport;
  /** Every episode played, failed ones included. */
  rollouts: number;
  meanReward: number | null;
  /** Mean of each numeric metric over the finished episodes (win, draw, invalid_moves…). */
  metrics: Record<string, number>;
  interrupted: boolean;
}

/**
 * Plays `numExamples × bestOf` episodes with the policy and keeps the good ones as SFT
 * rows: the whole conversation (the environment's system prompt and every turn) plus the
 * environment's tools. The same rollout code as `edgegym eval`, so the data is exactly
 * what the model will see when it plays.
 */
export async function generateSft(opts: GenerateOptions): Promise<GenerateResult> {
  const info = await opts.driver.describe(opts.envId);
  const { count } = resolveExampleCount(info, opts.split, opts.numExamples);
  const examples = await opts.driver.examples(info.id, opts.split, 0, count);
  const specs: RolloutSpec[] = [];
  for (const example of examples) {
    for (let r = 0; r < opts.bestOf; r++) specs.push({ example, rolloutIndex: r, seed: rolloutSeed(opts.seed, example.index, r) });
  }
  const finished: EvalRollout[] = [];
  let rewardSum = 0;
  let errors = 0;
  const started = performance.now();
  const figures = () => ({
    done: finished.length,
    total: specs.length,
    meanReward: finished.length - errors > 0 ? rewardSum / (finished.length - errors) : null,
    errors,
    rate: finished.length / Math.max(1e-3, (performance.now() - started) / 1000),
  });
  opts.display?.start(figures());
  let outcome: Awaited<ReturnType<typeof runEval>>;
  try {
    outcome = await runEval({
      envId: info.id,
      split: opts.split,
      envArgs: opts.envArgs,
      driver: opts.driver,
      model: opts.model,
      sampling: opts.sampling,
      retry: opts.retry,
      runKey: randomUUID().slice(0, 12),
      specs,
      concurrency: opts.concurrency,
      ...(opts.signal ? { signal: opts.signal } : {}),
      onRollout: (row) => {
        finished.push(row);
        if (row.error) {
          errors++;
          opts.display?.log(`episode ${row.example_id}#${row.rollout_index} failed: ${row.error.error_chain_str}`);
        } else rewardSum += row.reward;
        opts.display?.update(figures());
      },
    });
  } finally {
    opts.display?.stop();
  }
  if (outcome.fatal) throw new Error(`generation stopped: ${outcome.fatal.error_chain_str}`);
  // Rows in task order whatever order the episodes finished in, so a run's file is reproducible.
  finished.sort((a, b) => a.example_id - b.example_id || a.rollout_index - b.rollout_index);
  const { rows, report } = selectForSft(finished, { minReward: opts.minReward, bestPerExample: opts.bestOf > 1 });
  const tools = info.tools.length ? info.tools : null;
  const ok = finished.filter((r) => !r.error);
  const metrics: Record<string, number> = {};
  for (const row of ok) for (const [k, v] of Object.entries(row.metrics)) metrics[k] = (metrics[k] ?? 0) + v;
  for (const k of Object.keys(metrics)) metrics[k] = (metrics[k] as number) / ok.length;
  return {
    rows: tools ? rows.map((r) => ({ ...r, tools })) : rows,
    report,
    rollouts: finished.length,
    meanReward: ok.length ? ok.reduce((s, r) => s + r.reward, 0) / ok.length : null,
    metrics,
    interrupted: outcome.interrupted,
  };
}

/** Writes the rows as export-sft does: JSONL (one `{"messages", "tools"?}` per line) or Parquet. */
export async function writeSftRows(rows: readonly GeneratedRow[], output: string, format: "jsonl" | "parquet"): Promise<void> {
  await mkdir(dirname(output), { recursive: true });
  if (format === "parquet") await writeFile(output, sftParquet(rows));
  else await writeFile(output, rows.map((r) => `${JSON.stringify(r)}\n`).join(""));
}
