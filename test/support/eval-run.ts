import type { EpisodeDriver } from "../../src/eval/driver.js";
import type { ChatModel } from "../../src/eval/model.js";
import type { RolloutSpec } from "../../src/eval/rollout.js";
import { runEval } from "../../src/eval/runner.js";
import type { EvalRollout, Split } from "../../src/protocol/index.js";

/** Runs these rollouts once (no retries, no sampling arguments) and returns their rows as they finished. */
export async function runRollouts(opts: { envId: string; split?: Split; driver: EpisodeDriver; model: ChatModel; specs: RolloutSpec[]; concurrency?: number }): Promise<EvalRollout[]> {
  const rows: EvalRollout[] = [];
  await runEval({
    envId: opts.envId,
    split: opts.split ?? "train",
    envArgs: {},
    driver: opts.driver,
    model: opts.model,
    sampling: {},
    retry: { maxRetries: 0, baseDelayMs: 1 },
    runKey: `${opts.envId}-test`,
    specs: opts.specs,
    concurrency: opts.concurrency ?? 1,
    onRollout: (row) => {
      rows.push(row);
    },
  });
  return rows;
}
