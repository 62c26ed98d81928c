import { z } from "zod";
import type { Rng } from "../../../rng.js";
import { textWithin } from "../../../answer-limits.js";
import { parseCountdownExpression } from "./countdown-expr.js";
import type { Level, ReasoningFamily } from "./types.js";

const LARGE = [25, 50, 75, 100];

interface Built {
  text: string;
  value: number;
  prec: number;
}

/** Combines numbers at random into an expression whose every step is a positive integer. */
function build(rng: Rng, numbers: number[]): Built | null {
  let items: Built[] = numbers.map((n) => ({ text: String(n), value: n, prec: 3 }));
  while (items.length > 1) {
    items = rng.shuffle(items);
    const a = items.pop() as Built;
    const b = items.pop() as Built;
    const [hi, lo] = a.value >= b.value ? [a, b] : [b, a];
    const options: Built[] = [{ text: `${hi.text} + ${lo.text}`, value: hi.value + lo.value, prec: 1 }];
    if (hi.value - lo.value > 0) options.push({ text: `${hi.text} - ${lo.prec < 2 ? `(${lo.text})` : lo.text}`, value: hi.value - lo.value, prec: 1 });
    if (lo.value > 1) options.push({ text: `${hi.prec < 2 ? `(${hi.text})` : hi.text} * ${lo.prec < 2 ? `(${lo.text})` : lo.text}`, value: hi.value * lo.value, prec: 2 });
    if (lo.value > 1 && hi.value % lo.value === 0) options.push({ text: `${hi.prec < 2 ? `(${hi.text})` : hi.text} / ${lo.prec < 3 ? `(${lo.text})` : lo.text}`, value: hi.value / lo.value, prec: 2 });
    items.push(rng.pick(options));
  }
  return items[0] ?? null;
}

/**
 * Longest countdown answer read. A solution uses at most six small numbers, so a real
 * one is a few dozen characters; exact evaluation of a long product grows its BigInt
 * with every factor (30,000 factors took 365 ms), so past this it scores 0 unread.
 */
export const COUNTDOWN_MAX_CHARS = 500;

const Data = z.object({ numbers: z.array(z.number().int()), target: z.number().int() });

/**
 * Countdown: reach the target from the given numbers with + − × ÷ and parentheses, each
 * number used at most once. The generator builds a solution with every intermediate a
 * positive integer; the verifier accepts any expression that hits the target exactly.
 */
export const countdown: ReasoningFamily = {
  generate(rng, level: Level) {
    const count = level === 1 ? 3 : level === 2 ? 4 : 6;
    for (let attempt = 0; ; attempt++) {
      const numbers = Array.from({ length: count }, (_, i) => (level > 1 && i === 0 ? rng.pick(LARGE) : rng.int(1, 10)));
      if (level === 3) numbers[1] = rng.pick(LARGE.filter((n) => n !== numbers[0]));
      const shown = rng.shuffle(numbers);
      const built = build(rng, shown);
      const max = level === 1 ? 100 : 999;
      // Keep targets in range and not trivially one of the numbers; give up on perfection after many tries.
      if (built && built.value > 10 && built.value <= max && !shown.includes(built.value) || (built && attempt > 50)) {
        return {
          question: `Using the numbers ${shown.join(", ")}, each at most once, and the operations +, -, *, / with parentheses, write an expression equal to ${built.value}. Put only the expression inside <answer>…</answer>.`,
          answer: built.text,
          data: { numbers: shown, target: built.value },
        };
      }
    }
  },
  verify(candidate, task) {
    const { numbers, target } = Data.parse(task.data);
    const text = textWithin(candidate, COUNTDOWN_MAX_CHARS, "answer").replace(/=\s*-?\d+\s*$/, "").trim();
    let parsed;
    try {
      parsed = parseCountdownExpression(text);
    } catch {
      return 0;
    }
    const left = [...numbers];
    for (const n of parsed.numbers) {
      const i = left.indexOf(n);
      if (i < 0) return 0;
      left.splice(i, 1);
    }
    return Number(parsed.value.isInteger() && parsed.value.num === BigInt(target));
  },
};
