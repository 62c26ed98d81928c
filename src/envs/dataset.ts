import type { Split } from "../protocol/index.js";
import type { Dataset, TaskRow } from "./types.js";
import { createRng } from "./rng.js";

/**
 * A dataset held in memory. Give explicit splits, or one list and an eval fraction:
 * the rows are shuffled by `seed` once and the last share becomes `eval`, so the split
 * is the same on every process.
 *
 * @example rowsDataset({ rows, evalFraction: 0.1, seed: 7 })
 */
export function rowsDataset(
  input: { train: readonly TaskRow[]; eval?: readonly TaskRow[] } | { rows: readonly TaskRow[]; evalFraction: number; seed?: number },
): Dataset {
  let train: readonly TaskRow[];
  let evalRows: readonly TaskRow[];
  if ("rows" in input) {
    if (!(input.evalFraction >= 0 && input.evalFraction < 1)) throw new Error("evalFraction must be in [0, 1)");
    const shuffled = createRng(input.seed ?? 0).shuffle(input.rows);
    const evalCount = Math.round(shuffled.length * input.evalFraction);
    train = shuffled.slice(0, shuffled.length - evalCount);
    evalRows = shuffled.slice(shuffled.length - evalCount);
  } else {
    train = input.train;
    evalRows = input.eval ?? [];
  }
  const bySplit: Record<Split, readonly TaskRow[]> = { train, eval: evalRows };
  return {
    size: (split) => bySplit[split].length,
    row: (split, index) => {
      const row = bySplit[split][index];
      if (!row) throw new RangeError(`index ${index} is outside split "${split}" (${bySplit[split].length} rows)`);
      return row;
    },
  };
}

/**
 * An infinite dataset: the task at `index` is generated from a generator seeded by
 * (split, index), so index = task seed and the same index is always the same task.
 * `args` (the episode's parsed env args, undefined when listing examples) let the
 * generator vary with difficulty or task family; the same (split, index, args) is
 * always the same task.
 */
export function proceduralDataset(generate: (rng: ReturnType<typeof createRng>, split: Split, index: number, args?: unknown) => TaskRow): Dataset {
  return {
    size: () => null,
    row: (split, index, args) => generate(createRng(index, split === "train" ? 1 : 2), split, index, args),
  };
}
