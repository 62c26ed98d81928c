import { z } from "zod";
import type { ChatMessage } from "../../../protocol/index.js";
import { contentText } from "../../../protocol/index.js";
import { proceduralDataset } from "../../dataset.js";
import { toolEnv } from "../../define.js";
import { mathEqual } from "../../math/equivalence.js";
import { defineRubric } from "../../rubric.js";
import { defineTool } from "../../tools.js";
import { answerParser } from "../math/index.js";
import { calculate, CALCULATOR_FUNCTIONS } from "./calculator.js";
import { generateToolMathProblem, TOOL_MATH_FAMILIES } from "./problems.js";

const ToolMathArgs = z
  .object({
    difficulty: z.enum(["easy", "hard"]).default("hard").describe("hard: bigger numbers and more of them, where the calculator pays off."),
    families: z.array(z.enum(TOOL_MATH_FAMILIES)).min(1).optional().describe(`Problem families (default: all of ${TOOL_MATH_FAMILIES.join(", ")}).`),
  })
  .strict();
type ToolMathArgs = z.infer<typeof ToolMathArgs>;

export const calculator = defineTool({
  name: "calculator",
  description: `Evaluates an arithmetic expression and returns the number (up to 15 significant digits). Operators: + - * / ^ mod ! and parentheses. Functions: ${CALCULATOR_FUNCTIONS.join(", ")}. Constants: pi, e. Example: "round(6800 * 1.078^4, 2)".`,
  parameters: z.object({ expression: z.string().describe("The expression, e.g. \"(29427 * 1550 - 744762) / 74\".") }).strict(),
  timeoutMs: 2_000,
  run: ({ expression }) => calculate(expression),
});

function assistantMessages(completion: readonly ChatMessage[]) {
  return completion.filter((m) => m.role === "assistant");
}

/**
 * Word problems with big numbers and a calculator tool run on the server. The model
 * calls `calculator` as often as it likes, then answers without a tool call; the answer
 * is checked for math equivalence. Tool use is reported, not rewarded, so the model
 * learns to use the tool when it helps.
 */
export const toolMath = toolEnv<ToolMathArgs>({
  id: "tool-math",
  version: "1.0.0",
  description: "Calculation-heavy word problems with a server-side calculator tool; final answer in <answer>…</answer> without a tool call. Reward: correctness, format; tool calls as metrics.",
  systemPrompt:
    "Solve the problem. You can call the calculator tool to evaluate arithmetic exactly as written; call it as often as you need. When you are done, reply without a tool call: you may reason inside <think>…</think>, then give only the final answer inside <answer>…</answer> as a number without units.",
  parser: answerParser,
  argsSchema: ToolMathArgs,
  tools: [calculator],
  maxTurns: 10,
  dataset: proceduralDataset((rng, _split, _index, rawArgs) => {
    const args = ToolMathArgs.parse(rawArgs ?? {});
    const p = generateToolMathProblem(rng, { difficulty: args.difficulty, ...(args.families ? { families: args.families } : {}) });
    return { prompt: p.question, answer: p.answer, info: { family: p.family, difficulty: args.difficulty } };
  }),
  rubric: defineRubric(
    [
      {
        name: "correct",
        weight: 1,
        description: "1 when the final answer equals the reference by math equivalence.",
        fn: ({ completion, answer, parser }) => Number(answer !== null && mathEqual(parser.parseAnswer(completion), answer)),
      },
      {
        name: "format",
        weight: 0.1,
        description: "The final message (the one without tool calls) is <answer>…</answer> with optional <think>, nothing outside the tags.",
        fn: ({ completion, parser }) => {
          const last = assistantMessages(completion).at(-1);
          return last ? parser.formatReward(contentText(last.content)) : 0;
        },
      },
    ],
    ({ completion }) => {
      const calls = assistantMessages(completion).flatMap((m) => m.tool_calls ?? []);
      const results = completion.filter((m) => m.role === "tool");
      return {
        calculator_calls: calls.filter((c) => c.function.name === "calculator").length,
        tool_errors: results.filter((m) => contentText(m.content).startsWith("Error:")).length,
        used_tool: Number(calls.length > 0),
      };
    },
  ),
});
