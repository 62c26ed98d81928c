import type { Rng } from "../../../rng.js";
import { SOLUTIONS } from "../../wordle/words.js";
import type { ReasoningFamily } from "./types.js";

/** A string operation: how it is described to the model, and what it does. */
interface StringOp {
  describe: string;
  apply(text: string): string;
}

const VOWELS = /[aeiouAEIOU]/g;

function randomOp(rng: Rng): StringOp {
  const kind = rng.int(0, 8);
  switch (kind) {
    case 0:
      return { describe: "reverse it", apply: (s) => [...s].reverse().join("") };
    case 1:
      return { describe: "convert it to uppercase", apply: (s) => s.toUpperCase() };
    case 2:
      return { describe: "remove every vowel (a, e, i, o, u)", apply: (s) => s.replace(VOWELS, "") };
    case 3: {
      const k = rng.int(1, 3);
      return { describe: `move the first ${k} character${k > 1 ? "s" : ""} to the end`, apply: (s) => s.slice(k) + s.slice(0, k) };
    }
    case 4: {
      const k = rng.int(1, 5);
      const shift = (c: string) => {
        const lower = c >= "a" && c <= "z";
        const upper = c >= "A" && c <= "Z";
        if (!lower && !upper) return c;
        const base = lower ? 97 : 65;
        return String.fromCharCode(((c.charCodeAt(0) - base + k) % 26) + base);
      };
      return { describe: `shift every letter ${k} place${k > 1 ? "s" : ""} forward in the alphabet (z wraps to a)`, apply: (s) => [...s].map(shift).join("") };
    }
    case 5:
      return { describe: "keep only the characters at odd positions (the 1st, 3rd, 5th, …)", apply: (s) => [...s].filter((_, i) => i % 2 === 0).join("") };
    case 6:
      return { describe: "sort its characters alphabetically", apply: (s) => [...s].sort().join("") };
    case 7:
      return { describe: "remove repeated characters, keeping the first occurrence of each", apply: (s) => [...new Set(s)].join("") };
    default:
      return { describe: "double every character (ab becomes aabb)", apply: (s) => [...s].map((c) => c + c).join("") };
  }
}

const unquote = (s: string): string => s.trim().replace(/^(["'`])([\s\S]*)\1$/, "$2");

/** A chain of string operations on a word; the answer is exact, case-sensitive text. */
export const stringManipulation: ReasoningFamily = {
  generate(rng, level) {
    const word = level === 3 ? rng.pick(SOLUTIONS) + rng.pick(SOLUTIONS) : rng.pick(SOLUTIONS);
    const ops = Array.from({ length: level }, () => randomOp(rng));
    const result = ops.reduce((s, op) => op.apply(s), word);
    const steps = ops.map((op, i) => `(${i + 1}) ${op.describe}`).join(", then ");
    return {
      question: `Take the string "${word}" and ${steps}. What is the resulting string? Answer with the string only, no quotes.`,
      answer: result,
      data: { word, steps: ops.map((op) => op.describe) },
    };
  },
  verify(candidate, task) {
    return Number(unquote(candidate) === task.answer);
  },
};
