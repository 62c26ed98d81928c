import { proceduralDataset } from "../../dataset.js";
import { singleTurnEnv } from "../../define.js";
import { mathRubric } from "../../math/rubric.js";
import { XmlParser } from "../../parsers/xml-parser.js";
import { generateMathTask, mathArgs, MathTaskArgs, mathTaskRow } from "./generator.js";

export const answerParser = new XmlParser({ fields: ["think", "answer"], answerField: "answer", optional: ["think"] });

export const MATH_SYSTEM_PROMPT =
  "Solve the math problem. You may reason inside <think>…</think> first. Then give only the final answer inside <answer>…</answer>: an exact value (integer, fraction or decimal), without units.";

/**
 * Arithmetic and word problems with exact answers, generated from the task's seed:
 * integer, decimal and fraction arithmetic, percentages, unit conversions, rate
 * problems and linear equations, at three difficulties. Answers are compared by
 * verifyMath (the same verifier users get from the package), so `0.5`, `1/2` and
 * `\frac{1}{2}` all count.
 */
export const math = singleTurnEnv<MathTaskArgs>({
  id: "math",
  version: "1.0.0",
  description: "Procedural arithmetic and word problems (integers, decimals, fractions, percentages, units, rates, linear equations) with exact answers in <answer>…</answer>, checked by math equivalence.",
  systemPrompt: MATH_SYSTEM_PROMPT,
  parser: answerParser,
  argsSchema: MathTaskArgs,
  dataset: proceduralDataset((rng, _split, _index, args) => mathTaskRow(generateMathTask(rng, mathArgs(args)))),
  // Generated answers are exact, so a decimal is compared as its exact value ("exact"),
  // not rounded at a precision: 0.33 is not 1/3 here.
  rubric: mathRubric({ precision: "exact" }),
});
