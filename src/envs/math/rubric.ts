import { defineRubric, type Rubric, type RewardInputs } from "../rubric.js";
import { contentText } from "../../protocol/index.js";
import { verifyMath, type VerifyMathOptions } from "./verify.js";

export interface MathRubricOptions extends VerifyMathOptions {
  /** Weight of `correct`, the verified answer. Default 1. */
  weight?: number;
  /**
   * Weight of `format`, the parser's format reward (answer in its tags, nothing outside).
   * Default 0.1; 0 reports it without rewarding it.
   */
  formatWeight?: number;
  /**
   * Where the candidate answer is read:
   * - `"parser"` (default): the environment parser's answer (e.g. inside `<answer>…</answer>`);
   *   no answer there scores 0;
   * - `"completion"`: the last assistant message's whole text, the final answer extracted
   *   from it as math-verify does (last `\boxed{}`, "final answer is", last math span…),
   *   for models trained to box their answer rather than tag it.
   */
  answerFrom?: "parser" | "completion";
}

/** The text the rubric verifies, or null when there is no answer to verify. */
function candidateText<State>(inputs: RewardInputs<State>, from: "parser" | "completion"): string | null {
  if (from === "parser") return inputs.parser.parseAnswer(inputs.completion);
  const said = inputs.completion.filter((m) => m.role === "assistant");
  const last = said[said.length - 1];
  return last ? contentText(last.content) : null;
}

/**
 * A rubric that scores a rollout 1 when its answer equals the task's reference answer by
 * {@link verifyMath}, plus the parser's format reward. Reference answers may be bare
 * (`\frac{1}{2}`, `(1,2]`) or whole solutions (a GSM8K `#### 42` tail, a MATH `\boxed{}`).
 *
 * @example
 * const env = singleTurnEnv({ ..., parser: new XmlParser({ fields: ["answer"], answerField: "answer" }),
 *   rubric: mathRubric({ precision: 4 }) });
 */
export function mathRubric<State = unknown>(options: MathRubricOptions = {}): Rubric<State> {
  const { weight = 1, formatWeight = 0.1, answerFrom = "parser", ...verify } = options;
  return defineRubric<State>(
    [
      {
        name: "correct",
        weight,
        description: "1 when the answer equals the reference by math verification (extraction, then exact, numeric, symbolic or structural comparison), else 0.",
        fn: (inputs) => {
          const text = candidateText(inputs, answerFrom);
          return Number(inputs.answer !== null && text !== null && verifyMath(inputs.answer, text, verify).equal);
        },
      },
      {
        name: "format",
        weight: formatWeight,
        description: "The parser's format reward: the answer in its tags, nothing outside them.",
        fn: ({ completion, parser }) => parser.formatReward(completion),
      },
    ],
    (inputs) => ({ answered: Number(candidateText(inputs, answerFrom) !== null) }),
  );
}
