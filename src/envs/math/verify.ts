import { textWithin } from "../answer-limits.js";
import { checkEquivalence, readsAsMath, MATH_ANSWER_MAX_CHARS, type Equivalence } from "./equivalence.js";
import { DEFAULT_PRECISION } from "./scalar.js";
import { answerReadings, MATH_TEXT_MAX_CHARS, type AnswerReading, type ExtractionTarget } from "./extract.js";

/** Options of {@link verifyMath}; each defaults to math-verify's default. */
export interface VerifyMathOptions {
  /**
   * Decimal places a written decimal stands for: `0.3333` equals `1/3` at 4, not at the
   * default 6 (math-verify's `float_rounding`). Exact values always compare exactly;
   * `"exact"` compares decimals exactly too (`0.3333333` ≠ `1/3`).
   */
  precision?: number | "exact";
  /**
   * What to look for in the text: `latex` (boxes, math spans, LaTeX answers) and `expr`
   * (plain numbers and arithmetic, `1,000.5`, `2/3`). Default both.
   */
  targets?: readonly ExtractionTarget[];
  /**
   * Read a candidate's double inequality as an interval (`-2 \le x \le 7` = `[-2,7]`);
   * the reference's always is. math-verify's `allow_set_relation_comp`, default false.
   */
  allowSetRelationComparison?: boolean;
  /**
   * Variables must match by name (default true, as in math-verify). With false,
   * expressions compare up to renaming their variables: `f(x)` = `f(y)`.
   */
  strict?: boolean;
}

export interface MathVerdict extends Equivalence {
  /** The reference's answer as extracted, or null when none was found. */
  reference: string | null;
  /** The candidate's answer as extracted, or null when none was found. */
  candidate: string | null;
}

/**
 * The first reading that reads as math, else the first one (compared as text); null when
 * there is none. Readings past MATH_ANSWER_MAX_CHARS are skipped; when every one is, the
 * answer is refused as too long (AnswerTooLongError), as checkEquivalence refuses it.
 */
function chosen(readings: readonly AnswerReading[], what: string): AnswerReading | null {
  const usable = readings.filter((r) => r.text.length <= MATH_ANSWER_MAX_CHARS);
  if (usable.length === 0 && readings[0]) textWithin(readings[0].text, MATH_ANSWER_MAX_CHARS, what);
  return usable.find((r) => readsAsMath(r.text)) ?? usable[0] ?? null;
}

/** A bare `1,22` (one comma, no thousands grouping): a list, or a number written with a decimal comma. */
const COMMA_DECIMAL = /^-?\d+,\d+$/;
const THOUSANDS = /^-?\d{1,3}(?:,\d{3})+$/;
/** A reference that is one decimal number written with a point. */
const POINT_DECIMAL = /^-?\d*\.\d+$/;

/**
 * A candidate that is only `1,22` against a reference that is a decimal number (`1.22`) is
 * that number written with a decimal comma, as math-verify's expr target reads it; against
 * anything else (`122`, `\{1,22\}`, a list written `1,22`) it stays the list it is written as.
 */
function decimalComma(candidate: AnswerReading, reference: string): string {
  if (candidate.how !== "whole" || !COMMA_DECIMAL.test(candidate.text) || THOUSANDS.test(candidate.text)) return candidate.text;
  return POINT_DECIMAL.test(reference.trim()) ? candidate.text.replace(",", ".") : candidate.text;
}

/**
 * Does `candidate` (a model's output: a bare answer or a whole worked solution) give the
 * same answer as `reference`? The final answer is extracted from each (see extract.ts
 * for the order: last `\boxed{}` group, "final answer is", "answer:", the rightmost math
 * span or number), then compared as values (see equivalence.ts): exactly for rationals,
 * at `precision` for written decimals, numerically for irrationals, at sample points for
 * expressions, as relations, sets, tuples, intervals and matrices.
 *
 * Inputs are hostile: past MATH_TEXT_MAX_CHARS (text) or MATH_ANSWER_MAX_CHARS (the
 * extracted answer) an AnswerTooLongError is thrown, and every step is bounded.
 *
 * @example verifyMath("$\\frac{1}{2}$", "so the answer is $\\boxed{0.5}$.").equal // true
 */
export function verifyMath(reference: string, candidate: string, options: VerifyMathOptions = {}): MathVerdict {
  const targets = options.targets ?? ["latex", "expr"];
  // The candidate first: when both are refused, the model's answer is the reason reported.
  const candReading = chosen(answerReadings(textWithin(candidate, MATH_TEXT_MAX_CHARS, "answer"), targets), "answer");
  const ref = chosen(answerReadings(textWithin(reference, MATH_TEXT_MAX_CHARS, "reference answer"), targets), "reference answer")?.text ?? null;
  const cand = candReading && ref !== null ? decimalComma(candReading, ref) : (candReading?.text ?? null);
  if (ref === null || cand === null) return { equal: false, method: "empty", reference: ref, candidate: cand };
  const precision = options.precision === "exact" ? undefined : (options.precision ?? DEFAULT_PRECISION);
  const verdict = checkEquivalence(cand, ref, { precision, relationsAsIntervals: options.allowSetRelationComparison, strict: options.strict });
  return { ...verdict, reference: ref, candidate: cand };
}
