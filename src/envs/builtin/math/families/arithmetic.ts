import type { Rng } from "../../../rng.js";
import type { Rational } from "../../../math/rational.js";
import { formatRational, r, randomDecimal, type FamilyGenerator, type Level } from "./types.js";

/**
 * Expression families. Each builds a random expression tree and evaluates it exactly;
 * divisions are built from a chosen quotient so integer problems stay integer.
 */

interface Expr {
  text: string;
  value: Rational;
  /** Precedence of the top operator: 3 atom, 2 × ÷, 1 + -. */
  prec: number;
}

const atom = (value: Rational, text = formatRational(value)): Expr => ({ text: value.num < 0n ? `(${text})` : text, value, prec: 3 });

function wrap(e: Expr, minPrec: number): string {
  return e.prec < minPrec ? `(${e.text})` : e.text;
}

function combine(op: "+" | "-" | "×" | "÷", a: Expr, b: Expr): Expr {
  switch (op) {
    case "+":
      return { text: `${wrap(a, 1)} + ${wrap(b, 2)}`, value: a.value.add(b.value), prec: 1 };
    case "-":
      return { text: `${wrap(a, 1)} - ${wrap(b, 2)}`, value: a.value.sub(b.value), prec: 1 };
    case "×":
      return { text: `${wrap(a, 2)} × ${wrap(b, 3)}`, value: a.value.mul(b.value), prec: 2 };
    case "÷":
      return { text: `${wrap(a, 2)} ÷ ${wrap(b, 3)}`, value: a.value.div(b.value), prec: 2 };
  }
}

function integerExpr(rng: Rng, leaves: number, maxLeaf: number, allowNegative: boolean): Expr {
  if (leaves <= 1) {
    const v = rng.int(1, maxLeaf);
    return atom(r(allowNegative && rng.next() < 0.25 ? -v : v));
  }
  const leftLeaves = rng.int(1, leaves - 1);
  const op = rng.pick(["+", "-", "×", "÷"] as const);
  if (op === "÷") {
    // Choose the divisor and quotient, then make the dividend their product.
    const divisor = integerExpr(rng, leaves - leftLeaves, Math.min(maxLeaf, 12), false);
    if (divisor.value.isZero() || !divisor.value.isInteger()) return combine("+", integerExpr(rng, leftLeaves, maxLeaf, allowNegative), divisor);
    const quotient = rng.int(2, Math.max(3, Math.floor(maxLeaf / 2)));
    const dividend = atom(divisor.value.mul(r(quotient)));
    return combine("÷", dividend, divisor);
  }
  const left = integerExpr(rng, leftLeaves, op === "×" ? Math.min(maxLeaf, 25) : maxLeaf, allowNegative);
  const right = integerExpr(rng, leaves - leftLeaves, op === "×" ? Math.min(maxLeaf, 25) : maxLeaf, allowNegative);
  return combine(op, left, right);
}

export const integerArithmetic: FamilyGenerator = (rng, level) => {
  const [leaves, maxLeaf, negative] = ({ 1: [2, 99, false], 2: [3, 200, false], 3: [rng.int(4, 5), 999, true] } as const)[level];
  const e = integerExpr(rng, leaves, maxLeaf, negative);
  return { question: `Compute ${e.text}.`, answer: formatRational(e.value) };
};

export const decimalArithmetic: FamilyGenerator = (rng, level: Level) => {
  const places = level === 1 ? 1 : 2;
  const a = randomDecimal(rng, 1, level === 3 ? 500 : 50, places);
  const b = randomDecimal(rng, 1, level === 3 ? 100 : 20, level === 1 ? 1 : rng.int(1, 2));
  const op = rng.pick(level === 1 ? (["+", "-"] as const) : (["+", "-", "×", "÷"] as const));
  let e: Expr;
  if (op === "÷") {
    // A terminating quotient: divisor with one decimal place, quotient with up to two.
    const divisor = randomDecimal(rng, 1, 20, 1);
    const quotient = randomDecimal(rng, 1, 60, level === 3 ? 2 : 1);
    e = combine("÷", atom(divisor.mul(quotient)), atom(divisor));
  } else e = combine(op, atom(a), atom(b));
  if (level === 3) e = combine(rng.pick(["+", "-"] as const), e, atom(randomDecimal(rng, 1, 30, 2)));
  return { question: `Compute ${e.text}. Give the exact decimal.`, answer: formatRational(e.value) };
};

function randomFraction(rng: Rng, maxDen: number): Rational {
  const den = rng.int(2, maxDen);
  let num = rng.int(1, den * 2);
  if (num % den === 0) num += 1;
  return r(num, den);
}

const fracText = (q: Rational): string => (q.isInteger() ? String(q.num) : `${q.num}/${q.den}`);

export const fractionArithmetic: FamilyGenerator = (rng, level) => {
  const maxDen = level === 1 ? 9 : level === 2 ? 12 : 20;
  const count = level === 3 ? 3 : 2;
  const ops = level === 1 ? (["+", "-"] as const) : (["+", "-", "×", "÷"] as const);
  let e: Expr = atom(randomFraction(rng, maxDen), "");
  e = { ...e, text: fracText(e.value) };
  for (let k = 1; k < count; k++) {
    const q = randomFraction(rng, maxDen);
    // Fractions are written a/b; parenthesise them so "÷ 3/4" reads unambiguously.
    const rhs: Expr = { text: `(${fracText(q)})`, value: q, prec: 3 };
    const lhs: Expr = k === 1 ? { text: `(${e.text})`, value: e.value, prec: 3 } : e;
    e = combine(rng.pick(ops), lhs, rhs);
  }
  return { question: `Compute ${e.text}. Give the answer as a fraction in lowest terms (or an integer).`, answer: fracText(e.value) };
};
