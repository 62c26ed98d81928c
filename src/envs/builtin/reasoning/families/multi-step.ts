import { mathEqual } from "../../../math/equivalence.js";
import type { ReasoningFamily } from "./types.js";

/** A chain of operations applied to a running number, each step keeping it an integer. */
export const multiStepArithmetic: ReasoningFamily = {
  generate(rng, level) {
    const steps = level === 1 ? 3 : level === 2 ? 5 : 8;
    let value = rng.int(2, level === 3 ? 50 : 20);
    const start = value;
    const lines: string[] = [];
    for (let i = 0; i < steps; i++) {
      const options: (() => string)[] = [
        () => {
          const n = rng.int(2, level === 3 ? 99 : 30);
          value += n;
          return `add ${n}`;
        },
        () => {
          const n = rng.int(2, level === 3 ? 99 : 30);
          value -= n;
          return `subtract ${n}`;
        },
        () => {
          const n = rng.int(2, level === 1 ? 5 : 9);
          value *= n;
          return `multiply by ${n}`;
        },
      ];
      const divisors = [2, 3, 4, 5, 6, 7, 8, 9].filter((d) => value % d === 0 && value !== 0);
      if (divisors.length) {
        options.push(() => {
          const d = rng.pick(divisors);
          value /= d;
          return `divide by ${d}`;
        });
      }
      if (level === 3 && Math.abs(value) <= 30) {
        options.push(() => {
          value *= value;
          return "square the result";
        });
      }
      // Keep numbers readable: prefer shrinking steps once the value is large.
      const pick = Math.abs(value) > 5000 && divisors.length ? (options[3] as () => string) : rng.pick(options);
      lines.push(pick());
    }
    return {
      question: `Start with ${start}. Then, in order: ${lines.map((l, i) => `(${i + 1}) ${l}`).join(", ")}. What is the final number?`,
      answer: String(value),
      data: { steps },
    };
  },
  verify(candidate, task) {
    return Number(mathEqual(candidate, task.answer));
  },
};
