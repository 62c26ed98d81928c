/**
 * Where edgegym's verdicts on the ported math-verify corpus (math-verify-cases.json) and
 * issue 13's cases differ from the expected ones, by case source (file:line):
 * - OVERRIDES: the expected verdict is wrong, with the argument;
 * - KNOWN_MISSES: equal pairs verifyMath does not yet see as equal, with what is missing.
 * Read by math-verify-cases.test.ts and `npm run bench:math`.
 */
export const OVERRIDES: Record<string, { expected: boolean; why: string }> = {
  "tests/test_all.py:760": {
    expected: false,
    why: "math-verify parses `(1,3)` as Interval.open(1, 3) and `{1,3}` as FiniteSet(1, 3) and then compares the interval's endpoints with the set's elements; an open interval is not a two-element set; its twin at :759, `(3,1)` vs `{1,3}`, is expected unequal",
  },
  "tests/test_yujianll.py:28": {
    expected: false,
    why: "1 − 1/e ≈ 0.632 and 1 + 1/e ≈ 1.368 are different numbers; math-verify 0.9.0 extracts both as `1` (its span regex stops at the `}` of `\\mathrm{e}`, leaving `1 - \\frac{1}{` and `1 + \\frac{1}{`, which parse as 1), so the expected 1 records that extraction bug",
  },
};

export const KNOWN_MISSES: Record<string, string> = {};
