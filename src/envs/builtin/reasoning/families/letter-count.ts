import { z } from "zod";
import { mathEqual } from "../../../math/equivalence.js";
import { SOLUTIONS } from "../../wordle/words.js";
import type { ReasoningFamily } from "./types.js";

const Data = z.object({ text: z.string(), letter: z.string().length(1) });

/** Counting a letter in a word or phrase, the task tokenisation makes hard for models. */
export const letterCount: ReasoningFamily = {
  generate(rng, level) {
    const words = Array.from({ length: level === 1 ? 1 : level === 2 ? 3 : 6 }, () => rng.pick(SOLUTIONS));
    // Long words for a single-word task read more like "strawberry": join two when easy.
    const text = level === 1 ? words[0] + rng.pick(SOLUTIONS) : words.join(" ");
    const present = [...new Set(text.replace(/ /g, ""))];
    const letter = rng.next() < 0.85 ? rng.pick(present) : rng.pick([..."abcdefghijklmnopqrstuvwxyz"].filter((c) => !present.includes(c)));
    const count = [...text].filter((c) => c === letter).length;
    return {
      question: `How many times does the letter "${letter}" appear in "${text}"? Answer with a number.`,
      answer: String(count),
      data: { text, letter },
    };
  },
  verify(candidate, task) {
    Data.parse(task.data);
    return Number(mathEqual(candidate, task.answer));
  },
};
