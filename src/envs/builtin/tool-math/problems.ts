import type { Rng } from "../../rng.js";
import { Rational } from "../../math/rational.js";
import { formatNumber, formatRational, r, NAMES } from "../math/families/types.js";

/**
 * Problems where a calculator pays off: large products, compound interest, means of many
 * numbers, percentages of big amounts, square roots and hypotenuses. Answers are exact
 * (or rounded to the cent where the question says so).
 */
export const TOOL_MATH_FAMILIES = ["long_arithmetic", "compound_interest", "mean", "percent_of", "square_root", "hypotenuse"] as const;
export type ToolMathFamily = (typeof TOOL_MATH_FAMILIES)[number];

export interface ToolMathProblem {
  family: ToolMathFamily;
  question: string;
  answer: string;
}

const thousands = (n: bigint | number): string => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");

/** Rounds half away from zero to `places` decimals, exactly. */
export function roundRational(value: Rational, places: number): Rational {
  const scale = 10n ** BigInt(places);
  const scaled = value.mul(new Rational(scale));
  const twice = (2n * (scaled.num < 0n ? -scaled.num : scaled.num)) / scaled.den;
  const rounded = (twice + 1n) / 2n;
  return new Rational(scaled.num < 0n ? -rounded : rounded, scale);
}

/** Rounded to the cent; "1234.5" and "1234.50" are the same answer to the checker. */
const money = (value: Rational): string => roundRational(value, 2).toDecimalString() as string;

const generators: Record<ToolMathFamily, (rng: Rng, big: boolean) => Omit<ToolMathProblem, "family">> = {
  long_arithmetic: (rng, big) => {
    const a = rng.int(big ? 1000 : 100, big ? 99999 : 9999);
    const b = rng.int(big ? 100 : 12, big ? 9999 : 999);
    const c = rng.int(1000, big ? 999999 : 99999);
    const d = rng.int(2, big ? 97 : 40);
    const total = BigInt(a) * BigInt(b) - BigInt(c);
    // Make the division exact: subtract the remainder from c.
    const rem = ((total % BigInt(d)) + BigInt(d)) % BigInt(d);
    const cAdj = BigInt(c) + rem;
    const result = (BigInt(a) * BigInt(b) - cAdj) / BigInt(d);
    const name = rng.pick(NAMES);
    return {
      question: `${name}'s factory makes ${thousands(a)} parts per shift for ${thousands(b)} shifts. ${thousands(cAdj)} parts fail inspection, and the rest are packed equally into ${d} containers. How many parts go into each container?`,
      answer: String(result),
    };
  },
  compound_interest: (rng, big) => {
    const principal = r(rng.int(10, big ? 500 : 100) * 100);
    const rateTenths = rng.int(15, 95); // 1.5% … 9.5%
    const years = rng.int(2, big ? 15 : 6);
    const factor = r(1000 + rateTenths, 1000);
    const balance = principal.mul(factor.pow(BigInt(years)));
    return {
      question: `${formatNumber(principal, { money: true })} is deposited at ${formatRational(r(rateTenths, 10))}% interest per year, compounded yearly, with no withdrawals. What is the balance after ${years} years, in dollars, rounded to the nearest cent?`,
      answer: money(balance),
    };
  },
  mean: (rng, big) => {
    const count = big ? 8 : 5;
    const values = Array.from({ length: count }, () => rng.int(big ? 1000 : 100, big ? 9999 : 999));
    const sum = values.reduce((a, b) => a + b, 0);
    // n = 5 or 8: the mean is always a terminating decimal.
    return { question: `The daily visitor counts of a museum over ${count} days were ${values.map(thousands).join(", ")}. What was the mean number of visitors per day? Give the exact value.`, answer: formatRational(r(sum, count)) };
  },
  percent_of: (rng, big) => {
    const base = r(rng.int(big ? 10000 : 1000, big ? 999999 : 99999));
    const pct = r(rng.int(1, 999), 10);
    return { question: `A city budget of $${thousands(base.num)} sets aside ${formatRational(pct)}% for parks. How many dollars is that? Give the exact value.`, answer: formatRational(base.mul(pct).div(r(100))) };
  },
  square_root: (rng, big) => {
    const side = rng.int(big ? 100 : 20, big ? 9999 : 999);
    return { question: `A square field has an area of ${thousands(BigInt(side) * BigInt(side))} square meters. How long is one side, in meters?`, answer: String(side) };
  },
  hypotenuse: (rng, big) => {
    // A scaled Pythagorean triple from Euclid's formula, so the answer is an integer.
    const m = rng.int(2, big ? 12 : 6);
    const n = rng.int(1, m - 1);
    const k = rng.int(big ? 3 : 1, big ? 40 : 9);
    const [a, b, c] = [k * (m * m - n * n), k * 2 * m * n, k * (m * m + n * n)];
    return { question: `A ladder reaches ${a} cm up a wall with its foot ${b} cm from the wall, on level ground. How long is the ladder, in cm?`, answer: String(c) };
  },
};

export function generateToolMathProblem(rng: Rng, opts: { families?: readonly ToolMathFamily[]; difficulty: "easy" | "hard" }): ToolMathProblem {
  const family = rng.pick(opts.families ?? TOOL_MATH_FAMILIES);
  return { family, ...generators[family](rng, opts.difficulty === "hard") };
}
