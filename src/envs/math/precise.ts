import type { MathNode } from "mathjs";
import { bigMath } from "./mathjs.js";

/**
 * Equality past double precision. Doubles hold ~16 digits, so a tolerance on them accepts
 * values that differ beyond it: `e^{50}` and `e^{50}+1` are one double, `\cos(x + 6.283185307)`
 * is within 1e-10 of `\cos x`, `3.141592654` within 1e-10 of π. What doubles found equal is
 * evaluated again here with decimal.js (mathjs's BigNumber) at 32 significant digits, more
 * when the values are very large or very small, and must agree to within 10^-22 of their
 * size (of 1 for smaller values): a difference the written expressions really have (a +1, a +10^-8, a period wrong in
 * its 15th digit) shows; the rounding of equal expressions does not.
 *
 * A value that is no finite real BigNumber (a complex result, an unbounded factorial, a
 * function of a sum) cannot be decided here: `null`, and the caller decides without it.
 */

/** Significant digits of the first evaluation. */
const BASE_DIGITS = 32;
/** Digits left to rounding: values agree when they differ by less than 10^-(digits - SLACK_DIGITS) of their size. */
const SLACK_DIGITS = 10;
/**
 * Past this many digits (values beyond ~10^±360) nothing is decided: each new precision has
 * mathjs compute π and e again, decimal.js's exp and sin slow down with the square of the
 * digits, and it holds π and ln 10 to only ~1,025 digits.
 */
const MAX_DIGITS = 400;
/** A difference found at up to this many digits is checked again at twice as many (see preciselyEqual). */
const RETRY_DIGITS = 200;
/** Values within 10^±MAGNITUDE_SLACK of 1 are compared at BASE_DIGITS; past that, with that many more digits. */
const MAGNITUDE_SLACK = 5;

/** The few decimal.js methods used here (mathjs's BigNumber is a decimal.js Decimal). */
interface Decimal {
  /** Base-10 exponent: the value is d.ddd… × 10^e. */
  e: number;
  isFinite(): boolean;
  isZero(): boolean;
  abs(): Decimal;
  minus(other: Decimal): Decimal;
  lte(other: Decimal): boolean;
  div(other: Decimal): Decimal;
  isPositive(): boolean;
}

const isDecimal = (value: unknown): value is Decimal =>
  typeof value === "object" && value !== null && typeof (value as { isFinite?: unknown }).isFinite === "function" && typeof (value as { e?: unknown }).e === "number";

/** Variable → value (a decimal string) for one expression. */
type Point = Readonly<Record<string, string>>;

/** Parsed and compiled expressions by text (the parse does not depend on the precision: literals stay exact). */
const CACHE_SIZE = 256;
const compiledByText = new Map<string, ReturnType<MathNode["compile"]> | null>();

function compiledOf(expr: string): ReturnType<MathNode["compile"]> | null {
  const hit = compiledByText.get(expr);
  if (hit !== undefined) return hit;
  let code: ReturnType<MathNode["compile"]> | null;
  try {
    code = bigMath().parse(expr).compile();
  } catch {
    code = null;
  }
  if (compiledByText.size >= CACHE_SIZE) compiledByText.clear();
  compiledByText.set(expr, code);
  return code;
}

/** Values by digits, point and expression: a reference is compared with many answers, each time at the same points. */
const valuesByKey = new Map<string, Decimal | null>();

/** The expression's value at `digits` digits with the variables set as given (decimal strings), or null when it is no finite real number. */
function valueAt(expr: string, point: Point, digits: number): Decimal | null {
  const key = `${digits}\u0000${Object.entries(point).join(";")}\u0000${expr}`;
  const hit = valuesByKey.get(key);
  if (hit !== undefined) return hit;
  let result: Decimal | null = null;
  const code = compiledOf(expr);
  if (code) {
    try {
      const math = bigMath(digits);
      const scope: Record<string, unknown> = {};
      for (const [name, value] of Object.entries(point)) scope[name] = math.bignumber(value);
      const value: unknown = code.evaluate(scope);
      result = isDecimal(value) && value.isFinite() ? value : null;
    } catch {
      result = null;
    }
  }
  if (valuesByKey.size >= CACHE_SIZE) valuesByKey.clear();
  valuesByKey.set(key, result);
  return result;
}

const exponent = (d: Decimal): number => (d.isZero() ? 0 : d.e);

/**
 * Both values at enough digits for their size: a first evaluation at BASE_DIGITS, then, when
 * either value is beyond 10^±MAGNITUDE_SLACK, a second with as many more digits as its
 * exponent (`e^{50}` has 22 digits before the point; 10^-40·π has 40 zeros after it).
 */
function valuesAt(a: string, b: string, pointA: Point, pointB: Point, start = BASE_DIGITS): { va: Decimal; vb: Decimal; digits: number; scale: number } | "range" | null {
  let digits = start;
  for (let round = 0; round < 2; round++) {
    const va = valueAt(a, pointA, digits);
    const vb = valueAt(b, pointB, digits);
    if (!va || !vb) return null;
    const scale = va.isZero() && vb.isZero() ? 0 : va.isZero() ? exponent(vb) : vb.isZero() ? exponent(va) : Math.max(exponent(va), exponent(vb));
    const needed = start + Math.abs(scale);
    if (round === 0 && Math.abs(scale) > MAGNITUDE_SLACK && needed > digits) {
      if (needed > MAX_DIGITS) return "range";
      digits = needed;
      continue;
    }
    return { va, vb, digits, scale };
  }
  return null;
}

/**
 * The tolerance at `digits` digits for values of size 10^scale: 10^-(digits − SLACK_DIGITS)
 * of their size, or of 1 when they are smaller (then `digits` was raised by their exponent,
 * so 10^-40·π and 2·10^-40·π still differ, while the rounding left of terms of size 1 that
 * cancel to 0 is below it).
 */
const tolerance = (digits: number, scale: number): Decimal => bigMath(digits).bignumber(`1e${Math.max(scale, 0) - (digits - SLACK_DIGITS)}`) as unknown as Decimal;

/**
 * Whether two expressions have the same value at a point (variable → decimal string, one
 * point per expression, as their variables may be named apart; none for constants) to 22
 * significant digits of their size; false when they are beyond ~10^±360 (not confirmed),
 * null when either is no finite real number there. A difference found at up to RETRY_DIGITS digits is checked again at
 * twice as many, so the rounding of large terms that cancel (`(e^{50}+1) - e^{50}`) is not
 * taken for a difference of the values.
 */
export function preciselyEqual(a: string, b: string, pointA: Point = {}, pointB: Point = pointA): boolean | null {
  const values = valuesAt(a, b, pointA, pointB);
  // Too large or too small to take to enough digits: equal in doubles only by their tolerance, so not confirmed.
  if (values === "range") return false;
  if (!values) return null;
  if (values.va.minus(values.vb).abs().lte(tolerance(values.digits, values.scale))) return true;
  // Values already taken to hundreds of digits for their size differ by more than rounding.
  if (values.digits > RETRY_DIGITS) return false;
  const again = valuesAt(a, b, pointA, pointB, 2 * values.digits + 20);
  if (again === "range" || !again) return false;
  return again.va.minus(again.vb).abs().lte(tolerance(again.digits, again.scale));
}

/**
 * For equations, lhs − rhs of one against the other's: the ratio b / a at a point, "zero"
 * when both are 0 there, "mixed" when only one is, null when either is undecidable.
 */
export function preciseRatio(a: string, b: string, pointA: Point, pointB: Point): { ratio: Decimal; digits: number } | "zero" | "mixed" | null {
  const values = valuesAt(a, b, pointA, pointB);
  if (!values || values === "range") return null;
  const { va, vb, digits, scale } = values;
  const zero = tolerance(digits, scale);
  const aZero = va.abs().lte(zero);
  const bZero = vb.abs().lte(zero);
  if (aZero || bZero) return aZero && bZero ? "zero" : "mixed";
  return { ratio: vb.div(va), digits };
}

/** Two ratios from preciseRatio equal to 22 significant digits. */
export function ratiosAgree(r: { ratio: Decimal; digits: number }, s: { ratio: Decimal; digits: number }): boolean {
  const digits = Math.min(r.digits, s.digits);
  const scale = Math.max(exponent(r.ratio), exponent(s.ratio));
  return r.ratio.minus(s.ratio).abs().lte(bigMath(digits).bignumber(`1e${scale - (digits - SLACK_DIGITS)}`) as unknown as Decimal);
}

/** Whether a ratio from preciseRatio is a positive real number. */
export const ratioPositive = (r: { ratio: Decimal }): boolean => r.ratio.isPositive();
