import { formatRational, r, type FamilyGenerator } from "./types.js";

const signed = (n: number): string => (n < 0 ? `- ${-n}` : `+ ${n}`);
const coef = (a: number, v = "x"): string => (a === 1 ? v : a === -1 ? `-${v}` : `${a}${v}`);

/** Linear equations in one unknown, built from the solution so it is exact. */
export const linearEquations: FamilyGenerator = (rng, level) => {
  const nonZero = (lo: number, hi: number): number => {
    const v = rng.int(lo, hi);
    return v === 0 ? 1 : v;
  };
  if (level === 1) {
    // a·x + b = c with an integer solution.
    const x = rng.int(-12, 20);
    const a = rng.int(2, 9);
    const b = rng.int(-30, 30);
    return { question: `Solve for x: ${coef(a)} ${signed(b)} = ${a * x + b}.`, answer: String(x) };
  }
  if (level === 2) {
    // a·x + b = c·x + d, integer solution.
    const x = rng.int(-15, 15);
    const a = nonZero(-9, 12);
    let c = nonZero(-9, 12);
    if (c === a) c = a + 1 === 0 ? a + 2 : a + 1;
    const b = rng.int(-40, 40);
    const d = (a - c) * x + b;
    return { question: `Solve for x: ${coef(a)} ${signed(b)} = ${coef(c)} ${signed(d)}.`, answer: String(x) };
  }
  // a(x + b) = c(x - d) + e with a fractional solution: x = (c·(-d) + e - a·b) / (a - c).
  const a = rng.int(2, 9);
  let c = rng.int(2, 9);
  if (c === a) c = a === 9 ? 8 : a + 1;
  const b = nonZero(-9, 9);
  const d = nonZero(-9, 9);
  const e = rng.int(-20, 20);
  const x = r(-c * d + e - a * b, a - c);
  const inner = (v: number, op: "+" | "-") => (op === "+" ? (v < 0 ? `x - ${-v}` : `x + ${v}`) : v < 0 ? `x + ${-v}` : `x - ${v}`);
  return { question: `Solve for x: ${a}(${inner(b, "+")}) = ${c}(${inner(d, "-")}) ${signed(e)}. Give x exactly (a fraction if needed).`, answer: formatRational(x) };
};
