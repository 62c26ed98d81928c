import type { Rational } from "../../../math/rational.js";
import { formatRational, r, randomDecimal, withUnit, NAMES, type FamilyGenerator } from "./types.js";

/** Exact conversion chains: each unit with its size in the quantity's base unit. */
const QUANTITIES: { noun: string; units: { name: string; size: Rational }[] }[] = [
  { noun: "length", units: [{ name: "millimeters", size: r(1, 1000) }, { name: "centimeters", size: r(1, 100) }, { name: "meters", size: r(1) }, { name: "kilometers", size: r(1000) }] },
  { noun: "mass", units: [{ name: "milligrams", size: r(1, 1000) }, { name: "grams", size: r(1) }, { name: "kilograms", size: r(1000) }] },
  { noun: "time", units: [{ name: "seconds", size: r(1) }, { name: "minutes", size: r(60) }, { name: "hours", size: r(3600) }, { name: "days", size: r(86400) }] },
  { noun: "volume", units: [{ name: "milliliters", size: r(1, 1000) }, { name: "liters", size: r(1) }] },
  { noun: "imperial length", units: [{ name: "inches", size: r(1) }, { name: "feet", size: r(12) }, { name: "yards", size: r(36) }] },
];

const CONTEXTS: Record<string, (name: string, amount: string) => string> = {
  length: (n, a) => `${n} walks a trail that is ${a} long.`,
  mass: (n, a) => `${n}'s suitcase has a mass of ${a}.`,
  time: (n, a) => `${n} practises the piano for ${a}.`,
  volume: (n, a) => `${n} fills a jug with ${a} of water.`,
  "imperial length": (n, a) => `${n} cuts a board that is ${a} long.`,
};

export const unitConversion: FamilyGenerator = (rng, level) => {
  const q = rng.pick(QUANTITIES);
  const i = rng.int(0, q.units.length - 1);
  let j = rng.int(0, q.units.length - 1);
  if (j === i) j = (i + 1) % q.units.length;
  // Easy: neighbouring units; hard: any two units, two-step conversions included.
  if (level === 1 && Math.abs(i - j) > 1) j = i + (j > i ? 1 : -1);
  const from = q.units[i]!;
  const to = q.units[j]!;
  const ratio = from.size.div(to.size);
  // Pick the amount so the converted value is exact and not too long a decimal.
  const amount = level === 1 ? r(rng.int(1, 40)) : randomDecimal(rng, 1, 90, level === 2 ? 1 : 2);
  const converted = amount.mul(ratio);
  const name = rng.pick(NAMES);
  const context = CONTEXTS[q.noun]!(name, withUnit(amount, from.name));
  if (level === 3) {
    // Two parts in different units, total asked in a third unit.
    const other = q.units[rng.int(0, q.units.length - 1)]!;
    const extra = r(rng.int(1, 30));
    const total = converted.add(extra.mul(other.size).div(to.size));
    return {
      question: `${context} Later, ${name} adds another ${withUnit(extra, other.name)}. What is the total, in ${to.name}?`,
      answer: formatRational(total),
    };
  }
  return { question: `${context} How much is that in ${to.name}?`, answer: formatRational(converted) };
};
