import type { Rng } from "../../rng.js";
import type { TaskRow } from "../../types.js";

/**
 * Number problems that are easy with a few lines of Python and error-prone by hand, with
 * exact answers computed here (BigInt where they grow). The kind and parameters come from
 * the task's seed, so every index is a different, reproducible task.
 */
type Generator = (rng: Rng) => { kind: string; question: string; answer: string };

function primesBelow(n: number): number[] {
  const composite = new Uint8Array(n);
  const out: number[] = [];
  for (let i = 2; i < n; i++) {
    if (composite[i]) continue;
    out.push(i);
    for (let j = i * i; j < n; j += i) composite[j] = 1;
  }
  return out;
}

function powMod(base: bigint, exp: bigint, mod: bigint): bigint {
  let result = 1n;
  let b = base % mod;
  for (let e = exp; e > 0n; e >>= 1n) {
    if (e & 1n) result = (result * b) % mod;
    b = (b * b) % mod;
  }
  return result;
}

const GENERATORS: Generator[] = [
  (rng) => {
    const n = rng.int(2, 60) * 1000;
    return { kind: "prime_sum", question: `What is the sum of all prime numbers below ${n}?`, answer: String(primesBelow(n).reduce((a, b) => a + b, 0)) };
  },
  (rng) => {
    const n = rng.int(10, 1000) * 1000;
    const a = rng.int(3, 40);
    let b = rng.int(3, 40);
    if (b === a) b = a + 1;
    let count = 0;
    for (let i = 1; i <= n; i++) if ((i % a === 0) !== (i % b === 0)) count++;
    return { kind: "divisible_xor", question: `How many integers from 1 to ${n} inclusive are divisible by ${a} or by ${b}, but not by both?`, answer: String(count) };
  },
  (rng) => {
    const a = rng.int(2, 999);
    const e = rng.int(1000, 99999);
    return { kind: "last_digits", question: `What is ${a}^${e} modulo 1000000 (the number formed by its last six digits)?`, answer: String(powMod(BigInt(a), BigInt(e), 1_000_000n)) };
  },
  (rng) => {
    const n = rng.int(25, 250);
    let f = 1n;
    for (let i = 2n; i <= BigInt(n); i++) f *= i;
    const digits = [...f.toString()].reduce((s, d) => s + Number(d), 0);
    return { kind: "factorial_digits", question: `What is the sum of the decimal digits of ${n}! (${n} factorial)?`, answer: String(digits) };
  },
  (rng) => {
    const cents = rng.int(20, 200) * 5;
    const coins = [1, 5, 10, 25];
    const ways = new Array<number>(cents + 1).fill(0);
    ways[0] = 1;
    for (const c of coins) for (let v = c; v <= cents; v++) ways[v] = (ways[v] as number) + (ways[v - c] as number);
    return { kind: "coin_change", question: `In how many different ways can ${cents} cents be made from coins of 1, 5, 10 and 25 cents (order does not matter)?`, answer: String(ways[cents]) };
  },
];

export function pythonTask(rng: Rng): TaskRow {
  const { kind, question, answer } = rng.pick(GENERATORS)(rng);
  return { prompt: question, answer, info: { kind } };
}

/** The integer an answer states: digits with an optional sign, ignoring thousands separators and spaces. */
export function normaliseInteger(text: string | null): string | null {
  if (text === null) return null;
  const cleaned = text.replace(/[,_\s]/g, "").replace(/\.0+$/, "");
  if (!/^[-+]?\d+$/.test(cleaned)) return null;
  return BigInt(cleaned).toString();
}
