import { describe, expect, it } from "vitest";
import type { EnvInfo } from "../protocol/index.js";
import { pendingRollouts, resolveExampleCount, resolveSplit, rolloutKey, rolloutSeed, samplingArgs } from "./plan.js";
import { histogram, passAtK, passKValues } from "./stats.js";

const info = (train: number | null, evalRows: number | null) => ({ id: "x", splits: { train, eval: evalRows } }) as EnvInfo;

describe("planning a run", () => {
  it("picks eval when the environment has eval rows, like vf-eval", () => {
    expect(resolveSplit(info(10, 2), undefined)).toBe("eval");
    expect(resolveSplit(info(10, 0), undefined)).toBe("train");
    expect(resolveSplit(info(null, null), undefined)).toBe("eval");
    expect(resolveSplit(info(10, 2), "train")).toBe("train");
  });

  it("caps the row count at the split's size, takes -1 as all, refuses -1 on a procedural split", () => {
    expect(resolveExampleCount(info(10, 2), "eval", 5)).toEqual({ count: 2, note: 'split "eval" has 2 rows; evaluating all 2' });
    expect(resolveExampleCount(info(10, 2), "train", -1)).toEqual({ count: 10, note: null });
    expect(resolveExampleCount(info(null, null), "train", 7)).toEqual({ count: 7, note: null });
    expect(() => resolveExampleCount(info(null, null), "train", -1)).toThrow(/procedurally/);
    expect(() => resolveExampleCount(info(10, 0), "eval", 3)).toThrow(/no rows/);
    // A procedural split ends at MAX_TASK_INDEX: past it there are no task indices to give.
    expect(resolveExampleCount(info(null, null), "train", 2 ** 32)).toEqual({ count: 2 ** 32, note: null });
    expect(() => resolveExampleCount(info(null, null), "train", 2 ** 32 + 1)).toThrow(/at most 4294967296 examples/);
  });

  it("plans row by row, skipping finished rollouts, with seeds that depend only on the run seed", () => {
    const done = new Set([rolloutKey(0, 1), rolloutKey(1, 0)]);
    expect(pendingRollouts(2, 2, done)).toEqual([{ exampleId: 0, rolloutIndex: 0 }, { exampleId: 1, rolloutIndex: 1 }]);
    expect(rolloutSeed(3, 1, 2)).toBe(rolloutSeed(3, 1, 2));
    expect(new Set([rolloutSeed(3, 0, 0), rolloutSeed(3, 0, 1), rolloutSeed(3, 1, 0), rolloutSeed(4, 0, 0)]).size).toBe(4);
  });

  it("lets explicit max_tokens and temperature win over sampling_args", () => {
    expect(samplingArgs({ sampling_args: { top_p: 0.9, temperature: 1 }, temperature: 0.2, max_tokens: 8 })).toEqual({ top_p: 0.9, temperature: 0.2, max_tokens: 8 });
    expect(samplingArgs({})).toEqual({});
  });
});

describe("statistics", () => {
  it("computes unbiased pass@k and pass^k", () => {
    expect(passKValues(5)).toEqual([1, 2, 4]);
    // n = 4, c = 1: pass@1 = 1/4, pass@2 = 1 - C(3,2)/C(4,2) = 1/2, pass^2 = 0.
    expect(passAtK(4, 1, 1).atK).toBeCloseTo(0.25, 12);
    expect(passAtK(4, 1, 2).atK).toBeCloseTo(0.5, 12);
    expect(passAtK(4, 1, 2).allK).toBe(0);
    // n = 4, c = 3: pass^2 = C(3,2)/C(4,2) = 1/2; pass@4 = 1.
    expect(passAtK(4, 3, 2).allK).toBeCloseTo(0.5, 12);
    expect(passAtK(4, 3, 4).atK).toBe(1);
    expect(passAtK(1000, 500, 64).atK).toBeCloseTo(1, 12);
  });

  it("bins rewards into ten equal bins, the top value in the last", () => {
    const bins = histogram([0, 0.05, 0.5, 1, 1]);
    expect(bins).toHaveLength(10);
    expect(bins.map((b) => b.count)).toEqual([2, 0, 0, 0, 0, 1, 0, 0, 0, 2]);
    expect(histogram([0.3, 0.3])).toEqual([{ lo: 0.3, hi: 0.3, count: 2 }]);
    expect(histogram([])).toEqual([]);
  });
});
