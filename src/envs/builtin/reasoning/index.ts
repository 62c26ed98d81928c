import { z } from "zod";
import { proceduralDataset } from "../../dataset.js";
import { singleTurnEnv } from "../../define.js";
import { defineRubric } from "../../rubric.js";
import { answerParser } from "../math/index.js";
import { countdown } from "./families/countdown.js";
import { letterCount } from "./families/letter-count.js";
import { multiStepArithmetic } from "./families/multi-step.js";
import { sorting } from "./families/sorting.js";
import { stringManipulation } from "./families/string-ops.js";
import type { Level, ReasoningFamily } from "./families/types.js";

export const REASONING_FAMILIES = {
  countdown,
  letter_count: letterCount,
  sorting,
  multi_step_arithmetic: multiStepArithmetic,
  string_manipulation: stringManipulation,
} satisfies Record<string, ReasoningFamily>;
export type ReasoningFamilyName = keyof typeof REASONING_FAMILIES;
const FAMILY_NAMES = Object.keys(REASONING_FAMILIES) as [ReasoningFamilyName, ...ReasoningFamilyName[]];

const LEVEL = { easy: 1, medium: 2, hard: 3 } as const satisfies Record<string, Level>;

const ReasoningArgs = z
  .object({
    family: z.enum([...FAMILY_NAMES, "mix"]).default("mix").describe(`One task family, or "mix" to draw one per task from all of ${FAMILY_NAMES.join(", ")}.`),
    difficulty: z.enum(["easy", "medium", "hard"]).default("medium").describe("Size of the task: more numbers, steps, words or operations."),
  })
  .strict();
type ReasoningArgs = z.infer<typeof ReasoningArgs>;

const TaskInfo = z.object({ family: z.enum(FAMILY_NAMES), data: z.record(z.string(), z.unknown()) }).passthrough();

/**
 * Procedural puzzles with exact verifiers: countdown (reach a target with + − × ÷),
 * letter counting, sorting, chains of arithmetic steps and string manipulation. Each
 * task is generated from its seed; the verifier checks the answer, not a match against
 * one reference (any countdown expression that hits the target counts).
 */
export const reasoning = singleTurnEnv<ReasoningArgs>({
  id: "reasoning",
  version: "1.0.0",
  description: "Seeded puzzles with exact verifiers (countdown, letter counting, sorting, multi-step arithmetic, string manipulation); answer in <answer>…</answer>.",
  systemPrompt: "Solve the task. You may reason inside <think>…</think> first. Then give only the final answer inside <answer>…</answer>, in the form the task asks for.",
  parser: answerParser,
  argsSchema: ReasoningArgs,
  dataset: proceduralDataset((rng, _split, _index, rawArgs) => {
    const args = ReasoningArgs.parse(rawArgs ?? {});
    const family = args.family === "mix" ? rng.pick(FAMILY_NAMES) : args.family;
    const task = REASONING_FAMILIES[family].generate(rng, LEVEL[args.difficulty]);
    return { prompt: task.question, answer: task.answer, info: { family, difficulty: args.difficulty, data: task.data } };
  }),
  rubric: defineRubric([
    {
      name: "correct",
      weight: 1,
      description: "1 when the family's verifier accepts the answer (countdown: any expression reaching the target with the given numbers).",
      fn: ({ completion, answer, info, parser }) => {
        const candidate = parser.parseAnswer(completion);
        if (candidate === null || answer === null) return 0;
        const { family, data } = TaskInfo.parse(info);
        return REASONING_FAMILIES[family].verify(candidate, { answer, data });
      },
    },
    {
      name: "format",
      weight: 0.1,
      description: "Answer in <answer> tags (optional <think> before it), nothing outside the tags.",
      fn: ({ completion, parser }) => parser.formatReward(completion),
    },
  ]),
});
