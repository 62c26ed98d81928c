import { z } from "zod";
import type { Rng } from "../../rng.js";
import type { TaskRow } from "../../types.js";
import { decimalArithmetic, fractionArithmetic, integerArithmetic } from "./families/arithmetic.js";
import { linearEquations } from "./families/equations.js";
import { percentages } from "./families/percentages.js";
import { rateProblems } from "./families/rates.js";
import type { FamilyGenerator, Level } from "./families/types.js";
import { unitConversion } from "./families/units.js";

/** Every problem family, by the name args and task info use. */
export const MATH_FAMILIES = {
  integer_arithmetic: integerArithmetic,
  decimal_arithmetic: decimalArithmetic,
  fraction_arithmetic: fractionArithmetic,
  percentages,
  unit_conversion: unitConversion,
  rate_problems: rateProblems,
  linear_equations: linearEquations,
} satisfies Record<string, FamilyGenerator>;

export type MathFamily = keyof typeof MATH_FAMILIES;
export const MATH_FAMILY_NAMES = Object.keys(MATH_FAMILIES) as [MathFamily, ...MathFamily[]];

export const DIFFICULTIES = ["easy", "medium", "hard"] as const;
export type Difficulty = (typeof DIFFICULTIES)[number];
const LEVEL: Record<Difficulty, Level> = { easy: 1, medium: 2, hard: 3 };

/** Args shared by every environment built on the math generator. */
export const MathTaskArgs = z
  .object({
    difficulty: z.enum(DIFFICULTIES).default("medium").describe("Size of numbers and number of steps."),
    families: z
      .array(z.enum(MATH_FAMILY_NAMES))
      .min(1)
      .optional()
      .describe(`Problem families to draw from (default: all of ${MATH_FAMILY_NAMES.join(", ")}).`),
  })
  .strict();
export type MathTaskArgs = z.infer<typeof MathTaskArgs>;

export interface MathTask {
  family: MathFamily;
  difficulty: Difficulty;
  question: string;
  answer: string;
}

/** One problem, entirely determined by the generator's state and the args. */
export function generateMathTask(rng: Rng, args: MathTaskArgs): MathTask {
  const family = rng.pick(args.families ?? MATH_FAMILY_NAMES);
  const problem = MATH_FAMILIES[family](rng, LEVEL[args.difficulty]);
  return { family, difficulty: args.difficulty, ...problem };
}

/** Parses the args a dataset receives (undefined when listing examples: the defaults). */
export function mathArgs(raw: unknown): MathTaskArgs {
  return MathTaskArgs.parse(raw ?? {});
}

/** A task row for a math problem; `info` keeps the family and difficulty for metrics and filtering. */
export function mathTaskRow(task: MathTask, prompt: string = task.question): TaskRow {
  return { prompt, answer: task.answer, info: { family: task.family, difficulty: task.difficulty } };
}
