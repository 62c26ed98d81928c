/**
 * Where edgegym's verdicts on the ported math-verify corpus (math-verify-cases.json) and
 * issue 13's and issue 28's cases differ from the expected ones, by case source (file:line):
 * - OVERRIDES: the expected verdict is wrong, with the argument;
 * - KNOWN_MISSES: equal pairs verifyMath does not yet see as equal, with what is missing.
 * Read, with the case shape and how a case is run, by math-verify-cases.test.ts and
 * `npm run bench:math`, so the test and the benchmark judge the corpus the same way.
 */
import { verifyMath } from "./verify.js";

/** One case of math-verify-cases.json, issue-13-cases.json or issue-28-cases.json, with the options math-verify ran it under. */
export interface MathVerifyCase {
  source: string;
  gold: string;
  pred: string;
  expected: boolean;
  targets: ("latex" | "expr")[];
  precision: number;
  strict: boolean;
  allowSetRelationComp: boolean;
  /** issue-28-cases.json: math-verify's own verdict (the version its NOTICE names), recorded beside the decided one. */
  mathVerify?: boolean;
  /** issue-28-cases.json: why the decided verdict differs from math-verify's, where it does. */
  why?: string;
}

/** The case files, relative to the repository root: math-verify's own cases, then issue 13's and issue 28's. */
export const MATH_CASE_FILES = ["src/envs/math/math-verify-cases.json", "src/envs/math/issue-13-cases.json", "src/envs/math/issue-28-cases.json"] as const;

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

/** The verdict a case expects, once the argued OVERRIDES are applied. */
export const expectedVerdict = (c: MathVerifyCase): boolean => OVERRIDES[c.source]?.expected ?? c.expected;

/** verifyMath's verdict on a case, under the options math-verify ran it with. */
export const verifyCase = (c: MathVerifyCase): boolean =>
  verifyMath(c.gold, c.pred, { precision: c.precision, targets: c.targets, allowSetRelationComparison: c.allowSetRelationComp, strict: c.strict }).equal;
