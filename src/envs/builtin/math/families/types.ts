import type { Rng } from "../../../rng.js";
import { Rational } from "../../../math/rational.js";

/** 1 = easy, 2 = medium, 3 = hard. */
export type Level = 1 | 2 | 3;

export interface GeneratedProblem {
  question: string;
  /** The exact answer, written the way the rubric's gold is kept ("12", "3.75", "5/6"). */
  answer: string;
}

export type FamilyGenerator = (rng: Rng, level: Level) => GeneratedProblem;

/** Integers as "12", terminating decimals as "3.75", anything else as a reduced fraction "5/6". */
export function formatRational(value: Rational): string {
  return value.toDecimalString() ?? value.toString();
}

/** A number as the question writes it: decimals without trailing zeros, money with two places. */
export function formatNumber(value: Rational, opts: { money?: boolean } = {}): string {
  if (opts.money) {
    const cents = value.mul(new Rational(100n));
    if (cents.isInteger()) {
      const abs = cents.num < 0n ? -cents.num : cents.num;
      const text = `${abs / 100n}.${String(abs % 100n).padStart(2, "0")}`;
      return `${cents.num < 0n ? "-" : ""}$${text}`;
    }
  }
  return formatRational(value);
}

export const r = (n: number | bigint, d: number | bigint = 1): Rational => new Rational(BigInt(n), BigInt(d));

/** A decimal with `places` digits after the point, between lo and hi (inclusive, in whole units). */
export function randomDecimal(rng: Rng, lo: number, hi: number, places: number): Rational {
  const scale = 10 ** places;
  return r(rng.int(lo * scale, hi * scale), scale);
}

export const NAMES = ["Ava", "Ben", "Chloe", "Diego", "Emma", "Farid", "Grace", "Hiro", "Isla", "Jamal", "Kira", "Liam", "Maya", "Noah", "Olga", "Priya", "Quinn", "Rosa", "Sam", "Tariq", "Uma", "Victor", "Wen", "Yusuf", "Zoe"];

const SINGULAR: Record<string, string> = { feet: "foot", inches: "inch", hours: "hour", notebooks: "notebook" };

/** "1 hour", "2.5 hours": the unit word agrees with the amount. */
export function withUnit(amount: Rational | number, plural: string): string {
  const one = typeof amount === "number" ? amount === 1 : amount.equals(r(1));
  const text = typeof amount === "number" ? String(amount) : formatRational(amount);
  return `${text} ${one ? (SINGULAR[plural] ?? plural.replace(/s$/, "")) : plural}`;
}
