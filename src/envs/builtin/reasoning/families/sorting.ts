import { z } from "zod";
import { SOLUTIONS } from "../../wordle/words.js";
import type { ReasoningFamily } from "./types.js";

const Data = z.object({ kind: z.enum(["numbers", "words"]), sorted: z.array(z.string()) });

/** Splits a written list on commas (or on whitespace when there are none), dropping brackets. */
export function readList(text: string): string[] {
  const inner = text.trim().replace(/^[[({]\s*|\s*[\])}]$/g, "");
  const parts = inner.includes(",") ? inner.split(",") : inner.split(/\s+/);
  return parts.map((p) => p.trim().replace(/^["']|["']$/g, "")).filter((p) => p !== "");
}

/** Sorting numbers (ascending or descending) or words (alphabetically). */
export const sorting: ReasoningFamily = {
  generate(rng, level) {
    const words = level === 3 && rng.next() < 0.5;
    const count = level === 1 ? 5 : 8;
    const descending = level > 1 && rng.next() < 0.5;
    let items: string[];
    let sorted: string[];
    if (words) {
      items = [...new Set(Array.from({ length: count }, () => rng.pick(SOLUTIONS)))];
      sorted = [...items].sort();
    } else {
      const lo = level === 1 ? 0 : -99;
      const hi = level === 1 ? 99 : level === 2 ? 99 : 999;
      const values = Array.from({ length: count }, () => (level === 3 ? rng.int(lo * 10, hi * 10) / 10 : rng.int(lo, hi)));
      items = values.map(String);
      sorted = [...values].sort((a, b) => (descending ? b - a : a - b)).map(String);
    }
    const order = words ? "in alphabetical order" : descending ? "from largest to smallest" : "from smallest to largest";
    return {
      question: `Sort these ${words ? "words" : "numbers"} ${order}: ${items.join(", ")}. Answer with the sorted list, separated by commas.`,
      answer: sorted.join(", "),
      data: { kind: words ? "words" : "numbers", sorted },
    };
  },
  verify(candidate, task) {
    const { kind, sorted } = Data.parse(task.data);
    const got = readList(candidate);
    if (got.length !== sorted.length) return 0;
    return Number(got.every((g, i) => (kind === "numbers" ? Number(g) === Number(sorted[i]) && g.trim() !== "" : g.toLowerCase() === (sorted[i] as string).toLowerCase())));
  },
};
