import { rowsDataset } from "../../dataset.js";
import { singleTurnEnv } from "../../define.js";
import { XmlParser } from "../../parsers/xml-parser.js";
import { defineRubric } from "../../rubric.js";
import paragraphs from "./paragraphs.json" with { type: "json" };
import { lcsRatio } from "./lcs.js";

const parser = new XmlParser({ fields: ["think", "answer"], answerField: "answer", optional: ["think"] });

const reverse = (text: string): string => Array.from(text).reverse().join("");

/**
 * Reverse a paragraph character by character. A classic first RL task: the reward is
 * dense (partial credit by longest common subsequence), so even a small model climbs.
 */
export const reverseText = singleTurnEnv({
  id: "reverse-text",
  version: "1.0.0",
  description: "Reverse a paragraph character by character; answer in <answer>…</answer>. Reward: LCS ratio to the reversed text, plus format.",
  systemPrompt:
    "Reverse the text the user gives you, character by character: the last character first. You may think inside <think>…</think> first. Then give only the reversed text inside <answer>…</answer>.",
  parser,
  dataset: rowsDataset({
    rows: (paragraphs as string[]).map((text, i) => ({ prompt: text, answer: reverse(text), info: { paragraph_id: i } })),
    evalFraction: 0.1,
    seed: 2026,
  }),
  rubric: defineRubric([
    {
      name: "lcs_ratio",
      weight: 1,
      description: "2·LCS / (len(answer) + len(reversed text)), in [0, 1].",
      fn: ({ completion, answer, parser }) => lcsRatio(parser.parseAnswer(completion) ?? "", answer ?? ""),
    },
    {
      name: "format",
      weight: 0.2,
      description: "Answer written in <answer> tags, nothing outside the tags.",
      fn: ({ completion, parser }) => parser.formatReward(completion),
    },
  ]),
});
