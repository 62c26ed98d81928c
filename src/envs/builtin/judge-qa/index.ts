import { z } from "zod";
import { EngineError } from "../../engine.js";
import { judgeRubric } from "../../judge-rubric.js";
import { recordsDataset } from "../../datasets/records-dataset.js";
import { singleTurnEnv } from "../../define.js";
import { ThinkParser } from "../../parsers/think-parser.js";
import { XmlParser } from "../../parsers/xml-parser.js";
import { formatReward } from "../../rewards.js";
import { combineRubrics } from "../../rubric-group.js";
import { defineRubric } from "../../rubric.js";
import { judgeEndpoint, JudgeNotConfiguredError, type JudgeArgs } from "./endpoint.js";
import questions from "./questions.json" with { type: "json" };

const Args = z
  .object({
    judge_base_url: z.url().optional().meta({ description: "OpenAI-compatible base URL of the judge (…/v1). Default: EDGEGYM_JUDGE_BASE_URL." }),
    judge_model: z.string().min(1).optional().meta({ description: "Judge model name. Default: EDGEGYM_JUDGE_MODEL." }),
  })
  .strict();

const parser = new ThinkParser({ inner: new XmlParser({ fields: ["answer"] }), requireThink: false });

/**
 * Short-answer questions scored by an LLM judge against reference answers: the judge
 * accepts "Canberra" for "Canberra, the capital", which exact matching would not. The
 * 117 questions ship with edgegym (general knowledge, written for it).
 */
export const judgeQa = singleTurnEnv<JudgeArgs>({
  id: "judge-qa",
  version: "1.0.0",
  description:
    "Answer short general-knowledge questions in <answer>…</answer>; an LLM judge compares the answer with the reference. Needs a judge endpoint (EDGEGYM_JUDGE_BASE_URL / EDGEGYM_JUDGE_MODEL or args).",
  systemPrompt:
    "Answer the question. You may think inside <think>…</think> first. Then give only the short final answer inside <answer>…</answer>.",
  parser,
  argsSchema: Args,
  dataset: recordsDataset(questions, { columns: { prompt: "question", answer: "answer", info: ["id", "category"] }, evalFraction: 0.15, seed: 2026 }),
  setup: (_row, { args }) => {
    // Fail at reset, not at scoring time after the rollout was generated.
    try {
      judgeEndpoint(args);
    } catch (err) {
      if (err instanceof JudgeNotConfiguredError) throw new EngineError("invalid_env_args", err.message);
      throw err;
    }
    return { state: {} };
  },
  rubric: combineRubrics(
    judgeRubric({ endpoint: ({ args }) => judgeEndpoint(args as JudgeArgs | undefined), maxConcurrent: 8, timeoutMs: 60_000, name: "judge", weight: 1 }),
    defineRubric([formatReward({ weight: 0.1 })]),
  ),
});
