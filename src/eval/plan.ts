import { MAX_TASK_INDEX, type EnvInfo, type EvalRequest, type Split } from "../protocol/index.js";
import { mixSeed } from "../envs/rng.js";

/** `eval` when the environment has eval rows (or generates them), else `train`: what vf-eval does too. */
export function resolveSplit(info: EnvInfo, requested: Split | undefined): Split {
  if (requested) return requested;
  return info.splits.eval === 0 ? "train" : "eval";
}

/**
 * How many rows the run covers. A finite split caps the count at its size (with a note
 * to print); -1 means every row and needs a finite split.
 */
export function resolveExampleCount(info: EnvInfo, split: Split, requested: number): { count: number; note: string | null } {
  const size = info.splits[split];
  if (requested === -1) {
    if (size === 0) throw new Error(`${info.id} has no rows in split "${split}"`);
    if (size === null) throw new Error(`${info.id} generates its "${split}" tasks procedurally: give --num-examples a positive count`);
    return { count: size, note: null };
  }
  if (size === 0) throw new Error(`${info.id} has no rows in split "${split}"`);
  if (size === null && requested > MAX_TASK_INDEX + 1) throw new Error(`${info.id} generates tasks 0 to ${MAX_TASK_INDEX} of split "${split}": ask for at most ${MAX_TASK_INDEX + 1} examples`);
  if (size !== null && requested > size) return { count: size, note: `split "${split}" has ${size} rows; evaluating all ${size}` };
  return { count: requested, note: null };
}

/** The episode seed of one rollout: the same run seed gives the same episodes. */
export function rolloutSeed(runSeed: number, exampleId: number, rolloutIndex: number): number {
  return mixSeed(runSeed, exampleId, rolloutIndex);
}

export const rolloutKey = (exampleId: number, rolloutIndex: number): string => `${exampleId}:${rolloutIndex}`;

/**
 * The rollouts still to run, row by row, so each row's group finishes together (pass@k
 * of a half-done run then covers whole groups). `done` holds keys of finished rollouts.
 */
export function pendingRollouts(numExamples: number, rolloutsPerExample: number, done: ReadonlySet<string>): { exampleId: number; rolloutIndex: number }[] {
  const out: { exampleId: number; rolloutIndex: number }[] = [];
  for (let e = 0; e < numExamples; e++) {
    for (let r = 0; r < rolloutsPerExample; r++) if (!done.has(rolloutKey(e, r))) out.push({ exampleId: e, rolloutIndex: r });
  }
  return out;
}

/** The chat-completion fields sent with every request; explicit flags win over -S keys. */
export function samplingArgs(request: Pick<EvalRequest, "sampling_args" | "max_tokens" | "temperature">): Record<string, unknown> {
  return {
    ...(request.sampling_args ?? {}),
    ...(request.max_tokens !== undefined ? { max_tokens: request.max_tokens } : {}),
    ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
  };
}
